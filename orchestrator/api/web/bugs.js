// The bug list (/bugs): filters, pages by cursor, and the per-signature
// table. The filters live in the page's query string (?state=&pass=...).
'use strict';

(() => {
  const {el, visible, replace, time, short, get, table, showError} = trench;
  // orchestrator/store/lifecycle.def's states.
  const STATES = ['new', 'reproduced', 'not_reproducible', 'flaky',
                  'minimized', 'localized', 'culprit_found', 'patch_drafted',
                  'patch_verified', 'proposed', 'approved', 'rejected',
                  'fixed', 'closed', 'duplicate', 'invalid'];
  const FILTERS = ['state', 'pass', 'opcode', 'signature', 'q'];
  const PAGE = 50;
  // Cursors of the pages before this one (after= values).
  const cursors = [];
  let after = 0;

  const stateSelect = document.getElementById('f-state');
  for (const s of STATES) stateSelect.appendChild(el('option', {value: s}, s));

  function filters() {
    const params = new URLSearchParams(location.search);
    const f = {};
    for (const k of FILTERS) {
      const v = params.get(k);
      if (v) f[k] = v;
    }
    return f;
  }

  function fillForm() {
    const f = filters();
    for (const k of FILTERS) {
      document.getElementById('f-' + k).value = f[k] || '';
    }
  }

  document.getElementById('filters').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const params = new URLSearchParams();
    for (const k of FILTERS) {
      const v = document.getElementById('f-' + k).value.trim();
      if (v) params.set(k, v);
    }
    history.pushState(null, '', '/bugs' + (params.toString() ? '?' + params :
                                                               ''));
    cursors.length = 0;
    after = 0;
    refresh();
  });
  window.addEventListener('popstate', () => {
    cursors.length = 0;
    after = 0;
    fillForm();
    refresh();
  });

  function localizationOf(b) {
    const loc = (b.details && b.details.localization) || {};
    const sig = loc.signature || {};
    return [sig.pass, sig.opcode].filter(Boolean).join(' / ');
  }

  function renderBugs(body) {
    const bugs = body.bugs || [];
    replace('bugs-total', body.total !== undefined && body.total !== null ?
        body.total + ' matching bugs' : '');
    if (bugs.length === 0) {
      replace('bugs', el('p', {}, 'no bugs match'));
    } else {
      replace('bugs', table(
          ['id', 'state', 'title', 'signature', 'localized at', 'updated'],
          bugs.map((b) => el('tr', {class: 'bug', 'data-bug': b.id},
              el('td', {}, el('a', {href: '/bugs/' + Number(b.id)},
                              '#' + Number(b.id))),
              el('td', {}, el('span', {class: 'state state-' + b.state},
                              b.state)),
              el('td', {class: 'title'}, el('a', {href: '/bugs/' +
                                                  Number(b.id)}, visible(b.title))),
              el('td', {class: 'mono'}, b.signature),
              el('td', {}, localizationOf(b)),
              el('td', {}, time(b.updated_ms))))));
    }
    const pager = [];
    if (cursors.length > 0) {
      pager.push(el('button', {id: 'prev', onclick: () => {
        after = cursors.pop();
        refresh();
      }}, '← previous'));
    }
    if (body.next !== undefined && body.next !== null) {
      pager.push(el('button', {id: 'next', onclick: () => {
        cursors.push(after);
        after = body.next;
        refresh();
      }}, 'next →'));
    }
    replace('pager', pager);
  }

  function renderSignatures(body) {
    const sigs = body.signatures || [];
    if (sigs.length === 0) {
      replace('signatures', 'no signatures');
      return;
    }
    replace('signatures', table(
        ['signature', 'title', 'count', 'first seen', 'last seen', 'commits',
         'bugs'],
        sigs.map((s) => el('tr', {class: 'signature'},
            el('td', {class: 'mono'}, el('a', {href: '/bugs?signature=' +
                encodeURIComponent(s.signature)}, s.signature)),
            el('td', {}, visible(s.title)),
            el('td', {class: 'num'}, String(s.count ?? '')),
            el('td', {}, time(s.first_seen_ms)),
            el('td', {}, time(s.last_seen_ms)),
            el('td', {class: 'mono'}, (s.commits || []).map(short).join(' ')),
            el('td', {}, (s.bugs || []).slice(0, 20).map((id) =>
                [el('a', {href: '/bugs/' + Number(id)}, '#' + Number(id)),
                 ' ']))))));
  }

  async function refresh() {
    const f = filters();
    const q = new URLSearchParams(f);
    q.set('limit', String(PAGE));
    if (after) q.set('after', String(after));
    try {
      renderBugs(await get('/api/v1/bugs?' + q));
      document.body.dataset.loaded = String(Date.now());
    } catch (e) {
      showError('bugs', e);
    }
    try {
      const sq = new URLSearchParams({limit: '100'});
      if (f.state) sq.set('state', f.state);
      renderSignatures(await get('/api/v1/signatures?' + sq));
    } catch (e) {
      showError('signatures', e);
    }
  }

  fillForm();
  refresh();
  trench.live(trench.debounce(refresh, 300));
})();
