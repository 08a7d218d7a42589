// Talking to brisk serve from the page: the API key (kept in this tab's sessionStorage only, asked
// for when the server answers 401), JSON requests, and chat completions streamed as Server-Sent
// Events.

const KEY = 'brisk.apiKey';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// The dialog that asks for the key, made on first use (both pages share it).
function keyDialog() {
  let dialog = document.getElementById('key-dialog');
  if (dialog) return dialog;
  const make = (tag, props = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) e.setAttribute(k, v);
    e.append(...children);
    return e;
  };
  const error = make('p', { class: 'error', 'data-role': 'key-error' }, 'That key was refused.');
  error.hidden = true;
  dialog = make(
    'dialog',
    { id: 'key-dialog', 'aria-labelledby': 'key-title' },
    make(
      'form',
      { method: 'dialog' },
      make('h2', { id: 'key-title' }, 'API key'),
      make('p', {}, 'This server asks for an API key. It is kept in this tab only.'),
      error,
      make('label', {}, 'Key ', make('input', { type: 'password', autocomplete: 'off', 'data-testid': 'api-key' })),
      make('div', { class: 'dialog-actions' }, make('button', { type: 'submit', 'data-testid': 'api-key-submit' }, 'Continue')),
    ),
  );
  document.body.append(dialog);
  return dialog;
}

// Resolves with a key the user typed into the page's key dialog.
function askForKey(rejected) {
  const dialog = keyDialog();
  const form = dialog.querySelector('form');
  const input = dialog.querySelector('input');
  dialog.querySelector('[data-role=key-error]').hidden = !rejected;
  input.value = '';
  return new Promise((resolve) => {
    form.addEventListener(
      'submit',
      (ev) => {
        ev.preventDefault();
        dialog.close();
        resolve(input.value.trim());
      },
      { once: true },
    );
    dialog.showModal();
    input.focus();
  });
}

// fetch() with the API key; on 401 the user is asked for a key and the request is sent again.
export async function apiFetch(path, init = {}) {
  for (let tries = 0; ; ++tries) {
    const headers = { ...(init.headers || {}) };
    const key = sessionStorage.getItem(KEY);
    if (key) headers.Authorization = `Bearer ${key}`;
    if (init.body) headers['Content-Type'] = 'application/json';
    const res = await fetch(path, { ...init, headers });
    if (res.status !== 401 || tries >= 5) return res;
    sessionStorage.setItem(KEY, await askForKey(key !== null));
  }
}

async function errorOf(res) {
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    if (body.error && body.error.message) message = body.error.message;
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(res.status, message);
}

export async function getJson(path) {
  const res = await apiFetch(path);
  if (!res.ok) throw await errorOf(res);
  return res.json();
}

// Yields each chunk of a streamed chat completion; throws an ApiError for an error the server
// sends, before or during the stream. `signal` aborts the request (the server then frees its KV
// blocks).
export async function* streamChat(body, signal) {
  const res = await apiFetch('/v1/chat/completions', {
    method: 'POST',
    body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
    signal,
  });
  if (!res.ok) throw await errorOf(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') return;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new ApiError(chunk.error.code || 500, chunk.error.message);
        yield chunk;
      }
    }
  }
}
