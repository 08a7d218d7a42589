// What the chat page keeps in the browser: conversations and settings in localStorage (they
// survive a reload and stay on this machine), nothing on the server.

const CONVERSATIONS = 'brisk.conversations';
const CURRENT = 'brisk.current';
const SETTINGS = 'brisk.settings';

export const DEFAULT_SETTINGS = {
  system: '',
  temperature: 0.8,
  top_p: 0.95,
  max_tokens: '', // none: until the model stops or its context is full
  seed: '',
  tools: '',
};

function read(key, fallback) {
  try {
    const v = localStorage.getItem(key);
    return v === null ? fallback : JSON.parse(v);
  } catch {
    return fallback;
  }
}

export function loadSettings() {
  return { ...DEFAULT_SETTINGS, ...read(SETTINGS, {}) };
}

export function saveSettings(s) {
  localStorage.setItem(SETTINGS, JSON.stringify(s));
}

// An id without crypto.randomUUID, which pages opened by a LAN address (not a secure context) lack.
function newId() {
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

// Only the fields the page uses, each checked: an imported file is untrusted input.
function cleanMessage(m) {
  if (!m || (m.role !== 'user' && m.role !== 'assistant')) return null;
  const out = { role: m.role, content: typeof m.content === 'string' ? m.content : '' };
  if (typeof m.reasoning === 'string' && m.reasoning) out.reasoning = m.reasoning;
  if (Array.isArray(m.tool_calls))
    out.tool_calls = m.tool_calls
      .filter((c) => c && c.function && typeof c.function.name === 'string')
      .map((c) => ({
        id: String(c.id || ''),
        type: 'function',
        function: { name: c.function.name, arguments: String(c.function.arguments ?? '') },
      }));
  if (m.stats && typeof m.stats === 'object') {
    const s = {};
    for (const k of ['ttft_ms', 'tokens_per_s', 'tokens'])
      if (Number.isFinite(m.stats[k])) s[k] = m.stats[k];
    out.stats = s;
  }
  if (m.stopped === true) out.stopped = true;
  if (typeof m.error === 'string') out.error = m.error;
  return out;
}

function cleanConversation(c) {
  if (!c || !Array.isArray(c.messages)) return null;
  const now = Date.now();
  return {
    id: newId(),
    title: typeof c.title === 'string' && c.title.trim() ? c.title.slice(0, 200) : 'Imported chat',
    created: Number.isFinite(c.created) ? c.created : now,
    updated: Number.isFinite(c.updated) ? c.updated : now,
    messages: c.messages.map(cleanMessage).filter(Boolean),
  };
}

export class Conversations {
  constructor() {
    const stored = read(CONVERSATIONS, []);
    this.list = (Array.isArray(stored) ? stored : [])
      .map((c) => {
        const clean = cleanConversation(c);
        return clean && typeof c.id === 'string' ? { ...clean, id: c.id } : clean;
      })
      .filter(Boolean);
    this.currentId = read(CURRENT, null);
    if (!this.current() && this.list.length) this.currentId = this.list[0].id;
  }

  // Returns false when the browser's storage is full (the conversation stays on the page).
  save() {
    try {
      localStorage.setItem(CONVERSATIONS, JSON.stringify(this.list));
      localStorage.setItem(CURRENT, JSON.stringify(this.currentId));
      return true;
    } catch {
      return false;
    }
  }

  current() {
    return this.list.find((c) => c.id === this.currentId) || null;
  }

  create() {
    const c = { id: newId(), title: 'New chat', created: Date.now(), updated: Date.now(), messages: [] };
    this.list.unshift(c);
    this.currentId = c.id;
    return c;
  }

  select(id) {
    if (this.list.some((c) => c.id === id)) this.currentId = id;
  }

  rename(id, title) {
    const c = this.list.find((x) => x.id === id);
    if (c && title.trim()) c.title = title.trim().slice(0, 200);
  }

  remove(id) {
    this.list = this.list.filter((c) => c.id !== id);
    if (this.currentId === id) this.currentId = this.list.length ? this.list[0].id : null;
  }

  touch(c) {
    c.updated = Date.now();
    // The most recently used first.
    this.list = [c, ...this.list.filter((x) => x !== c)];
  }

  // One conversation or an array of them, as exported; returns how many were added.
  importJson(text) {
    const parsed = JSON.parse(text);
    const items = (Array.isArray(parsed) ? parsed : [parsed]).map(cleanConversation).filter(Boolean);
    if (!items.length) throw new Error('no conversations in the file');
    this.list = [...items, ...this.list];
    this.currentId = items[0].id;
    return items.length;
  }

  static exportJson(items) {
    return JSON.stringify(
      items.map(({ title, created, updated, messages }) => ({ title, created, updated, messages })),
      null,
      2,
    );
  }
}
