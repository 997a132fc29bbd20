// One bug's page (/bugs/{id}): report, timeline, reproduction with error
// heatmaps, minimized HLO with the localized instruction highlighted, the
// graph, the localization chain, culprit, patches (side by side), agent
// sessions, downloads, and the triage verbs.
'use strict';

(() => {
  const {el, visible, replace, time, short, json, get, post, fetchRaw, table,
         showError} = trench;
  const match = location.pathname.match(/^\/bugs\/([1-9][0-9]*)$/);
  const bugId = match ? Number(match[1]) : null;

  // ---- Verbs ----
  // The verbs each state allows: orchestrator/store/lifecycle.def's
  // TRENCH_TRIAGE_VERB rows (used when the bug does not list its own
  // "verbs"); the server refuses an illegal move anyway (409).
  const OPEN = ['new', 'reproduced', 'flaky', 'minimized', 'localized',
                'culprit_found', 'patch_drafted', 'patch_verified',
                'proposed', 'approved', 'rejected'];
  const VERB_FROM = {
    approve: ['proposed'],
    reject: ['proposed'],
    redraft: ['proposed', 'rejected', 'patch_verified', 'patch_drafted'],
    duplicate: OPEN,
    invalid: OPEN,
    close: OPEN.concat(['not_reproducible', 'fixed', 'duplicate', 'invalid']),
    reopen: ['closed', 'invalid', 'duplicate', 'not_reproducible', 'fixed'],
  };
  function legalVerbs(bug) {
    if (Array.isArray(bug.verbs)) return bug.verbs;
    return Object.keys(VERB_FROM).filter((v) =>
        VERB_FROM[v].includes(bug.state));
  }
  const VERB_LABELS = {approve: 'Approve', reject: 'Reject',
                       redraft: 'Re-draft with hint',
                       duplicate: 'Duplicate of', invalid: 'Invalid',
                       close: 'Close', reopen: 'Re-open'};

  function renderVerbs(bug) {
    const verbs = legalVerbs(bug);
    const comment = el('textarea', {id: 'verb-comment', rows: 2,
                                    placeholder: 'comment (optional)'});
    const hint = el('input', {id: 'verb-hint',
                              placeholder: 'hint for the patch drafter'});
    const dup = el('input', {id: 'verb-duplicate', type: 'number', min: 1,
                             placeholder: 'bug id'});
    const buttons = verbs.map((v) => el('button', {
      id: 'verb-' + v, class: 'verb', 'data-verb': v,
      onclick: () => triage(v, {comment, hint, dup}),
    }, VERB_LABELS[v] || v));
    replace('verbs',
        el('p', {}, 'state: ', el('span', {id: 'bug-state',
            class: 'state state-' + bug.state}, bug.state)),
        el('div', {class: 'verb-inputs'},
           el('label', {}, 'comment ', comment),
           verbs.includes('redraft') ? el('label', {}, 'hint ', hint) : null,
           verbs.includes('duplicate') ? el('label', {}, 'duplicate of ', dup)
                                       : null),
        el('div', {class: 'verb-buttons'}, buttons));
  }

  async function triage(verb, inputs) {
    replace('verb-error');
    const body = {verb};
    const comment = inputs.comment.value.trim();
    if (comment) body.comment = comment;
    if (verb === 'redraft') {
      const hint = inputs.hint.value.trim();
      if (!hint) {
        replace('verb-error', 're-draft needs a hint for the drafter');
        return;
      }
      body.hint = hint;
    }
    if (verb === 'duplicate') {
      const n = Number(inputs.dup.value);
      if (!Number.isInteger(n) || n < 1) {
        replace('verb-error', 'duplicate needs the id of the other bug');
        return;
      }
      body.duplicate_of = n;
    }
    for (const b of document.querySelectorAll('#verbs button')) {
      b.disabled = true;
    }
    try {
      await post('/api/v1/bugs/' + bugId + '/triage', body);
      await refresh();
    } catch (e) {
      replace('verb-error', (e.status ? e.status + ' ' : '') +
              (e.code ? e.code + ': ' : '') + e.message);
      for (const b of document.querySelectorAll('#verbs button')) {
        b.disabled = false;
      }
    }
  }

  // ---- Report and timeline ----
  function renderReport(bug) {
    replace('bug-title', '#' + bug.id + ' ', visible(bug.title || '(no title)'));
    document.title = 'trench: bug ' + bug.id;
    const d = bug.details || {};
    const rep = d.report || {};
    const rows = [['state', bug.state], ['signature', bug.signature],
                  ['created', time(bug.created_ms)],
                  ['updated', time(bug.updated_ms)],
                  ['case', bug.case_sha256], ['minimized',
                                              bug.minimized_sha256],
                  ['culprit', bug.culprit_commit], ['fix', bug.fix_commit],
                  ['flaky rate', bug.flaky_rate], ['duplicate of',
                                                    bug.duplicate_of]]
        .filter(([, v]) => v !== null && v !== undefined && v !== '');
    replace('report',
        el('dl', {}, rows.map(([k, v]) => [el('dt', {}, k),
            k === 'duplicate of' ? el('dd', {}, el('a', {href: '/bugs/' +
                Number(v)}, '#' + Number(v))) :
            el('dd', {class: 'mono'}, String(v))])),
        rep.title ? el('p', {}, 'title as reported: ',
                       el('span', {class: 'reported-title'},
                          visible(rep.title))) : null,
        rep.text ? el('pre', {class: 'report-text'}, visible(rep.text)) : null,
        d.draft_hints && d.draft_hints.length ?
            el('div', {}, el('h3', {}, 'Hints for the drafter'),
               el('ul', {}, d.draft_hints.map((h) => el('li', {},
                   time(h.at_ms), ' ', visible(h.hint))))) : null,
        d.push ? el('p', {}, 'push: ', visible(json(d.push))) : null,
        rootCause(d));
  }

  // Why the bug is a duplicate, or which older bug it waits (waited) for.
  function rootCause(d) {
    const lines = [];
    const dup = d.duplicate;
    if (dup && typeof dup === 'object') {
      lines.push(el('p', {}, 'duplicate evidence: ', visible(dup.reason || '')));
      if (dup.culprit) {
        lines.push(el('p', {}, 'shared culprit: ',
                      el('span', {class: 'mono'}, visible(dup.culprit))));
      }
      if (dup.site) lines.push(el('p', {}, 'shared site: ',
                                  visible(json(dup.site))));
    }
    const w = d.waiting_for;
    if (w && typeof w === 'object') {
      lines.push(el('p', {}, 'waiting: ', visible(w.reason || '')));
    }
    const r = d.released;
    if (r && typeof r === 'object') {
      lines.push(el('p', {}, 'released from waiting for #' + Number(r.bug) +
                    ': ', visible(r.reason || '')));
    }
    const c = d.patch_check;
    if (c && typeof c === 'object') {
      lines.push(el('p', {}, 'checked against #' + Number(c.bug) +
                    '\'s patch ' + Number(c.patch) + ': ' +
                    (c.fixed === true ? 'fixed' : 'not fixed') + ' (',
                    visible(c.why || ''), ')'));
    }
    return lines.length ? el('div', {id: 'root-cause'}, lines) : null;
  }

  function evidenceText(ev) {
    if (!ev || typeof ev !== 'object') return ev ? String(ev) : '';
    const parts = [];
    for (const k of ['event', 'verb', 'decision', 'comment', 'hint',
                     'duplicate_of', 'reason', 'summary']) {
      if (ev[k] !== undefined && ev[k] !== '') parts.push(k + ': ' + ev[k]);
    }
    return parts.join(' · ');
  }

  // A note (a wait, a release) keeps the state: shown as such.
  function stateText(e) {
    if (e.from && e.from === e.to) return e.to + ' (note)';
    return (e.from ? e.from + ' → ' : '') + (e.to || e.event || '');
  }

  function renderTimeline(events) {
    if (!events || events.length === 0) {
      replace('timeline', 'no events');
      return;
    }
    replace('timeline', el('ol', {class: 'timeline'}, events.map((e) =>
        el('li', {'data-event': e.id},
           el('span', {class: 'when'}, time(e.at_ms)), ' ',
           el('b', {}, stateText(e)),
           ' by ', el('span', {class: 'actor'}, e.actor || ''), ' ',
           el('span', {class: 'evidence'}, visible(evidenceText(e.evidence))),
           el('details', {}, el('summary', {}, 'evidence'),
              el('pre', {}, visible(json(e.evidence))))))));
  }

  // ---- Reproduction and heatmaps ----
  function renderRepro(view) {
    const d = view.bug.details || {};
    const r = d.reproduction || {};
    const runs = view.runs || [];
    const parts = [];
    if (Object.keys(r).length) {
      parts.push(el('p', {}, 'runs ' + (r.runs ?? '?') + ', failures ' +
                             (r.failures ?? '?') +
                             (r.rate !== undefined ? ', rate ' + r.rate : '')));
      if (r.verdict) {
        parts.push(el('details', {}, el('summary', {}, 'verdict'),
                      el('pre', {}, visible(json(r.verdict)))));
      }
    }
    if (runs.length) {
      parts.push(table(['run', 'commit', 'seconds', 'at', 'verdict'],
          runs.map((run) => [String(run.id), short(run.commit),
                             run.seconds !== undefined && run.seconds !== null ?
                                 Number(run.seconds).toFixed(2) : '',
                             time(run.created_ms),
                             el('details', {}, el('summary', {},
                                 verdictSummary(run.verdict)),
                                el('pre', {}, visible(json(run.verdict))))])));
    }
    replace('repro', parts.length ? parts : 'not reproduced yet');
    renderHeatmaps(view.error_maps || []);
  }

  function verdictSummary(v) {
    if (!v || typeof v !== 'object') return String(v ?? '');
    return String(v.verdict ?? v.status ?? v.result ?? 'verdict');
  }

  // Colour of an error/bound ratio: greens up to the bound (1), then
  // orange to dark red on a log scale up to 100x; grey for no value.
  function ratioColour(r) {
    if (r === null || r === undefined || !isFinite(r)) return [200, 200, 200];
    const lerp = (a, b, t) => a.map((x, i) => Math.round(x + (b[i] - x) * t));
    if (r <= 1) return lerp([232, 245, 233], [253, 216, 53], Math.max(0, r));
    const t = Math.min(1, Math.log10(r) / 2);
    return lerp([251, 140, 0], [120, 0, 0], t);
  }

  function legend() {
    const w = 300, h = 34;
    const c = el('canvas', {width: w, height: h, class: 'legend'});
    const ctx = c.getContext('2d');
    // x in [0, w): ratio 0..1 on the first third, 1..100 (log) after.
    const third = w / 3;
    const ratioAt = (x) => x < third ? x / third :
        Math.pow(10, 2 * (x - third) / (w - third));
    for (let x = 0; x < w; x++) {
      const [r, g, b] = ratioColour(ratioAt(x));
      ctx.fillStyle = 'rgb(' + r + ',' + g + ',' + b + ')';
      ctx.fillRect(x, 0, 1, 16);
    }
    ctx.fillStyle = '#000';
    ctx.fillRect(Math.round(third) - 1, 0, 2, 20);
    ctx.font = '11px sans-serif';
    ctx.fillText('0', 0, 30);
    ctx.fillText('bound = 1', third - 24, 30);
    ctx.fillText('≥100×', w - 36, 30);
    return el('div', {class: 'legend-box'}, c,
              el('span', {}, ' error ÷ numerics-contract bound; grey: no ' +
                             'value'));
  }

  function heatmap(map) {
    const rows = Number(map.rows) || (map.cells || []).length;
    const cols = Number(map.cols) ||
        Math.max(0, ...(map.cells || []).map((r) => r.length));
    const size = Math.max(2, Math.min(24, Math.floor(480 /
                                                     Math.max(rows, cols, 1))));
    const canvas = el('canvas', {width: cols * size, height: rows * size,
                                 class: 'heatmap',
                                 'data-output': map.output});
    const ctx = canvas.getContext('2d');
    let outside = 0, worst = 0;
    (map.cells || []).forEach((row, i) => (row || []).forEach((v, j) => {
      const [r, g, b] = ratioColour(v);
      ctx.fillStyle = 'rgb(' + r + ',' + g + ',' + b + ')';
      ctx.fillRect(j * size, i * size, size, size);
      if (v > 1) outside++;
      if (v > worst) worst = v;
    }));
    const readout = el('span', {class: 'readout'});
    canvas.addEventListener('mousemove', (ev) => {
      const j = Math.floor(ev.offsetX / size), i = Math.floor(ev.offsetY / size);
      const v = ((map.cells || [])[i] || [])[j];
      readout.textContent = 'cell [' + i + ', ' + j + ']: ' +
          (v === null || v === undefined ? 'no value' :
                                           Number(v).toPrecision(4) + '×');
    });
    return el('figure', {class: 'heatmap-figure'}, canvas,
        el('figcaption', {}, 'output ' + map.output + ' shape [' +
           (map.shape || []).join(', ') + '], run ' + map.run + ': ' +
           outside + ' of ' + rows * cols + ' cells outside the bound, worst ' +
           Number(worst).toPrecision(3) + '× ', readout));
  }

  function renderHeatmaps(maps) {
    replace('heatmaps', maps.length ? [legend(), maps.map(heatmap)] :
        el('p', {}, 'no error maps (no mismatching output recorded)'));
  }

  // ---- HLO and graph ----
  const NAME = /^\s*(?:ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=/;
  function renderHlo(view) {
    const text = view.minimized_hlo || view.case_hlo;
    const h = {};
    for (const [k, v] of Object.entries(view.highlight || {})) {
      h[k] = typeof v === 'string' ? v.replace(/^%/, '') : null;
    }
    replace('hlo-info', !text ? 'no module yet' :
        [view.minimized_hlo ? 'minimized module' : 'the case (not minimized)',
         h.instruction ? [' · instruction ', el('code', {class:
             'hl-instruction'}, h.instruction)] : '',
         h.fusion ? [' · fusion ', el('code', {class: 'hl-fusion'}, h.fusion)]
                  : '',
         h.fused_instruction ? [' · fused op ', el('code', {class:
             'hl-fused'}, h.fused_instruction)] : '',
         h.called_instruction ? [' · called op ', el('code', {class:
             'hl-fused'}, h.called_instruction)] : '']);
    if (!text) {
      replace('hlo');
      return;
    }
    const lines = text.split('\n').map((line) => {
      const m = line.match(NAME);
      const name = m ? m[1] : null;
      let cls = 'line';
      if (name && name === h.instruction) cls += ' hl-instruction';
      if (name && name === h.fused_instruction) cls += ' hl-fused';
      if (name && name === h.called_instruction) cls += ' hl-fused';
      if (name && name === h.fusion) cls += ' hl-fusion';
      return el('span', {class: cls}, line + '\n');
    });
    replace('hlo', lines);
  }

  async function renderGraph(view) {
    const img = document.getElementById('graph');
    const box = document.getElementById('graph-box');
    for (const p of box.querySelectorAll('p')) p.remove();
    img.hidden = !view.graph;
    if (!view.graph) {
      img.removeAttribute('src');
      box.appendChild(el('p', {}, 'no graph (no module yet)'));
      return;
    }
    try {
      // Fetched (with the read token, if any) and shown as a data: URL;
      // an SVG in an <img> runs no script.
      const res = await fetchRaw(view.graph);
      if (!res.ok) {
        let msg = res.status + ' ' + res.statusText;
        try { msg = (await res.json()).error.message; } catch (e) {}
        box.appendChild(el('p', {class: 'error'}, 'graph: ' + msg));
        return;
      }
      const blob = await res.blob();
      const url = await new Promise((resolve, reject) => {
        const r = new FileReader();
        r.onload = () => resolve(r.result);
        r.onerror = () => reject(r.error);
        r.readAsDataURL(new Blob([blob], {type: 'image/svg+xml'}));
      });
      img.src = url;
    } catch (e) {
      box.appendChild(el('p', {class: 'error'}, 'graph: ' + e.message));
    }
  }

  // ---- Localization and culprit ----
  function renderLocalization(loc) {
    if (!loc || !Array.isArray(loc.levels) || loc.levels.length === 0) {
      replace('localization', 'not localized yet');
      return;
    }
    replace('localization',
        el('ol', {class: 'chain'}, loc.levels.map((l) =>
            el('li', {class: 'level', 'data-level': l.level},
               el('b', {}, l.level), ': ',
               el('span', {class: 'result'}, visible(textOf(l.result))), ' ',
               el('span', {}, visible(textOf(l.summary))),
               l.evidence !== undefined && l.evidence !== null ?
                   el('details', {}, el('summary', {}, 'evidence'),
                      el('pre', {}, visible(typeof l.evidence === 'string' ?
                          l.evidence : json(l.evidence)))) : null))),
        loc.findings ? el('details', {}, el('summary', {}, 'findings'),
                          el('pre', {}, visible(json(loc.findings)))) : null);
  }

  // A value from data as one line of text.
  function textOf(v) {
    if (v === null || v === undefined) return '';
    return typeof v === 'string' ? v : JSON.stringify(v);
  }

  function unifiedDiff(diff) {
    return el('pre', {class: 'diff'}, String(diff || '').split('\n').map(
        (line) => el('span', {class: line.startsWith('+') ? 'add' :
                                     line.startsWith('-') ? 'del' :
                                     line.startsWith('@@') ? 'hunk' : ''},
                     visible(line) + '\n')));
  }

  function renderCulprit(c) {
    if (!c) {
      replace('culprit', 'not found yet');
      return;
    }
    replace('culprit',
        el('p', {}, el('code', {class: 'sha'}, c.sha), ' ',
           el('b', {}, visible(c.summary)), ' by ', visible(c.author), ' ',
           time(c.time_ms)),
        c.diff ? el('details', {open: true}, el('summary', {}, 'diff'),
                    unifiedDiff(c.diff)) : null);
  }

  // ---- Patches: side-by-side diffs ----
  // Rows [oldNo, oldText, newNo, newText, kind] of a unified diff.
  function sideBySide(diff) {
    const rows = [];
    let oldNo = 0, newNo = 0, dels = [], adds = [];
    const flush = () => {
      const n = Math.max(dels.length, adds.length);
      for (let i = 0; i < n; i++) {
        const d = dels[i], a = adds[i];
        rows.push([d ? d[0] : '', d ? d[1] : '', a ? a[0] : '', a ? a[1] : '',
                   'change']);
      }
      dels = [];
      adds = [];
    };
    let inHunk = false;
    for (const line of String(diff || '').split('\n')) {
      const hunk = line.match(/^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$/);
      if (hunk) {
        flush();
        oldNo = Number(hunk[1]);
        newNo = Number(hunk[2]);
        inHunk = true;
        rows.push(['', line, '', '', 'hunk']);
      } else if (line.startsWith('diff ') || !inHunk) {
        flush();
        inHunk = false;
        if (line.startsWith('+++ ') || line.startsWith('diff ')) {
          rows.push(['', line, '', '', 'file']);
        }
      } else if (line.startsWith('-')) {
        dels.push([oldNo++, line.slice(1)]);
      } else if (line.startsWith('+')) {
        adds.push([newNo++, line.slice(1)]);
      } else if (line.startsWith('\\')) {
        continue;
      } else {
        flush();
        rows.push([oldNo++, line.slice(1), newNo++, line.slice(1), 'same']);
      }
    }
    flush();
    return el('table', {class: 'sbs'}, el('tbody', {}, rows.map((r) => {
      if (r[4] === 'hunk' || r[4] === 'file') {
        return el('tr', {class: r[4]}, el('td', {colspan: 4},
                                          visible(r[1])));
      }
      return el('tr', {class: r[4]},
          el('td', {class: 'no'}, String(r[0])),
          el('td', {class: r[4] === 'change' && r[1] !== '' ? 'del' : ''},
             visible(r[1])),
          el('td', {class: 'no'}, String(r[2])),
          el('td', {class: r[4] === 'change' && r[3] !== '' ? 'add' : ''},
             visible(r[3])));
    })));
  }

  function verification(v) {
    if (!v || typeof v !== 'object' || Object.keys(v).length === 0) {
      return el('p', {}, 'not verified yet');
    }
    return el('dl', {class: 'verification'}, Object.entries(v).map(([k, x]) =>
        [el('dt', {}, k), el('dd', {}, visible(typeof x === 'object' ?
                                               JSON.stringify(x) :
                                               String(x)))]));
  }

  // How much of the culprit the patch undoes (pipeline/draft_coverage.h);
  // a partial revert that leaves the localized pass's change is flagged.
  function coverage(c) {
    if (!c || typeof c !== 'object') return null;
    if (c.unknown) {
      return el('p', {class: 'coverage'}, 'coverage not judged: ',
                visible(String(c.unknown)));
    }
    return el('div', {class: 'coverage'},
        el('p', {}, 'coverage: ', visible(String(c.summary || ''))),
        c.partial ? el('p', {class: 'partial-revert error'}, 'flagged: ',
                       visible(String(c.reason || 'partial revert'))) : null);
  }

  function renderPatches(patches) {
    if (!patches || patches.length === 0) {
      replace('patches', 'no patch drafted yet');
      return;
    }
    replace('patches', patches.map((p) => el('article', {class: 'patch',
                                                         'data-patch': p.id},
        el('h3', {}, 'patch ' + p.id + (p.round !== null &&
                                        p.round !== undefined ?
                                        ' · round ' + p.round : '') +
                     ' · ' + (p.verified ? 'verified' : 'not verified')),
        el('p', {}, 'branch ', el('code', {}, visible(p.branch)), ' · ',
           time(p.created_ms), ' · ',
           el('a', {href: p.download || ('/api/v1/patches/' + Number(p.id) +
                                         '.patch'), download: ''},
              'download .patch')),
        coverage(p.coverage), verification(p.verification),
        sideBySide(p.diff))));
  }

  // ---- Agent sessions ----
  function messageBody(m) {
    let parsed = null;
    if (m.role === 'assistant' || m.role === 'tool') {
      try { parsed = JSON.parse(m.content); } catch (e) { parsed = null; }
    }
    if (parsed && m.role === 'assistant' && typeof parsed === 'object') {
      return [parsed.text ? el('pre', {class: 'text'}, visible(parsed.text))
                          : null,
              (parsed.tool_calls || []).map((c) => el('div', {class:
                  'tool-call'}, 'tool call ', el('b', {}, visible(c.name)),
                  ' (', visible(c.id), ')',
                  el('pre', {class: 'args'}, visible(typeof c.arguments ===
                      'string' ? c.arguments : json(c.arguments)))))];
    }
    if (parsed && m.role === 'tool' && typeof parsed === 'object') {
      return el('div', {class: 'tool-result' + (parsed.is_error ? ' error' :
                                                                  '')},
          'result of ', el('b', {}, visible(parsed.name)), ' (',
          visible(parsed.tool_call_id), ')' + (parsed.is_error ? ' error' :
                                                                 ''),
          el('pre', {}, visible(parsed.content)));
    }
    // Other JSON (a built-in brain's task or claim) pretty-printed.
    let other = null;
    try { other = JSON.parse(m.content); } catch (e) { other = null; }
    return el('pre', {class: 'text'}, visible(
        other !== null && typeof other === 'object' ? json(other) :
                                                      m.content));
  }

  function renderSessions(sessions) {
    if (!sessions || sessions.length === 0) {
      replace('sessions', 'no agent sessions');
      return;
    }
    replace('sessions', sessions.map((s) => el('article', {class: 'session',
        'data-session': s.id, 'data-role': s.role},
        el('h3', {}, 'session ' + s.id + ' · ' + s.role + ' · ' +
                     (s.backend || s.brain || '')),
        el('p', {}, 'status ', visible(s.status), ' · tokens in ',
           String(s.input_tokens ?? 0), ' / out ', String(s.output_tokens ?? 0),
           ' · cost $', Number(s.cost_usd || 0).toFixed(4), ' · ',
           time(s.started_ms), s.ended_ms ? ' – ' + time(s.ended_ms) : '',
           s.fallback_reason ? [' · fallback: ', el('span', {class:
               'fallback'}, visible(s.fallback_reason))] : ''),
        el('ol', {class: 'turns'}, (s.messages || []).map((m) =>
            el('li', {class: 'turn role-' + m.role},
               el('span', {class: 'role'}, m.role), ' ',
               el('span', {class: 'tokens'}, (m.input_tokens || m.output_tokens) ?
                   m.input_tokens + ' in / ' + m.output_tokens + ' out' : ''),
               messageBody(m)))))));
  }

  function renderJobs(jobs) {
    replace('bug-jobs', !jobs || jobs.length === 0 ? 'no jobs' :
        table(['job', 'kind', 'state', 'attempts', 'why'],
              jobs.map((j) => [String(j.id), j.kind, j.state,
                               String(j.attempts ?? ''),
                               visible(j.parked_reason || j.last_error || '')])));
  }

  // A download link. The click fetches the file with the page's token (a
  // plain link would carry none when reads need one) and saves it from a
  // blob: URL; errors are shown next to the links.
  function downloadLink(href, name) {
    const a = el('a', {href: href, download: name}, name);
    a.addEventListener('click', async (ev) => {
      ev.preventDefault();
      try {
        const res = await fetchRaw(href);
        if (!res.ok) {
          let msg = res.status + ' ' + res.statusText;
          try { msg = (await res.json()).error.message; } catch (e) {}
          throw new Error(msg);
        }
        const url = URL.createObjectURL(await res.blob());
        const save = el('a', {href: url, download: name});
        document.body.appendChild(save);
        save.click();
        save.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60000);
      } catch (e) {
        showError('downloads', e);
      }
    });
    return a;
  }

  function renderDownloads(view) {
    const d = view.downloads || {};
    const links = [];
    if (d.case) links.push(downloadLink(d.case, 'case.tar.gz'));
    if (d.minimized) links.push(downloadLink(d.minimized, 'minimized.tar.gz'));
    for (const p of view.patches || []) {
      links.push(downloadLink(p.download || ('/api/v1/patches/' +
                                             Number(p.id) + '.patch'),
                              'patch-' + Number(p.id) + '.patch'));
    }
    replace('downloads', links.length ? el('ul', {}, links.map((a) =>
        el('li', {}, a))) : 'nothing to download yet');
  }

  // The view of /api/v1/bugs/{id}/view, or the older /api/v1/bugs/{id}
  // shape when the server has no view route.
  async function load() {
    try {
      return await get('/api/v1/bugs/' + bugId + '/view');
    } catch (e) {
      if (!(e instanceof trench.ApiError) || e.status !== 404 ||
          !/no route/.test(e.message)) {
        throw e;
      }
    }
    const page = await get('/api/v1/bugs/' + bugId);
    return Object.assign({runs: [], error_maps: [], sessions: [],
                          highlight: {}, localization: null, culprit: null,
                          graph: null, downloads: {}}, page);
  }

  let rendering = false;
  async function refresh() {
    if (bugId === null) {
      replace('report', 'no such bug page');
      return;
    }
    if (rendering) return later();
    rendering = true;
    try {
      const view = await load();
      const b = view.bug;
      renderVerbs(b);
      renderReport(b);
      renderTimeline(view.events);
      renderRepro(view);
      renderHlo(view);
      renderLocalization(view.localization);
      renderCulprit(view.culprit);
      renderPatches(view.patches);
      renderSessions(view.sessions);
      renderJobs(view.jobs);
      renderDownloads(view);
      await renderGraph(view);
      document.body.dataset.loaded = String(Date.now());
    } catch (e) {
      showError('report', e);
    } finally {
      rendering = false;
    }
  }

  const later = trench.debounce(refresh, 300);
  refresh();
  trench.live(() => later(), bugId);
})();
