// The overview page (/): repository, commits, swarm, job queue, plots.
'use strict';

(() => {
  const {el, visible, replace, time, short, get, post, table, showError} =
      trench;

  function renderRepo(repo) {
    const rows = [['repository', repo.path], ['branch', repo.branch],
                  ['head', repo.head], ['built head', repo.built_head],
                  ['good commit', repo.good_commit]];
    replace('repo', rows.map(([k, v]) =>
        [el('dt', {}, k), el('dd', {class: 'mono'}, v ?? 'none')]));
  }

  function renderStates(states) {
    const entries = Object.entries(states || {}).filter(([, n]) => n > 0);
    replace('bug-states', entries.length === 0 ? 'no bugs yet' :
        el('ul', {class: 'inline'}, entries.map(([s, n]) =>
            el('li', {}, el('a', {href: '/bugs?state=' +
                                  encodeURIComponent(s)}, s), ': ', n))));
  }

  // The campaign's focus, shortened: a base commit's covers every op.
  function focusText(focus) {
    const shown = focus.slice(0, 8).join(', ');
    return focus.length > 8 ? shown + ', … (' + focus.length + ' in all)' :
                              shown;
  }

  // Changed-line reach: "3/4 lines" (changed lines reached by a program of
  // the commit's campaign), or "-" when the build was not a coverage one.
  function reachText(reach) {
    if (!reach || reach.lines === undefined) return '-';
    return Number(reach.reached) + '/' + Number(reach.lines) + ' lines';
  }

  function renderCommits(commits) {
    if (!commits || commits.length === 0) {
      replace('commits', 'no commits landed yet');
      return;
    }
    replace('commits', table(
        ['commit', 'summary', 'author', 'landed', 'build', 'programs',
         'findings', 'reach', 'focus'],
        commits.map((c) => el('tr', {class: 'commit', 'data-sha': c.sha},
            el('td', {class: 'mono'}, short(c.sha)),
            el('td', {}, visible(c.summary)),
            el('td', {title: visible(c.author)},
               visible(String(c.author || '').replace(/\s*<[^>]*>$/, ''))),
            el('td', {class: 'when'}, time(c.landed_ms)),
            el('td', {}, c.build ? c.build.status +
                (c.build.seconds !== null && c.build.seconds !== undefined ?
                    ' (' + Number(c.build.seconds).toFixed(0) + ' s)' : '') :
                'not built'),
            el('td', {class: 'num'}, c.programs ?? 0),
            el('td', {class: 'num'}, c.findings ?? 0),
            el('td', {class: 'num reach'}, reachText(c.reach)),
            el('td', {title: (c.focus || []).join(', ')},
               focusText(c.focus || []))))));
  }

  function renderSwarm(swarm) {
    replace('swarm', !swarm || swarm.length === 0 ? 'no swarm configured' :
        table(['role', 'brain', 'count', 'running', 'sessions', 'fallbacks'],
              swarm.map((s) => [s.role, s.brain, String(s.count ?? ''),
                                String(s.running ?? 0), String(s.sessions ?? 0),
                                String(s.fallbacks ?? 0)])));
  }

  async function retry(job, button, out) {
    button.disabled = true;
    out.textContent = '';
    try {
      await post('/api/v1/jobs/' + encodeURIComponent(job.id) + '/retry', {});
      out.textContent = 'queued again';
      refresh();
    } catch (e) {
      out.textContent = (e.code ? e.code + ': ' : '') + e.message;
      out.className = 'error';
      button.disabled = false;
    }
  }

  function renderJobs(jobs) {
    const counts = (jobs && jobs.counts) || {};
    const summary = el('p', {}, ['queued', 'running', 'failed', 'parked',
                                 'done'].map((s) => s + ' ' +
                                             (counts[s] ?? 0)).join(' · '));
    const attention = (jobs && jobs.attention) || [];
    const rows = attention.map((j) => {
      const out = el('span', {});
      const canRetry = j.state === 'failed' || j.state === 'parked';
      const button = canRetry ? el('button', {class: 'retry',
          'data-job': j.id}, 'retry') : null;
      if (button) button.addEventListener('click', () => retry(j, button, out));
      return el('tr', {class: 'job', 'data-job': j.id},
          el('td', {}, String(j.id)), el('td', {}, j.kind),
          el('td', {}, j.state),
          el('td', {}, j.bug ? el('a', {href: '/bugs/' + Number(j.bug)},
                                  '#' + Number(j.bug)) : ''),
          el('td', {class: 'num'}, String(j.attempts ?? '')),
          el('td', {}, visible(j.parked_reason || j.last_error || '')),
          el('td', {}, button, ' ', out));
    });
    replace('jobs', summary, rows.length === 0 ?
        el('p', {}, 'nothing running, failed or parked') :
        table(['job', 'kind', 'state', 'bug', 'attempts', 'why', ''], rows));
  }

  // A line plot drawn by hand on a canvas: points [[t_ms, v], ...].
  function plot(title, points, unit) {
    const w = 520, h = 180, pad = 36;
    const canvas = el('canvas', {width: w, height: h, class: 'plot',
                                 'aria-label': title});
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, w, h);
    ctx.strokeStyle = '#999';
    ctx.strokeRect(pad, 8, w - pad - 8, h - pad - 8);
    ctx.fillStyle = '#333';
    ctx.font = '11px sans-serif';
    const pts = (points || []).filter((p) => Array.isArray(p) &&
        isFinite(p[0]) && isFinite(p[1]));
    if (pts.length === 0) {
      ctx.fillText('no data yet', w / 2 - 30, h / 2);
    } else {
      const t0 = Math.min(...pts.map((p) => p[0]));
      const t1 = Math.max(...pts.map((p) => p[0]));
      const vmax = Math.max(1e-9, ...pts.map((p) => p[1]));
      const x = (t) => pad + (t1 === t0 ? 0.5 : (t - t0) / (t1 - t0)) *
          (w - pad - 8);
      const y = (v) => h - pad - (v / vmax) * (h - pad - 8);
      ctx.strokeStyle = '#2563eb';
      ctx.lineWidth = 2;
      ctx.beginPath();
      pts.forEach((p, i) => i ? ctx.lineTo(x(p[0]), y(p[1])) :
                                ctx.moveTo(x(p[0]), y(p[1])));
      ctx.stroke();
      ctx.fillStyle = '#2563eb';
      for (const p of pts) ctx.fillRect(x(p[0]) - 2, y(p[1]) - 2, 4, 4);
      ctx.fillStyle = '#333';
      ctx.fillText(vmax.toPrecision(3) + ' ' + unit, 2, 16);
      ctx.fillText('0', pad - 10, h - pad);
      ctx.fillText(time(t0).slice(11, 16), pad, h - pad + 14);
      ctx.fillText(time(t1).slice(11, 16), w - 44, h - pad + 14);
    }
    return el('figure', {}, canvas, el('figcaption', {}, title));
  }

  function renderPlots(series) {
    series = series || {};
    replace('plots',
        plot('programs per second', series.programs_per_second, 'prog/s'),
        plot('findings per hour', series.findings_per_hour, '/h'));
  }

  async function refresh() {
    try {
      const o = await get('/api/v1/overview');
      renderRepo(o.repo || {});
      renderStates(o.bugs_by_state);
      renderCommits(o.commits);
      renderSwarm(o.swarm);
      renderJobs(o.jobs);
      renderPlots(o.series);
      document.body.dataset.loaded = String(Date.now());
    } catch (e) {
      showError('repo', e);
    }
  }

  const later = trench.debounce(refresh, 300);
  refresh();
  trench.live(() => later());
})();
