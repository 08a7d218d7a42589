// Text from users and models becomes HTML here, and only here: Markdown (marked) is sanitized
// (DOMPurify) before it reaches the page, then code is highlighted (highlight.js) and math typeset
// (KaTeX) from text the sanitizer has already passed. Without those libraries text stays text.

const { marked, DOMPurify, hljs, katex } = window;
const rich = Boolean(marked && DOMPurify);

function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// $$…$$ and \[…\] display math, $…$ and \(…\) inline math, kept away from Markdown's emphasis
// rules and rendered to a placeholder KaTeX fills in. As in Pandoc, an inline $ opens only before
// a non-space and closes only after one and not before a digit, so "$5 and $10" stays money.
const mathRules = [
  { name: 'mathDisplay', level: 'block', re: /^(?:\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\])(?:\n|$)/ },
  { name: 'mathDisplayInline', level: 'inline', re: /^(?:\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\])/ },
  { name: 'mathInline', level: 'inline', re: /^(?:\$(?!\s)((?:\\\$|[^$\n])+?)(?<!\s)\$(?!\d)|\\\(([\s\S]+?)\\\))/ },
];

// Debian's highlight.js 9 asks (once, on the console) to be upgraded unless told the page knows.
if (hljs) hljs.configure({ hideUpgradeWarningAcceptNoSupportOrSecurityUpdates: true });

if (rich) {
  marked.use({
    extensions: mathRules.map((r) => ({
      name: r.name,
      level: r.level,
      // Where one may begin: display math only at the start of a line.
      start: (src) => {
        if (r.level === 'inline') {
          const i = src.search(/\$|\\[[(]/);
          return i < 0 ? undefined : i;
        }
        const m = /(^|\n)(?:\$\$|\\\[)/.exec(src);
        return m ? m.index + m[1].length : undefined;
      },
      tokenizer(src) {
        const m = r.re.exec(src);
        if (m) return { type: r.name, raw: m[0], tex: (m[1] ?? m[2]).trim() };
        return undefined;
      },
      renderer: (token) =>
        `<span class="math" data-display="${r.name === 'mathInline' ? 0 : 1}" data-tex="${escapeHtml(token.tex)}"></span>`,
    })),
  });
}

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Not a secure context (the page opened by a LAN address): the old way.
    const area = document.createElement('textarea');
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
}

export function copyButton(getText, label = 'Copy') {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'small';
  b.textContent = label;
  b.addEventListener('click', async () => {
    await copyText(getText());
    b.textContent = 'Copied';
    setTimeout(() => (b.textContent = label), 1200);
  });
  return b;
}

function decorate(el) {
  for (const a of el.querySelectorAll('a')) {
    a.target = '_blank';
    a.rel = 'noopener noreferrer nofollow';
  }
  for (const code of el.querySelectorAll('pre > code')) {
    if (hljs) (hljs.highlightElement || hljs.highlightBlock).call(hljs, code);
    const pre = code.parentElement;
    const bar = document.createElement('div');
    bar.className = 'code-bar';
    const lang = /language-([\w+#-]+)/.exec(code.className);
    bar.append(Object.assign(document.createElement('span'), { textContent: lang ? lang[1] : '' }));
    bar.append(copyButton(() => code.textContent, 'Copy code'));
    pre.before(bar);
  }
  for (const m of el.querySelectorAll('span.math')) {
    const tex = m.dataset.tex;
    if (!katex) {
      m.textContent = tex;
      continue;
    }
    katex.render(tex, m, { displayMode: m.dataset.display === '1', throwOnError: false, trust: false });
  }
}

// Replaces el's content with `text` rendered.
export function renderMarkdown(el, text) {
  if (!rich) {
    el.textContent = text;
    el.classList.add('plain');
    return;
  }
  const html = marked.parse(text, { gfm: true, breaks: true, headerIds: false, mangle: false });
  // No style attributes or forms from a model: nothing it writes can restyle or imitate the page.
  // Images too: a text model has none to show, and a remote one would be a tracking beacon.
  el.innerHTML = DOMPurify.sanitize(html, {
    FORBID_ATTR: ['style'],
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'img'],
  });
  // Classes only where the renderer wrote them: code languages and math placeholders.
  for (const e of el.querySelectorAll('[class]')) {
    const keep = [...e.classList].filter(
      (c) => /^language-[\w+#-]+$/.test(c) || (c === 'math' && e.tagName === 'SPAN'),
    );
    e.className = keep.join(' ');
  }
  decorate(el);
}
