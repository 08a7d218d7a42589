// The chat page: conversations on the left, the current one in the middle, replies streamed from
// /v1/chat/completions. All text from users and the model goes through render.js.
import { ApiError, getJson, streamChat } from './api.js';
import { copyButton, renderMarkdown } from './render.js';
import { Conversations, DEFAULT_SETTINGS, loadSettings, saveSettings } from './store.js';

const $ = (id) => document.getElementById(id);
const convs = new Conversations();
let settings = loadSettings();
let running = null; // { controller, conversation } while a reply streams

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  // aria-* and data-* are attributes; the rest are properties (textContent, className, ...).
  for (const [k, v] of Object.entries(props)) {
    if (k.includes('-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

function button(label, onClick, props = {}) {
  const b = el('button', { type: 'button', className: 'small', textContent: label, ...props });
  b.addEventListener('click', onClick);
  return b;
}

function showError(message) {
  $('error').textContent = message || '';
  $('error').hidden = !message;
}

function persist() {
  if (!convs.save()) showError('The browser storage is full: delete or export old conversations.');
}

// ---- the conversation list

function renderList() {
  const ul = $('conversations');
  ul.replaceChildren();
  for (const c of convs.list) {
    const title = button(c.title, () => openConversation(c.id), {
      className: 'conv-title',
      title: c.title,
    });
    if (c.id === convs.currentId) title.setAttribute('aria-current', 'true');
    const li = el('li', { className: 'conv' }, title);
    li.append(
      button('Rename', () => startRename(li, c), { title: 'Rename', 'aria-label': `Rename ${c.title}` }),
      button('Export', () => download(`${c.title}.json`, Conversations.exportJson([c])), {
        'aria-label': `Export ${c.title}`,
      }),
      button('Delete', () => removeConversation(c), { 'aria-label': `Delete ${c.title}` }),
    );
    ul.append(li);
  }
}

function startRename(li, c) {
  const input = el('input', { value: c.title, className: 'rename', 'aria-label': 'New name' });
  li.replaceChildren(input);
  input.focus();
  input.select();
  const finish = (keep) => {
    if (keep) convs.rename(c.id, input.value);
    persist();
    renderList();
  };
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') finish(true);
    if (ev.key === 'Escape') finish(false);
  });
  input.addEventListener('blur', () => finish(true), { once: true });
}

function removeConversation(c) {
  if (!confirm(`Delete "${c.title}"?`)) return;
  if (running && running.conversation === c) running.controller.abort();
  convs.remove(c.id);
  persist();
  renderAll();
}

function openConversation(id) {
  convs.select(id);
  persist();
  renderAll();
  document.body.classList.remove('sidebar-open');
  $('prompt').focus();
}

function download(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = el('a', { href: url, download: name.replace(/[\\/:*?"<>|]/g, '_') });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// ---- messages

function statsText(m) {
  const s = m.stats || {};
  const parts = [];
  if (Number.isFinite(s.ttft_ms)) parts.push(`TTFT ${Math.round(s.ttft_ms)} ms`);
  if (Number.isFinite(s.tokens_per_s)) parts.push(`${s.tokens_per_s.toFixed(1)} tokens/s`);
  if (s.tokens > 0) parts.push(`${s.tokens} tokens`);
  if (m.stopped) parts.push('stopped');
  return parts.join(' · ');
}

function toolCallsElement(calls) {
  const box = el('div', { className: 'tool-calls' });
  for (const c of calls) {
    let args = c.function.arguments;
    try {
      args = JSON.stringify(JSON.parse(args), null, 2);
    } catch {
      // still streaming, or not JSON: shown as sent
    }
    box.append(
      el(
        'div',
        { className: 'tool-call' },
        el('div', { className: 'tool-name', textContent: `Tool call: ${c.function.name}` }),
        el('pre', {}, el('code', { textContent: args })),
      ),
    );
  }
  return box;
}

// Fills an assistant message's element from its state (called again as it streams).
function fillAssistant(art, m) {
  const parts = [];
  if (m.reasoning) {
    const body = el('div', { className: 'reasoning-body' });
    renderMarkdown(body, m.reasoning);
    const details = el('details', { className: 'reasoning' }, el('summary', { textContent: 'Reasoning' }), body);
    details.open = art.dataset.reasoningOpen === '1';
    details.addEventListener('toggle', () => (art.dataset.reasoningOpen = details.open ? '1' : '0'));
    parts.push(details);
  }
  const body = el('div', { className: 'body' });
  renderMarkdown(body, m.content || '');
  parts.push(body);
  if (m.tool_calls && m.tool_calls.length) parts.push(toolCallsElement(m.tool_calls));
  if (m.error) parts.push(el('p', { className: 'error', textContent: m.error }));
  parts.push(el('div', { className: 'stats', textContent: statsText(m) }));
  art.querySelector('.content').replaceChildren(...parts);
}

function messageElement(c, m, index) {
  const art = el('article', { className: `msg ${m.role}` });
  art.dataset.testid = `message-${m.role}`;
  art.append(el('div', { className: 'role', textContent: m.role === 'user' ? 'You' : 'Assistant' }));
  const content = el('div', { className: 'content' });
  art.append(content);
  const actions = el('div', { className: 'actions' });
  if (m.role === 'user') {
    content.append(el('div', { className: 'body plain', textContent: m.content }));
    actions.append(button('Edit', () => startEdit(art, c, index), { disabled: Boolean(running) }));
  } else {
    fillAssistant(art, m);
    actions.append(
      button('Regenerate', () => regenerate(c, index), { disabled: Boolean(running) }),
    );
  }
  actions.append(copyButton(() => m.content));
  art.append(actions);
  return art;
}

function renderMessages() {
  const c = convs.current();
  const box = $('messages');
  box.replaceChildren();
  if (!c) return;
  c.messages.forEach((m, i) => box.append(messageElement(c, m, i)));
  box.scrollTop = box.scrollHeight;
}

function renderAll() {
  renderList();
  renderMessages();
  const busy = Boolean(running);
  $('send').hidden = busy;
  $('stop').hidden = !busy;
}

function startEdit(art, c, index) {
  const area = el('textarea', { value: c.messages[index].content, rows: 3, 'aria-label': 'Edit message' });
  const save = button('Save and send', () => {
    c.messages[index].content = area.value;
    c.messages.length = index + 1;
    reply(c);
  });
  const cancel = button('Cancel', () => renderMessages());
  area.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') renderMessages();
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      save.click();
    }
  });
  art.querySelector('.content').replaceChildren(area, el('div', { className: 'actions' }, save, cancel));
  area.focus();
}

function regenerate(c, index) {
  c.messages.length = index;
  reply(c);
}

// ---- a reply

function requestBody(c) {
  const messages = [];
  if (settings.system.trim()) messages.push({ role: 'system', content: settings.system });
  for (const m of c.messages) {
    if (m.role === 'user') messages.push({ role: 'user', content: m.content });
    else if (m.tool_calls && m.tool_calls.length)
      messages.push({ role: 'assistant', content: m.content || null, tool_calls: m.tool_calls });
    else messages.push({ role: 'assistant', content: m.content });
  }
  const body = {
    messages,
    temperature: Number(settings.temperature),
    top_p: Number(settings.top_p),
  };
  if (String(settings.max_tokens).trim()) body.max_tokens = Number(settings.max_tokens);
  if (String(settings.seed).trim()) body.seed = Number(settings.seed);
  if (settings.tools.trim()) body.tools = JSON.parse(settings.tools);
  return body;
}

function mergeDelta(m, delta) {
  if (delta.content) m.content += delta.content;
  if (delta.reasoning_content) m.reasoning = (m.reasoning || '') + delta.reasoning_content;
  for (const t of delta.tool_calls || []) {
    m.tool_calls = m.tool_calls || [];
    const call = (m.tool_calls[t.index] = m.tool_calls[t.index] || {
      id: '',
      type: 'function',
      function: { name: '', arguments: '' },
    });
    if (t.id) call.id = t.id;
    if (t.function && t.function.name) call.function.name = t.function.name;
    if (t.function && t.function.arguments) call.function.arguments += t.function.arguments;
  }
}

async function reply(c) {
  if (running) return;
  showError('');
  const m = { role: 'assistant', content: '' };
  let body;
  try {
    body = requestBody(c);
  } catch (e) {
    showError(`Settings: the tools are not valid JSON (${e.message})`);
    return;
  }
  c.messages.push(m);
  convs.touch(c);
  running = { controller: new AbortController(), conversation: c };
  renderAll();
  const art = $('messages').lastElementChild;
  const t0 = performance.now();
  let tFirst = null;
  let pieces = 0;
  let usage = null;
  let timings = null;
  let frame = 0;
  const redraw = () => {
    frame = 0;
    if (art.isConnected) fillAssistant(art, m);
    const box = $('messages');
    if (box.scrollHeight - box.scrollTop - box.clientHeight < 120) box.scrollTop = box.scrollHeight;
  };
  try {
    for await (const chunk of streamChat(body, running.controller.signal)) {
      if (chunk.usage) usage = chunk.usage;
      if (chunk.timings) timings = chunk.timings;
      const choice = chunk.choices && chunk.choices[0];
      if (!choice || !choice.delta) continue;
      const d = choice.delta;
      if (d.content || d.reasoning_content || d.tool_calls) {
        if (tFirst === null) tFirst = performance.now();
        ++pieces;
        mergeDelta(m, d);
        if (!frame) frame = requestAnimationFrame(redraw);
      }
    }
  } catch (e) {
    if (e.name === 'AbortError') m.stopped = true;
    else m.error = e instanceof ApiError ? `Error ${e.status}: ${e.message}` : String(e.message || e);
  }
  if (frame) cancelAnimationFrame(frame);
  const tEnd = performance.now();
  const tokens = usage ? usage.completion_tokens : pieces;
  m.stats = { tokens };
  // The time to the first token as this page saw it; the generation rate as the server measured
  // it (what arrives in one network read would otherwise look instantaneous).
  if (tFirst !== null) {
    m.stats.ttft_ms = tFirst - t0;
    if (timings && Number.isFinite(timings.predicted_per_second)) m.stats.tokens_per_s = timings.predicted_per_second;
    else if (tokens > 1 && tEnd > tFirst) m.stats.tokens_per_s = ((tokens - 1) * 1000) / (tEnd - tFirst);
  }
  running = null;
  persist();
  renderAll();
  // Replies finished since the page loaded: lets a test (or a user script) wait for one.
  document.body.dataset.replies = String(Number(document.body.dataset.replies || 0) + 1);
  $('prompt').focus();
}

function send() {
  const text = $('prompt').value;
  if (!text.trim() || running) return;
  const c = convs.current() || convs.create();
  if (!c.messages.length) c.title = text.trim().replace(/\s+/g, ' ').slice(0, 60);
  c.messages.push({ role: 'user', content: text });
  $('prompt').value = '';
  reply(c);
}

function stop() {
  if (running) running.controller.abort();
}

// ---- settings

function openSettings() {
  const form = $('settings-form');
  for (const [k, v] of Object.entries(settings)) if (form.elements[k]) form.elements[k].value = v;
  form.querySelector('[data-role=settings-error]').hidden = true;
  $('settings-dialog').showModal();
}

function saveSettingsForm(ev) {
  ev.preventDefault();
  const form = $('settings-form');
  const next = { ...DEFAULT_SETTINGS };
  for (const k of Object.keys(next)) next[k] = form.elements[k].value;
  const err = form.querySelector('[data-role=settings-error]');
  try {
    if (next.tools.trim() && !Array.isArray(JSON.parse(next.tools))) throw new Error('not an array');
  } catch (e) {
    err.textContent = `Tools: ${e.message}`;
    err.hidden = false;
    return;
  }
  settings = next;
  saveSettings(settings);
  $('settings-dialog').close();
}

// ---- start

function wire() {
  $('composer').addEventListener('submit', (ev) => {
    ev.preventDefault();
    send();
  });
  $('prompt').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      send();
    }
  });
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && running && !document.querySelector('dialog[open]')) stop();
  });
  $('stop').addEventListener('click', stop);
  $('new-chat').addEventListener('click', () => {
    const c = convs.current();
    if (!c || c.messages.length) convs.create();
    persist();
    renderAll();
    $('prompt').focus();
  });
  $('open-settings').addEventListener('click', openSettings);
  $('settings-form').addEventListener('submit', saveSettingsForm);
  $('settings-form').querySelector('[data-role=cancel]').addEventListener('click', () => $('settings-dialog').close());
  $('toggle-sidebar').addEventListener('click', () => {
    const open = document.body.classList.toggle('sidebar-open');
    $('toggle-sidebar').setAttribute('aria-expanded', String(open));
  });
  $('export-all').addEventListener('click', () => download('brisk-conversations.json', Conversations.exportJson(convs.list)));
  $('import').addEventListener('click', () => $('import-file').click());
  $('import-file').addEventListener('change', async () => {
    const f = $('import-file').files[0];
    $('import-file').value = '';
    if (!f) return;
    try {
      convs.importJson(await f.text());
      persist();
      renderAll();
    } catch (e) {
      showError(`Import: ${e.message}`);
    }
  });
}

async function start() {
  wire();
  renderAll();
  $('prompt').focus();
  try {
    const models = await getJson('/v1/models');
    $('model-name').textContent = models.data && models.data[0] ? models.data[0].id : '';
  } catch (e) {
    showError(`The server did not answer: ${e.message}`);
  }
}

start();
