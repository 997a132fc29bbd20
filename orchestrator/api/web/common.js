// trench dashboard: what every page shares. No framework, no build step.
// Every string that comes from data goes into the page as text
// (textContent / createTextNode), never as markup.
'use strict';

const trench = (() => {
  const WRITE_KEY = 'trench.write_token';
  const READ_KEY = 'trench.read_token';

  // el('a', {href: u, class: 'x'}, 'text', child...): an element whose
  // string children become text nodes.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  // Control characters (terminal escapes) shown as visible text: "\x1b".
  function visible(s) {
    return String(s ?? '').replace(/[\x00-\x08\x0b-\x1f\x7f]/g,
        (c) => '\\x' + c.charCodeAt(0).toString(16).padStart(2, '0'));
  }

  function replace(id, ...children) {
    const node = document.getElementById(id);
    if (!node) return null;
    node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null &&
        c !== undefined).map((c) => c instanceof Node ? c :
        document.createTextNode(String(c))));
    return node;
  }

  function time(ms) {
    if (ms === null || ms === undefined) return '';
    const d = new Date(ms);
    return isNaN(d) ? '' : d.toISOString().replace('T', ' ').slice(0, 19);
  }

  function short(sha) { return sha ? String(sha).slice(0, 12) : ''; }

  function json(v) {
    try { return JSON.stringify(v, null, 2); } catch (e) { return String(v); }
  }

  function queryParam(name) {
    return new URLSearchParams(location.search).get(name);
  }

  // ---- Tokens: sessionStorage only, asked through the page's form. ----
  function token(kind) {
    return sessionStorage.getItem(kind === 'write' ? WRITE_KEY : READ_KEY);
  }
  function setToken(kind, value) {
    const key = kind === 'write' ? WRITE_KEY : READ_KEY;
    if (value) sessionStorage.setItem(key, value);
    else sessionStorage.removeItem(key);
  }

  let asking = null;
  // Shows the token form and resolves with the token typed (null when
  // cancelled). One question at a time.
  function askToken(kind, why) {
    if (asking) return asking;
    const form = document.getElementById('token-form');
    if (!form) return Promise.resolve(null);
    const input = document.getElementById('token-input');
    replace('token-label', kind === 'write' ?
        'Write token (kept for this browser session only)' :
        'Read token (kept for this browser session only)');
    replace('token-why', why || '');
    input.value = '';
    form.hidden = false;
    input.focus();
    asking = new Promise((resolve) => {
      const done = (value) => {
        form.hidden = true;
        form.removeEventListener('submit', onSubmit);
        document.getElementById('token-cancel')
            .removeEventListener('click', onCancel);
        asking = null;
        resolve(value);
      };
      const onSubmit = (ev) => {
        ev.preventDefault();
        const v = input.value.trim();
        setToken(kind, v);
        done(v);
      };
      const onCancel = (ev) => { ev.preventDefault(); done(null); };
      form.addEventListener('submit', onSubmit);
      document.getElementById('token-cancel')
          .addEventListener('click', onCancel);
    });
    return asking;
  }

  function authHeaders(write) {
    const t = write ? token('write') : (token('read') || token('write'));
    return t ? {'Authorization': 'Bearer ' + t} : {};
  }

  // An error carrying the API's {"error": {"code", "message"}}.
  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  async function errorOf(res) {
    let code = 'http_' + res.status, message = res.statusText || code;
    try {
      const body = await res.json();
      if (body && body.error) {
        code = body.error.code || code;
        message = body.error.message || message;
      }
    } catch (e) { /* not JSON */ }
    return new ApiError(res.status, code, message);
  }

  // GET path -> parsed JSON. On 401 asks for the read token once.
  async function get(path, asked) {
    const res = await fetch(path, {headers: authHeaders(false),
                                   cache: 'no-store'});
    if (res.status === 401 && !asked) {
      const t = await askToken('read', 'Reading needs a token (' + path + ')');
      if (t) return get(path, true);
    }
    if (!res.ok) throw await errorOf(res);
    return res.json();
  }

  // GET path -> Response (for binary content), with the read token.
  async function fetchRaw(path) {
    return fetch(path, {headers: authHeaders(false), cache: 'no-store'});
  }

  // POST path with a JSON body, with the write token (asked for the
  // first time). A refused token (401/403) is forgotten, so the next
  // action asks again.
  async function post(path, body) {
    if (!token('write')) {
      const t = await askToken('write', 'This action needs the write token');
      if (t === null) throw new ApiError(0, 'cancelled', 'no token given');
    }
    const headers = Object.assign({'Content-Type': 'application/json'},
                                  authHeaders(true));
    const res = await fetch(path, {method: 'POST', headers,
                                   body: JSON.stringify(body || {})});
    if (res.status === 401 || res.status === 403) setToken('write', null);
    if (!res.ok) throw await errorOf(res);
    return res.json();
  }

  // ---- Live updates ----
  // Calls onEvent(event) for each event of the feed after the page
  // loaded: /api/v1/events/stream read with fetch() (so the Authorization
  // header goes along), else long polls of /api/v1/events?wait=25.
  // #status shows the id of the last event received.
  let lastId = null;
  function noteEvent(id) {
    lastId = id;
    const s = document.getElementById('status');
    if (s) {
      s.dataset.lastEvent = String(id);
      s.textContent = 'live · last event ' + id;
    }
  }

  function setStatus(text) {
    const s = document.getElementById('status');
    if (s) s.textContent = text + (lastId !== null ? ' · last event ' + lastId
                                                   : '');
  }

  async function streamOnce(onEvent, bug) {
    const q = new URLSearchParams();
    if (lastId !== null) q.set('since', lastId);
    if (bug) q.set('bug', bug);
    const headers = authHeaders(false);
    headers['Accept'] = 'text/event-stream';
    if (lastId !== null) headers['Last-Event-ID'] = String(lastId);
    const res = await fetch('/api/v1/events/stream?' + q, {headers,
                                                           cache: 'no-store'});
    if (!res.ok || !res.body ||
        !(res.headers.get('Content-Type') || '').includes('event-stream')) {
      throw new ApiError(res.status, 'no_stream', 'no event stream');
    }
    setStatus('live');
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return;
      buf += value;
      let cut;
      while ((cut = buf.search(/\r?\n\r?\n/)) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut).replace(/^\r?\n\r?\n/, '');
        let id = null, data = '';
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') id = val;
          else if (field === 'data') data += (data ? '\n' : '') + val;
        }
        if (!data) continue;
        let ev;
        try { ev = JSON.parse(data); } catch (e) { continue; }
        noteEvent(id !== null ? Number(id) : ev.id);
        onEvent(ev);
      }
    }
  }

  async function pollOnce(onEvent, bug) {
    const q = new URLSearchParams({wait: '25', limit: '500'});
    if (lastId !== null) q.set('since', lastId);
    if (bug) q.set('bug', bug);
    const body = await get('/api/v1/events?' + q);
    setStatus('live (polling)');
    const first = lastId === null;
    for (const ev of body.events || []) {
      noteEvent(ev.id);
      if (!first) onEvent(ev);
    }
    if (first && body.next !== undefined && body.next !== null) {
      noteEvent(body.next);
    }
  }

  function live(onEvent, bug) {
    let useStream = true;
    const run = async () => {
      for (;;) {
        try {
          if (useStream) {
            await streamOnce(onEvent, bug);
            // The server ended the stream (it restarts, or drains):
            // reconnect after a pause, from the last id seen.
            setStatus('reconnecting');
            await new Promise((r) => setTimeout(r, 1000));
          } else {
            await pollOnce(onEvent, bug);
            continue;
          }
        } catch (e) {
          if (useStream && e instanceof ApiError) useStream = false;
          setStatus('reconnecting');
          await new Promise((r) => setTimeout(r, 2000));
        }
      }
    };
    run();
  }

  // Runs fn at most once per `ms` (the last call wins), for refreshes
  // after bursts of events.
  function debounce(fn, ms) {
    let timer = null;
    return () => {
      clearTimeout(timer);
      timer = setTimeout(fn, ms);
    };
  }

  function showError(id, e) {
    const node = document.getElementById(id);
    if (!node) return;
    node.replaceChildren(el('p', {class: 'error'},
        (e && e.code ? e.code + ': ' : '') + (e && e.message || String(e))));
  }

  // Wraps a table around rows: headers is a list of strings; rows a list
  // of lists of nodes or strings.
  function table(headers, rows, attrs) {
    return el('table', attrs || {},
        el('thead', {}, el('tr', {}, headers.map((h) => el('th', {}, h)))),
        el('tbody', {}, rows.map((r) =>
            r instanceof Node ? r :
            el('tr', {}, r.map((c) => c instanceof Node && c.tagName === 'TD' ?
                c : el('td', {}, c))))));
  }

  return {el, visible, replace, time, short, json, queryParam, get, post,
          fetchRaw, askToken, token, setToken, live, debounce, showError,
          table, ApiError};
})();
