// SPDX-License-Identifier: MIT
// memscribe serve's page (docs/serve.md): every number on it is a field of
// the JSON that `memscribe report`, `timeline`, `window` or `leaks` prints
// for the same question; the server runs those commands. Each shown number
// keeps its exact value in data-value, for people who copy and for tests.
'use strict';

const token = new URLSearchParams(location.search).get('token') || '';
const $ = (id) => document.getElementById(id);
const state = { filter: { pid: '', thread: '' }, report: null, version: '', firstNs: 0, lastNs: 0, list: 'peak', window: null, at: null, zoom: null, totals: false, chunks: 0, siteCost: 'in-use' };
// A chart from the chunks' totals has a row per chunk: drawn so from this
// many chunks (a trace of 50 M events and more), the replay's 400 rows below.
const INDEX_CHART_CHUNKS = 100;
// How often the page asks whether the trace changed (a stat on the server):
// with record --live's 250 ms flush, a step shows within this plus the
// flush plus the queries (docs/serve.md, "Live").
const POLL_MS = 500;

// The charts' span of trace time: the whole trace, or the zoom (timeline
// --from --to); x(t) in 0..1000 across it.
function span(lastT) {
  const t0 = state.zoom ? state.zoom.from : 0;
  const t1 = Math.max(state.zoom ? state.zoom.to : Math.max(state.lastNs, lastT || 1), t0 + 1);
  return { t0, t1, x: (t) => (1000 * (t - t0)) / (t1 - t0) };
}

// The filters picked (process, thread) go with every query that takes
// them, as the commands' --pid and --thread; raw: a query about the whole
// trace (the filters' own choices).
const FILTERS = {
  report: ['pid', 'thread'], timeline: ['pid', 'thread'], window: ['pid', 'thread'], leaks: ['pid', 'thread'],
  tree: ['pid', 'thread'], histogram: ['pid', 'thread'], vmem: ['pid'], map: ['pid'],
};
async function apiText(name, params = {}, raw = false) {
  const asked = { ...params };
  for (const k of raw ? [] : FILTERS[name] || [])
    if (state.filter[k] && asked[k] === undefined) asked[k] = state.filter[k];
  const q = new URLSearchParams({ token, ...asked });
  const r = await fetch(`/api/${name}?${q}`, { cache: 'no-store' });
  const text = await r.text();
  if (!r.ok) throw new Error(`${name}: ${text.trim() || r.status}`);
  return text;
}
const api = async (name, params = {}, raw = false) => JSON.parse(await apiText(name, params, raw));

function showError(e) {
  $('error').hidden = !e;
  $('error').textContent = e ? String(e.message || e) : '';
}

const group = (n) => Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
function bytes(n) {
  if (n < 0) return `-${bytes(-n)}`; // a window's Impacting Size can be negative
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return u ? `${v.toFixed(1)} ${units[u]}` : `${n} B`;
}
// A time as the commands take it and a person reads it: seconds, to the
// nanosecond (10.410961111s, not 10410961111ns).
function timeArg(ns) {
  const n = Math.round(ns), frac = String(n % 1e9).padStart(9, '0').replace(/0+$/, '');
  return `${Math.floor(n / 1e9)}${frac ? `.${frac}` : ''}s`;
}
function seconds(ns) { return `${(ns / 1e9).toFixed(ns < 1e7 ? 6 : 3)} s`; }
// A figure report leaves null (no RSS sample in a short run) shows as "-".
function put(id, value, text) {
  const el = $(id);
  el.textContent = value === null || value === undefined ? '-' : text;
  el.dataset.value = value === null || value === undefined ? '' : String(value);
}

// The whole trace's figures: report's "total" (all processes), else its
// one process.
function scope(report) {
  return report.total || report.processes[0];
}

// The programs of several processes (report's per-program view: the
// processes of one executable merged), each with its own site lists.
const programs = (report) => (report.programs || []).filter((g) => g.processes > 1);

// Site lists are per process in report, and per program: the one picked,
// at first the process with the highest peak.
function pickedProcess(report) {
  const sel = $('proc');
  const progs = programs(report);
  const keys = report.processes.map((p) => String(p.pid)).concat(progs.map((g) => `prog:${g.exe}`));
  if (sel.dataset.pids !== keys.join(',')) {
    const keep = sel.value;
    sel.replaceChildren();
    for (const p of report.processes) {
      const o = document.createElement('option');
      o.value = String(p.pid);
      o.textContent = `${p.pid} ${p.exe || ''}`;
      sel.appendChild(o);
    }
    for (const g of progs) {
      const o = document.createElement('option');
      o.value = `prog:${g.exe}`;
      o.textContent = `program ${g.exe} (${g.processes} processes)`;
      sel.appendChild(o);
    }
    sel.dataset.pids = keys.join(',');
    const top = report.processes.reduce((a, p) => (p.peak_bytes > a.peak_bytes ? p : a), report.processes[0]);
    sel.value = keys.includes(keep) ? keep : String(top.pid);
  }
  if (sel.value.startsWith('prog:'))
    return progs.find((g) => `prog:${g.exe}` === sel.value) || report.processes[0];
  return report.processes.find((p) => String(p.pid) === sel.value) || report.processes[0];
}

// The programs table: largest peak first, as report's; click one for its sites.
function showPrograms(report) {
  const progs = programs(report).slice().sort((a, b) => b.peak_bytes - a.peak_bytes);
  $('programs-section').hidden = !progs.length;
  const tbody = $('programs').tBodies[0];
  tbody.replaceChildren();
  for (const g of progs) {
    const tr = document.createElement('tr');
    cell(tr, group(g.processes), g.processes);
    cell(tr, bytes(g.peak_bytes), g.peak_bytes);
    cell(tr, bytes(g.leaked_bytes), g.leaked_bytes);
    cell(tr, group(g.allocations), g.allocations);
    cell(tr, group(g.temporary), g.temporary);
    cell(tr, g.exe, undefined, 'where');
    tr.addEventListener('click', () => {
      $('proc').value = `prog:${g.exe}`;
      if (state.report) showSites(state.report);
    });
    tbody.appendChild(tr);
  }
}

// A row of tab buttons (#id's): the one clicked marked on, then pick(it).
function onTabs(id, pick) {
  const buttons = document.querySelectorAll(`#${id} button`);
  for (const b of buttons)
    b.addEventListener('click', () => {
      for (const o of buttons) o.classList.toggle('on', o === b);
      pick(b);
    });
}

function cell(tr, text, value, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (value !== undefined) td.dataset.value = String(value);
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

// A row's label: its frame of interest, the first of the program's own
// code, whose index memscribe's JSON gives beside each stack ("interest";
// the rule is memscribe's, in C: ana_interest.h).
function where(stack, interest) {
  return (stack || [])[interest || 0] || '?';
}

// Labels that tell rows apart: each its frame of interest, and where rows
// whose callers differ would read the same, the callers at which they part
// ("xmalloc < … < bfd_alloc", "< " alone for the next one): along a row's
// callers, each frame where it leaves another row of its label. No two rows
// of a table look alike unless their callers are the same.
function distinctLabels(items) {
  const labels = items.map((it) => where(it.stack, it.interest));
  const groups = new Map();
  labels.forEach((l, i) => groups.set(l, (groups.get(l) || []).concat(i)));
  const callers = (i) => (items[i].stack || []).slice((items[i].interest || 0) + 1);
  for (const idx of groups.values()) {
    if (idx.length < 2) continue;
    for (const i of idx) {
      const mine = callers(i), parts = new Set();
      for (const j of idx) {
        const theirs = callers(j);
        let d = 0;
        while (d < mine.length && d < theirs.length && mine[d] === theirs[d]) d++;
        if (d < mine.length) parts.add(d);
      }
      let prev = -1;
      for (const d of [...parts].sort((x, y) => x - y)) {
        labels[i] += `${d === prev + 1 ? ' < ' : ' < … < '}${mine[d]}`;
        prev = d;
      }
    }
  }
  return labels;
}

function stackRow(tbody, cells, stack, interest) {
  const tr = document.createElement('tr');
  for (const [text, value] of cells) cell(tr, text, value);
  cell(tr, where(stack, interest), undefined, 'where');
  tr.addEventListener('click', () => showStack(stack, interest));
  tr.site = { stack, interest };
  tbody.appendChild(tr);
}

// The rows of tbody (stackRow's) labelled apart (distinctLabels).
function labelRows(tbody) {
  const rows = [...tbody.rows].filter((tr) => tr.site);
  distinctLabels(rows.map((tr) => tr.site)).forEach((l, i) => {
    rows[i].lastChild.textContent = l;
    rows[i].lastChild.title = l;
  });
}

// A clicked site: its stack, and its frame of interest's callers and
// callees over every allocation (memscribe tree --focus F, --bottom-up).
function showStack(stack, interest) {
  $('stack').hidden = false;
  $('stack').replaceChildren();
  (stack || []).forEach((frame, i) => {
    const s = document.createElement('span');
    s.className = 'frame';
    s.textContent = frame;
    s.dataset.frame = frame;
    if (hasSource(frame)) {
      s.classList.add('has-source');
      s.addEventListener('click', () => showSource(frame));
    }
    $('stack').append(...(i ? ['\n', s] : [s]));
  });
  const f = where(stack, interest);
  $('source').hidden = true;
  if (hasSource(f)) showSource(f);
  if (!f || f === '?') return;
  const params = { focus: f, depth: '4', top: '5' };
  Promise.all([api('tree', { ...params, bottom: '1' }), api('tree', params)]).then(([up, down]) => {
    $('focus').hidden = false;
    $('focus-name').textContent = f;
    focusTree($('callers'), up);
    focusTree($('callees'), down);
    $('focus').dataset.function = f;
    showError(null);
  }).catch(showError);
}

// A frame that names its file and line ('f (file.c:12)'), whose source
// memscribe source can show.
const hasSource = (frame) => /\([^()]*:\d+\)$/.test(frame || '');

// The lines around a frame (memscribe source), its line marked; when the
// file cannot be shown (gone, changed, not the owner's), why, in its place.
function showSource(frame) {
  $('source').hidden = false;
  $('source-frame').textContent = frame;
  $('source').dataset.frame = frame;
  delete $('source').dataset.line;
  delete $('source').dataset.answered; // set to the frame once its answer is drawn
  // not the last frame's lines under this one's name while the server answers
  $('source-file').textContent = 'asking the server...';
  $('source-lines').replaceChildren();
  for (const s of $('stack').querySelectorAll('.frame'))
    s.classList.toggle('on', s.dataset.frame === frame);
  api('source', { frame, context: '6' }).then((src) => {
    if ($('source').dataset.frame !== frame) return; // another frame was picked meanwhile
    $('source-file').textContent = `${src.source}, line ${src.line}` +
      (src.changed ? ' (the file changed after the trace was written: its lines may have moved)' : '');
    const width = String(src.first_line + src.lines.length - 1).length;
    $('source-lines').replaceChildren(...src.lines.map((text, i) => {
      const n = src.first_line + i;
      const line = document.createElement('span');
      line.textContent = `${String(n).padStart(width)}  ${text}\n`;
      line.dataset.line = String(n);
      if (n === src.line) line.className = 'here';
      return line;
    }));
    $('source').dataset.line = String(src.line);
    $('source').dataset.answered = frame;
  }).catch((e) => {
    if ($('source').dataset.frame !== frame) return;
    $('source-file').textContent = `no source: ${String(e.message || e).replace(/^source: /, '')}`;
    $('source-lines').replaceChildren();
    $('source').dataset.answered = frame;
  });
}

// A focused tree as nested lists: each function with its bytes at the
// peak and its allocations (inclusive), in data-peak and data-allocs.
function focusTree(el, tree) {
  const node = (n) => {
    const li = document.createElement('li');
    li.textContent = `${n.function}: ${bytes(n.inclusive.peak_bytes)} at the peak, ${group(n.inclusive.allocations)} allocations`;
    li.dataset.peak = String(n.inclusive.peak_bytes);
    li.dataset.allocs = String(n.inclusive.allocations);
    if ((n.children || []).length) {
      const ul = document.createElement('ul');
      for (const c of n.children) ul.appendChild(node(c));
      li.appendChild(ul);
    }
    return li;
  };
  el.replaceChildren(...(tree.children || []).map(node));
}

function showSummary(report) {
  const s = scope(report);
  const sum = (k) => report.processes.reduce((a, p) => a + (p[k] || 0), 0);
  const get = (k) => (s && s[k] !== undefined ? s[k] : sum(k));
  put('peak', get('peak_bytes'), bytes(get('peak_bytes')));
  put('peak-time', get('peak_ns'), `at ${seconds(get('peak_ns'))}`);
  put('leaked', get('leaked_bytes'), bytes(get('leaked_bytes')));
  put('leaked-blocks', get('leaked_blocks'), `${group(get('leaked_blocks'))} blocks`);
  put('allocations', get('allocations'), group(get('allocations')));
  put('allocated', get('allocated_bytes'), `${bytes(get('allocated_bytes'))} allocated`);
  put('temporary', get('temporary'), group(get('temporary')));
  put('temporary-bytes', get('temporary_bytes'), bytes(get('temporary_bytes')));
  put('peak-rss', get('peak_rss_bytes'), bytes(get('peak_rss_bytes')));
  put('peak-rss-time', get('peak_rss_bytes') === null ? null : get('peak_rss_ns'), `at ${seconds(get('peak_rss_ns'))}`);
  const runNs = get('last_ns') - get('first_ns');
  put('rate', runNs > 0 ? Math.round(get('allocations') / (runNs / 1e9)) : 0,
    runNs > 0 ? `${group(get('allocations') / (runNs / 1e9))} allocations/s` : '');
  $('trace').textContent = report.file;
  // What the trace is (report's notes: sampled, attached, aggregated, a
  // --keep-last segment or run, cut short), as every command says it.
  const notes = report.trace_notes || [];
  $('notes').hidden = !notes.length;
  $('notes').replaceChildren(...notes.map((n) => {
    const div = document.createElement('div');
    div.textContent = n;
    return div;
  }));
  state.firstNs = Math.min(...report.processes.map((p) => p.first_ns));
  state.lastNs = Math.max(...report.processes.map((p) => p.last_ns));
}

// The process tree (report's process_table), children under their parent,
// in the order they started; click a process for its call sites.
function showProcesses(report) {
  const table = report.process_table || [];
  $('processes-section').hidden = table.length < 2;
  const tbody = $('processes').tBodies[0];
  tbody.replaceChildren();
  const pids = new Set(table.map((p) => p.pid));
  const kids = new Map();
  for (const p of table) {
    const up = pids.has(p.ppid) ? p.ppid : 0;
    if (!kids.has(up)) kids.set(up, []);
    kids.get(up).push(p);
  }
  const walk = (up, depth) => {
    for (const p of (kids.get(up) || []).sort((a, b) => a.start_ns - b.start_ns || a.image - b.image)) {
      const tr = document.createElement('tr');
      cell(tr, String(p.pid), p.pid);
      cell(tr, String(p.ppid), p.ppid);
      cell(tr, bytes(p.peak_bytes), p.peak_bytes);
      cell(tr, bytes(p.leaked_bytes), p.leaked_bytes);
      cell(tr, seconds(p.start_ns || 0), p.start_ns);
      cell(tr, p.end_ns === undefined || p.end_ns === null ? 'running' : seconds(p.end_ns), p.end_ns);
      // report's command column: argv shortened in the middle, the
      // program and the files kept (ana_argv.h); the whole in the title
      cell(tr, `${'  '.repeat(depth)}${p.command || (p.argv || []).join(' ') || p.exe}`, undefined, 'where')
        .title = (p.argv || []).join(' ');
      tr.addEventListener('click', () => {
        $('proc').value = String(p.pid);
        if (state.report) showSites(state.report);
      });
      tbody.appendChild(tr);
      if (p.pid !== up) walk(p.pid, depth + 1);
    }
  };
  walk(0, 0);
}

function showSites(report) {
  const tbody = $('sites').tBodies[0];
  tbody.replaceChildren();
  const list = (pickedProcess(report).top || {})[state.list] || [];
  for (const r of list)
    stackRow(tbody, [[bytes(r.peak_bytes), r.peak_bytes], [bytes(r.leaked_bytes), r.leaked_bytes],
      [group(r.allocations), r.allocations], [bytes(r.allocated_bytes), r.allocated_bytes],
      [group(r.temporary), r.temporary]], r.stack, r.interest);
  labelRows(tbody);
}

// Heap in use of all processes at each row's time: the timeline has a row
// per process and interval, summed here by time.
function series(timeline) {
  const at = new Map();
  for (const p of timeline.processes)
    for (const r of p.rows) {
      const a = at.get(r.time_ns) || { t: r.time_ns, heap: 0, heapMax: 0, rss: 0, allocs: 0 };
      a.heap += r.heap_bytes; a.heapMax += r.heap_max_bytes; a.rss += r.rss_bytes;
      a.allocs += r.allocations;
      at.set(r.time_ns, a);
    }
  return [...at.values()].sort((a, b) => a.t - b.t);
}

// A chart's axes: ticks at round values (1, 2 or 5 times a power of ten;
// bytes in the binary unit that fits), times from the trace's start in the
// unit of the span's end (s, ms, us, ns) with the step's decimals. Grid
// lines go into the SVG (bottom and height: where the value range sits in
// its viewBox), labels over it, each with its value in data-value so that
// what they claim can be checked against the drawing.
function niceStep(raw, steps = [1, 2, 5, 10]) {
  const mag = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-9)));
  return steps.map((m) => m * mag).find((s) => s >= raw);
}
function timeTicks(t0, t1) {
  const step = Math.max(1, niceStep((t1 - t0) / 7));
  const end = Math.max(Math.abs(t0), Math.abs(t1));
  const [unit, div] = end >= 1e9 ? ['s', 1e9] : end >= 1e6 ? ['ms', 1e6] : end >= 1e3 ? ['µs', 1e3] : ['ns', 1];
  const digits = Math.max(0, Math.ceil(-Math.log10(step / div) - 1e-9));
  const out = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) out.push([t, `${(t / div).toFixed(digits)} ${unit}`]);
  return out;
}
function valueTicks(vmax, kind) {
  let unit = 1, k = 0;
  const names = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  if (kind === 'bytes') while (vmax / unit >= 1024 && k < names.length - 1) { unit *= 1024; k++; }
  // 2.5 among the steps: at least three ticks (0, a step, two steps) for
  // any top, where 1, 2, 5 could leave two.
  // (whole numbers of a count: allocations are not had by the quarter)
  const step = Math.max(kind === 'count' ? 1 : 0, niceStep(vmax / unit / 4, [1, 2, 2.5, 5, 10]) * unit);
  const out = [];
  for (let k2 = 0; k2 * step <= vmax * (1 + 1e-9); k2++) {
    const v = k2 * step, n = +(v / unit).toPrecision(12);
    const count = n >= 1000 ? group(n) : String(n);
    out.push([v, v === 0 ? '0' : kind === 'bytes' ? `${n} ${names[k]}` : kind === 'count' ? count : `${count}/s`]);
  }
  return out;
}
function drawAxes(svg, t0, t1, vmax, kind, bottom, height) {
  const [, , vbw, vbh] = svg.getAttribute('viewBox').split(' ').map(Number);
  const ticks = $(`${svg.id}-ticks`);
  let grid = '';
  ticks.replaceChildren();
  const label = (cls, text, value, style) => {
    const s = document.createElement('span');
    s.className = cls;
    s.textContent = text;
    s.dataset.value = String(value);
    Object.assign(s.style, style);
    ticks.appendChild(s);
  };
  for (const [t, text] of timeTicks(t0, t1)) {
    const x = (vbw * (t - t0)) / (t1 - t0);
    grid += `<line class="grid" x1="${x.toFixed(2)}" x2="${x.toFixed(2)}" y1="0" y2="${vbh}"/>`;
    label('xtick', text, t, { left: `${(100 * x) / vbw}%` });
  }
  for (const [v, text] of valueTicks(vmax, kind)) {
    const y = bottom - (height * v) / vmax;
    grid += `<line class="grid" x1="0" x2="${vbw}" y1="${y.toFixed(2)}" y2="${y.toFixed(2)}"/>`;
    label('ytick', text, v, { top: `${(100 * y) / vbh}%` });
  }
  svg.insertAdjacentHTML('afterbegin', grid);
  ticks.dataset.bottom = String(bottom / vbh);
  ticks.dataset.height = String(height / vbh);
  ticks.dataset.max = String(vmax);
  ticks.dataset.t0 = String(t0);
  ticks.dataset.t1 = String(t1);
}

// Allocations (or temporary allocations) per second in each interval: the
// growth of the timeline's cumulative count (summed over the processes that
// have a row then; an ended process keeps its count, so it is carried on)
// over the interval. A timeline without the count (a sampled trace has no
// temporary allocations, rows from the chunks' totals none either) hides
// its chart.
function drawPerSecond(timeline, key, id) {
  const last = new Map(), pts = [];
  const times = [...new Set(timeline.processes.flatMap((p) => p.rows.map((r) => r.time_ns)))].sort((a, b) => a - b);
  const rows = new Map();
  let has = false;
  for (const p of timeline.processes)
    for (const r of p.rows) {
      rows.set(`${p.image}/${r.time_ns}`, r[key]);
      has = has || r[key] !== undefined;
    }
  const svg = $(id);
  svg.closest('.plot').hidden = !has;
  if (svg.closest('.plot').previousElementSibling) svg.closest('.plot').previousElementSibling.hidden = !has;
  if (!has) return;
  let prevT = 0, prevSum = 0;
  let first = true;
  for (const t of times) {
    for (const p of timeline.processes) {
      const v = rows.get(`${p.image}/${t}`);
      if (v !== undefined) last.set(p.image, v);
    }
    const sum = [...last.values()].reduce((a, b) => a + b, 0);
    if (first && state.zoom) prevSum = sum;
    first = false;
    const dt = t - prevT;
    pts.push({ t, count: sum - prevSum, rate: dt > 0 ? ((sum - prevSum) * 1e9) / dt : 0 });
    prevT = t;
    prevSum = sum;
  }
  // Zoomed, the first row is the range's start: what came before it is
  // no interval of the chart.
  if (state.zoom && pts.length) pts.shift();
  const { t0, t1, x: at } = span(times.length ? times[times.length - 1] : 1);
  const ymax = Math.max(1, ...pts.map((p) => p.rate));
  const x = (t) => at(t).toFixed(2), y = (v) => (78 - (74 * v) / ymax).toFixed(2);
  const line = pts.map((p) => `${x(p.t)},${y(p.rate)}`);
  svg.innerHTML = `<polygon class="rate" points="${x(pts.length ? pts[0].t : t0)},78 ${line.join(' ')} ${x(times.length ? times[times.length - 1] : t0)},78"/>`;
  svg.dataset.counts = pts.map((p) => p.count).join(',');
  drawAxes(svg, t0, t1, ymax, 'rate', 78, 74);
}

function drawChart(timeline) {
  const svg = $('chart');
  const pts = series(timeline);
  const { t0, t1, x } = span(pts.length ? pts[pts.length - 1].t : 1);
  const ymax = Math.max(1, ...pts.map((p) => Math.max(p.heapMax, p.rss)));
  const y = (v) => 255 - (250 * v) / ymax;
  const line = (k, cls) => `<polyline class="${cls}" points="${pts.map((p) => `${x(p.t).toFixed(2)},${y(p[k]).toFixed(2)}`).join(' ')}"/>`;
  svg.innerHTML = line('rss', 'rss') + line('heapMax', 'heapmax') + line('heap', 'heap') + '<rect class="sel" x="0" y="0" width="0" height="260" visibility="hidden"/>';
  svg.dataset.startNs = String(t0);
  svg.dataset.endNs = String(t1);
  // What is drawn, for people who copy and for tests: the rows' times and
  // heap in use (all processes), as timeline gives them.
  svg.dataset.times = pts.map((p) => p.t).join(',');
  svg.dataset.heap = pts.map((p) => p.heap).join(',');
  if (!state.zoom) {
    const last = pts.length ? pts[pts.length - 1] : { t: 0, heap: 0 };
    put('heap-now', last.heap, bytes(last.heap));
    put('heap-now-time', last.t, `at ${seconds(last.t)}`);
  }
  svg.dataset.maxBytes = String(ymax);
  drawAxes(svg, t0, t1, ymax, 'bytes', 255, 250);
  if (state.window) markWindow(state.window.from, state.window.to);
}

// The top sites' bytes in use over time, stacked (timeline --sites): each
// site a band between the sum of the sites below it and that sum plus it.
const palette = ['#2b6cb0', '#dd6b20', '#38a169', '#805ad5', '#d53f8c', '#319795', '#b7791f', '#718096'];
// The sites' series of each cost (timeline --site-cost), by its key in
// the answer: bytes in use, or counts so far.
const SITE_COSTS = { 'in-use': 'bytes', allocations: 'allocations', temporary: 'temporary' };
function drawSites(timeline) {
  const svg = $('sites-chart'), legend = $('sites-legend');
  const cost = timeline.site_cost || 'in-use', key = SITE_COSTS[cost];
  const times = timeline.site_times_ns || [];
  const sites = (timeline.sites || []).map((s) => ({ ...s, values: s[key] }));
  const { x: at } = span(times.length ? times[times.length - 1] : 1);
  const total = times.map((_, t) => sites.reduce((a, s) => a + s.values[t], 0));
  // a count's axis reaches 2 at least: whole-number ticks 0, 1, 2
  const ymax = Math.max(key === 'bytes' ? 1 : 2, ...total);
  const x = (t) => at(t).toFixed(2), y = (v) => (195 - (190 * v) / ymax).toFixed(2);
  const below = times.map(() => 0);
  let shapes = '';
  sites.forEach((s, k) => {
    const top = below.map((b, t) => b + s.values[t]);
    const pts = times.map((t, i) => `${x(t)},${y(top[i])}`).concat(
      times.map((t, i) => `${x(t)},${y(below[i])}`).reverse());
    shapes += `<polygon fill="${palette[k % palette.length]}" points="${pts.join(' ')}"/>`;
    top.forEach((v, i) => { below[i] = v; });
  });
  svg.innerHTML = shapes;
  svg.dataset.maxValue = String(ymax);
  svg.dataset.cost = cost;
  const { t0, t1 } = span(times.length ? times[times.length - 1] : 1);
  drawAxes(svg, t0, t1, ymax, key === 'bytes' ? 'bytes' : 'count', 195, 190);
  legend.replaceChildren();
  const labels = distinctLabels(sites);
  sites.forEach((s, k) => {
    const li = document.createElement('li');
    const sw = document.createElement('span');
    sw.className = 'swatch';
    sw.style.background = palette[k % palette.length];
    li.appendChild(sw);
    const most = Math.max(0, ...s.values);
    li.appendChild(document.createTextNode(key === 'bytes' ? `${bytes(most)} at most: ${labels[k]}`
      : `${group(most)} ${cost === 'temporary' ? 'temporary ' : ''}allocation${most === 1 ? '' : 's'}: ${labels[k]}`));
    li.dataset.values = s.values.join(',');
    li.dataset.label = labels[k];
    li.addEventListener('click', () => showStack(s.stack, s.interest));
    legend.appendChild(li);
  });
}

function markWindow(from, to) {
  const svg = $('chart'), start = Number(svg.dataset.startNs || 0);
  const len = Math.max(1, Number(svg.dataset.endNs || 1) - start);
  const rect = svg.querySelector('.sel');
  if (!rect) return;
  const a = Math.max(0, Math.min(1000, (1000 * (from - start)) / len));
  const b = Math.max(0, Math.min(1000, (1000 * (to - start)) / len));
  rect.setAttribute('x', String(a));
  rect.setAttribute('width', String(Math.max(1, b - a)));
  rect.setAttribute('visibility', 'visible');
}

// A drag on the chart picks [from, to] in ns of trace time.
function chartTime(ev) {
  const svg = $('chart'), box = svg.getBoundingClientRect();
  const f = Math.min(1, Math.max(0, (ev.clientX - box.left) / box.width));
  const start = Number(svg.dataset.startNs || 0);
  return Math.round(start + f * (Number(svg.dataset.endNs || 0) - start));
}

// Zoom the charts into the window (down to the trace's time unit: single
// events), or back out to the whole trace.
$('zoom-in').addEventListener('click', () => {
  if (!state.window || state.window.to <= state.window.from) return;
  state.zoom = { from: state.window.from, to: state.window.to };
  loadCharts().catch(showError);
});
$('zoom-out').addEventListener('click', () => {
  state.zoom = null;
  loadCharts().catch(showError);
});
let dragFrom = null;
$('chart').addEventListener('mousedown', (ev) => { dragFrom = chartTime(ev); ev.preventDefault(); });
$('chart').addEventListener('mousemove', (ev) => {
  if (dragFrom === null) return;
  const t = chartTime(ev);
  markWindow(Math.min(dragFrom, t), Math.max(dragFrom, t));
});
window.addEventListener('mouseup', (ev) => {
  if (dragFrom === null) return;
  const t = chartTime(ev), from = Math.min(dragFrom, t), to = Math.max(dragFrom, t);
  dragFrom = null;
  if (to <= from) return;
  $('from').value = timeArg(from);
  $('to').value = timeArg(to);
  loadWindow().catch(showError);
});
$('window-form').addEventListener('submit', (ev) => { ev.preventDefault(); loadWindow().catch(showError); });

async function loadWindow() {
  const from = $('from').value.trim(), to = $('to').value.trim();
  const params = { top: '20' };
  if (from) params.from = from;
  if (to) params.to = to;
  const w = await api('window', params);
  state.window = { from: w.from_ns, to: w.to_ns };
  markWindow(w.from_ns, w.to_ns);
  showClasses($('window-classes'), w.processes, { from: w.from_ns, to: w.to_ns });
  drawFlame(await api('window', { ...params, tree: '1', top: '50' }));
  showVmem(await api('vmem', { from: String(w.from_ns) + 'ns', to: String(w.to_ns) + 'ns', top: '20' }));
  showImpact($('window-rows'), w.rows, (r) => r.stack, (r) => r.interest);
  // Said last: everything of this window is on the page.
  $('window-classes').dataset.from = String(w.from_ns);
  $('window-classes').dataset.to = String(w.to_ns);
  showError(null);
  if ($('tree-scope').value === 'window') loadTree().catch(showError);
}

// The window's commit lifetimes (vmem), shown where vmem has groups.
function showVmem(v) {
  $('vmem-section').hidden = !(v.groups || []).length;
  showClasses($('vmem-classes'), v.processes || []);
  showImpact($('vmem-groups'), v.groups || [], (g) => g.group, (g) => g.interest);
}

// WPA's classes of each process (window's and vmem's "processes"): counts,
// with each class's bytes in data-bytes, and Impacting Size.
function showClasses(table, processes, win) {
  const tbody = table.tBodies[0];
  tbody.replaceChildren();
  for (const p of win ? windowProcesses(processes, win) : processes) {
    const tr = document.createElement('tr');
    cell(tr, p.label || String(p.pid), p.label ? `prog:${p.exe}` : p.pid);
    for (const k of ['aifi', 'aifo', 'aofi', 'aofo'])
      cell(tr, `${group(p[k])} (${bytes(p[`${k}_bytes`])})`, p[k]).dataset.bytes = String(p[`${k}_bytes`]);
    cell(tr, bytes(p.impacting_size), p.impacting_size);
    tbody.appendChild(tr);
  }
}

// A window's processes as its table shows them: only those alive in it
// (report's first_ns and last_ns reach into it), and the processes of one
// executable summed into one row (a build's cc1s), said how many.
const CLASS_KEYS = ['aifi', 'aifo', 'aofi', 'aofo', 'aifi_bytes', 'aifo_bytes', 'aofi_bytes', 'aofo_bytes', 'impacting_size'];
function windowProcesses(processes, win) {
  const info = new Map(((state.report || {}).processes || []).map((p) => [p.pid, p]));
  const groups = new Map(); // by executable, in the window's order
  for (const p of processes) {
    const r = info.get(p.pid);
    if (r && (r.first_ns > win.to || r.last_ns < win.from)) continue;
    const key = (r && r.exe) || `pid ${p.pid}`;
    groups.set(key, (groups.get(key) || []).concat(p));
  }
  const alive = [...groups.values()].reduce((n, g) => n + g.length, 0);
  windowNote(processes.length - alive);
  return [...groups].map(([exe, same]) => {
    if (same.length < 2) return same[0];
    const sum = { exe, label: `${exe} (${same.length} processes)` };
    for (const k of CLASS_KEYS) sum[k] = same.reduce((a, q) => a + q[k], 0);
    return sum;
  });
}
function windowNote(left) {
  $('window-classes-note').textContent = left ? `${group(left)} processes not alive in the window are left out` : '';
  $('window-classes-note').dataset.left = String(left);
}

// Rows of Impacting Type, Count, Size and Impacting Size with their stacks
// (window's rows, vmem's groups).
function showImpact(table, rows, stackOf, interestOf) {
  const tbody = table.tBodies[0];
  tbody.replaceChildren();
  for (const r of rows)
    stackRow(tbody, [[r.impacting_type, r.impacting_type], [group(r.count), r.count],
      [bytes(r.size), r.size], [bytes(r.impacting_size), r.impacting_size]], stackOf(r), interestOf(r));
  labelRows(tbody);
}

// The window's call tree (window --tree) as a flame graph, root on top:
// each function as wide as the bytes allocated under it in the window.
function drawFlame(tree) {
  const svg = $('window-flame'), rowH = 16, maxDepth = 40;
  const total = tree.inclusive.size || 1;
  let out = '', depth = 0;
  const walk = (node, x0, d) => {
    const w = (1000 * node.inclusive.size) / total;
    if (w < 0.5 || d >= maxDepth) return;
    depth = Math.max(depth, d + 1);
    const label = node.function.replace(/&/g, '&amp;').replace(/</g, '&lt;');
    out += `<g><rect x="${x0.toFixed(2)}" y="${d * rowH}" width="${w.toFixed(2)}" height="${rowH - 1}"` +
      ` data-size="${node.inclusive.size}" data-count="${node.inclusive.count}"><title>${label}: ` +
      `${bytes(node.inclusive.size)} in ${group(node.inclusive.count)} allocations</title></rect>`;
    if (w > 60) out += `<text x="${(x0 + 3).toFixed(2)}" y="${d * rowH + 12}">${label.slice(0, Math.floor(w / 7))}</text>`;
    out += '</g>';
    let x = x0;
    for (const c of node.children || []) {
      walk(c, x, d + 1);
      x += (1000 * c.inclusive.size) / total;
    }
  };
  walk(tree, 0, 0);
  svg.setAttribute('viewBox', `0 0 1000 ${Math.max(1, depth) * rowH}`);
  svg.style.height = `${Math.max(1, depth) * rowH}px`;
  svg.innerHTML = out;
  svg.hidden = false;
  svg.dataset.size = String(tree.inclusive.size);
  $('window-flame-info').textContent = `${bytes(tree.inclusive.size)} allocated in the window, in ${group(tree.inclusive.count)} allocations, by call path (memscribe window --tree)`;
}

$('proc').addEventListener('change', () => { if (state.report) showSites(state.report); });
onTabs('site-tabs', (b) => {
  state.list = b.dataset.list;
  if (state.report) showSites(state.report);
});

async function loadLeaks() {
  const v = Number($('at').value);
  const params = { top: '20' };
  if (state.totals) params.index = '1';
  if (v < 1000) {
    state.at = Math.round(state.firstNs + ((state.lastNs - state.firstNs) * v) / 1000);
    params.at = `${state.at}ns`;
  } else {
    state.at = null;
  }
  const l = await api('leaks', params);
  put('at-label', state.at === null ? '' : state.at, state.at === null ? 'the end' : seconds(state.at));
  const total = l.processes.reduce((a, p) => [a[0] + p.leaked_bytes, a[1] + p.leaked_blocks], [0, 0]);
  put('leaks-total', total[0], `${bytes(total[0])} in ${group(total[1])} blocks`);
  $('leaks-total').dataset.blocks = String(total[1]);
  $('leaks-total').dataset.at = state.at === null ? '' : String(state.at);
  drawLeakClasses(l.processes);
  const tbody = $('leaks').tBodies[0];
  tbody.replaceChildren();
  for (const s of l.stacks)
    stackRow(tbody, [[bytes(s.leaked_bytes), s.leaked_bytes], [group(s.leaked_blocks), s.leaked_blocks]], s.stack,
      s.interest);
  labelRows(tbody);
  // The map of the same moment; a trace without mappings has none.
  try {
    $('map').innerHTML = await apiText('map', params.at ? { at: params.at } : {});
  } catch (e) {
    $('map').textContent = 'no map: ' + e.message;
  }
  $('map').dataset.at = state.at === null ? '' : String(state.at);
  showError(null);
}
// memcheck's classes of the blocks live at the end (record --reach's scan
// at exit), summed over the processes scanned: a bar per class, as wide as
// its bytes, its bytes and blocks in data-*. None for a moment before the
// end, nor for a trace without the scan.
const LEAK_CLASSES = [['definitely_lost', 'definitely lost'], ['indirectly_lost', 'indirectly lost'],
  ['possibly_lost', 'possibly lost'], ['still_reachable', 'still reachable'], ['unclassed', 'not classed']];
function drawLeakClasses(processes) {
  const scanned = processes.filter((p) => p.reach && p.reach.status === 'scanned');
  $('leak-classes').hidden = !scanned.length;
  if (!scanned.length) return;
  const sums = LEAK_CLASSES.map(([k]) => ['bytes', 'blocks'].map((u) => scanned.reduce((a, p) => a + p.reach[`${k}_${u}`], 0)));
  const most = Math.max(1, ...sums.map(([b]) => b));
  const esc = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  $('leak-classes-chart').innerHTML = LEAK_CLASSES.map(([k, label], i) => {
    const [b, n] = sums[i], y = 5 + 29 * i;
    return `<rect x="200" y="${y}" width="${((600 * b) / most).toFixed(2)}" height="22" fill="${palette[i % palette.length]}" ` +
      `data-class="${k}" data-bytes="${b}" data-blocks="${n}"/>` +
      `<text x="190" y="${y + 16}" text-anchor="end">${esc(label)}</text>` +
      `<text x="${(205 + (600 * b) / most).toFixed(2)}" y="${y + 16}">${esc(`${bytes(b)} in ${group(n)} block${n === 1 ? '' : 's'}`)}</text>`;
  }).join('');
}

let leakTimer = null;
$('at').addEventListener('input', () => {
  clearTimeout(leakTimer);
  leakTimer = setTimeout(() => loadLeaks().catch(showError), 200);
});

// The three charts, of one timeline: about 400 rows over the whole trace
// or the zoom (at least 1 us apart over the whole trace, 1 ns zoomed); a
// large trace with chunk totals (format 1.10) draws the whole trace from
// them, a row at each chunk's end (timeline --index: no event read).
async function loadCharts() {
  const z = state.zoom;
  const len = z ? z.to - z.from : Math.max(1, state.lastNs);
  const interval = `${Math.max(z ? 1 : 1000, Math.round(len / 400))}ns`;
  const index = state.totals && state.chunks >= INDEX_CHART_CHUNKS && !z;
  // at most 1000 rows a process, whatever the span (a growing trace's is 0)
  // or the chunks (the index's: every k-th chunk's end past 1000 of them)
  const params = index ? { sites: '8', index: '1', points: '1000' } : { interval, sites: '8', points: '1000' };
  params.site_cost = state.siteCost;
  if (z) {
    params.from = `${z.from}ns`;
    params.to = `${z.to}ns`;
  }
  const timeline = await api('timeline', params);
  const chart = $('chart');
  chart.dataset.interval = index ? 'index' : timeline.interval_ns ? `${timeline.interval_ns}ns` : interval;
  chart.dataset.zoomFrom = z ? String(z.from) : '';
  chart.dataset.zoomTo = z ? String(z.to) : '';
  drawChart(timeline);
  drawPerSecond(timeline, 'allocations', 'rate-chart');
  drawPerSecond(timeline, 'temporary', 'temp-chart');
  // no temporary count (a sampled trace's, or the totals'): no such sites
  $('sites-cost-tabs').querySelector('[data-cost=temporary]').hidden = $('temp-chart').closest('.plot').hidden &&
    state.siteCost !== 'temporary';
  drawSites(timeline);
  $('zoom-out').disabled = !z;
  chart.dataset.drawn = String(Number(chart.dataset.drawn || 0) + 1);
}

// Sizes: histogram's classes summed over the processes, a bar per class
// from the smallest to the largest allocated, as many allocations (or
// bytes) tall; each bar keeps its class and both numbers in data-*.
const histView = { by: 'count', data: null };
async function loadHistogram() {
  histView.data = await api('histogram');
  drawHistogram();
}
function sizeLabel(n) {
  const units = ['', 'K', 'M', 'G', 'T', 'P', 'E'];
  let u = 0;
  while (n >= 1024 && n % 1024 === 0 && u < units.length - 1) { n /= 1024; u++; }
  return `${n}${units[u]}`;
}
function drawHistogram() {
  const svg = $('hist');
  const classes = new Map();
  for (const r of histView.data || []) {
    const c = classes.get(r.min_size) || { min: r.min_size, max: r.max_size, count: 0, bytes: 0 };
    c.count += r.count;
    c.bytes += r.bytes;
    classes.set(r.min_size, c);
  }
  const bars = [...classes.values()].sort((a, b) => a.min - b.min);
  const top = Math.max(1, ...bars.map((c) => c[histView.by]));
  const w = 1000 / Math.max(1, bars.length), h = 180;
  let out = '';
  bars.forEach((c, i) => {
    const bh = (h * c[histView.by]) / top, x = i * w;
    const label = c.min === c.max ? sizeLabel(c.min) : `${sizeLabel(c.min)}-${sizeLabel(c.max)}`;
    out += `<g><rect x="${(x + 1).toFixed(1)}" y="${(h - bh).toFixed(1)}" width="${Math.max(1, w - 2).toFixed(1)}" height="${bh.toFixed(1)}"` +
      ` data-min="${c.min}" data-max="${c.max}" data-count="${c.count}" data-bytes="${c.bytes}">` +
      `<title>${label} B: ${group(c.count)} allocations, ${bytes(c.bytes)}</title></rect>` +
      `<text x="${(x + w / 2).toFixed(1)}" y="${h + 14}" text-anchor="middle">${label}</text>` +
      (bh > 0 ? `<text x="${(x + w / 2).toFixed(1)}" y="${Math.max(10, h - bh - 3).toFixed(1)}" text-anchor="middle">` +
        `${histView.by === 'count' ? group(c.count) : bytes(c.bytes)}</text>` : '') + '</g>';
  });
  svg.innerHTML = out || '<text x="10" y="20">no heap block in this trace</text>';
  svg.dataset.drawn = String(Number(svg.dataset.drawn || 0) + 1);
}
onTabs('sites-cost-tabs', (b) => {
  state.siteCost = b.dataset.cost;
  loadCharts().catch(showError);
});
onTabs('hist-tabs', (b) => {
  histView.by = b.dataset.by;
  drawHistogram();
});

// Call trees: memscribe tree (top-down, bottom-up, or a function's callers
// and callees: --focus F, with --bottom-up for the callers), each cost its
// own order (--sort); of the window, window --tree. The whole answer is
// kept (every level, TREE_TOP children a node) and each node's children
// drawn as it is opened, so that opening a node or filtering asks the
// server nothing.
const TREE_TOP = 100;
// A filter draws every path that holds a match, open: at most this many rows.
const TREE_FILTER_ROWS = 2000;
const TREE_COSTS = {
  trace: [['peak', 'peak_bytes', 'at the peak', bytes], ['leaked', 'leaked_bytes', 'leaked', bytes],
    ['allocations', 'allocations', 'allocations', group], ['bytes', 'allocated_bytes', 'allocated', bytes],
    ['temporary', 'temporary', 'temporary', group]],
  window: [['impacting', 'impacting_size', 'Impacting Size', bytes], ['size', 'size', 'allocated in the window', bytes],
    ['count', 'count', 'allocations', group]],
};
const treeView = { mode: 'down', scope: 'trace', data: null, asked: '', flat: false };
// The functions' list (tree --flat): this many, the costliest first.
const TREE_FLAT_TOP = 200;

function treeCostChoices() {
  const sel = $('tree-cost'), scopeNow = $('tree-scope').value;
  if (sel.dataset.scope === scopeNow) return;
  const keep = sel.value;
  sel.replaceChildren();
  for (const [key, , label] of TREE_COSTS[scopeNow]) {
    const o = document.createElement('option');
    o.value = key;
    o.textContent = label;
    sel.appendChild(o);
  }
  sel.dataset.scope = scopeNow;
  if (TREE_COSTS[scopeNow].some((c) => c[0] === keep)) sel.value = keep;
}

async function loadTree() {
  treeCostChoices();
  const mode = treeView.mode, focus = $('tree-focus').value.trim();
  const inWindow = $('tree-scope').value === 'window';
  const focused = mode === 'callers' || mode === 'callees';
  const info = $('tree-info');
  if (inWindow && !state.window) return treeMessage('pick a window first: drag across the chart');
  if (inWindow && focused) return treeMessage("a window's tree is top-down or bottom-up (window --tree has no --focus)");
  if (focused && !focus) return treeMessage('type a function, or pick one with "callers · callees" on a row');
  if (inWindow && mode === 'flat') return treeMessage("the functions' list is of the whole trace (window --tree has no --flat)");
  const params = { depth: '256', top: String(TREE_TOP), sort: $('tree-cost').value };
  if (mode === 'flat') Object.assign(params, { flat: '1', top: String(TREE_FLAT_TOP) });
  if (mode === 'up' || mode === 'callers') params.bottom = '1';
  if (focused) params.focus = focus;
  if (inWindow) Object.assign(params, { tree: '1', from: `${state.window.from}ns`, to: `${state.window.to}ns` });
  const asked = JSON.stringify([inWindow, params]);
  treeView.asked = asked;
  info.textContent = 'asking the server...';
  const t = await api(inWindow ? 'window' : 'tree', params);
  if (treeView.asked !== asked) return; // a newer question is under way
  treeView.data = t;
  treeView.scope = inWindow ? 'window' : 'trace';
  treeView.params = params;
  // A tree of several processes has a node per program (or process) at its
  // first level, unless focused: no function of which to ask callers.
  treeView.perProcess = !inWindow && !focused && mode !== 'flat' && (state.report ? state.report.processes.length > 1 : false);
  treeView.flat = mode === 'flat';
  drawTree();
  const cmd = inWindow ? `memscribe window --tree --from ${params.from} --to ${params.to}${params.bottom ? ' --bottom-up' : ''}`
    : `memscribe tree${params.flat ? ' --flat' : ''}${params.bottom ? ' --bottom-up' : ''}${focused ? ` --focus '${focus}'` : ''} --sort ${params.sort}`;
  info.textContent = params.flat ? `${cmd} --top ${params.top}: every function once, its inclusive and self costs; "callers · callees" on a row for its own`
    : `${cmd} --depth 256 --top ${TREE_TOP}: every level, the ${TREE_TOP} largest children of each node`;
  showError(null);
}

function treeMessage(text) {
  treeView.data = null;
  $('tree').tBodies[0].replaceChildren();
  $('tree-info').textContent = text;
}

// One row: the node's function (indented by its depth, a mark to open it),
// its inclusive costs; data-path holds the functions from the root.
function treeRow(node, path, depth) {
  const costs = TREE_COSTS[treeView.scope];
  const tr = document.createElement('tr');
  const kids = (node.children || []).length;
  tr.dataset.path = JSON.stringify(path);
  tr.dataset.depth = String(depth);
  tr.dataset.fn = node.function;
  const td = cell(tr, '', undefined, 'fn');
  td.style.paddingLeft = `${0.4 + depth * 1.1}em`;
  const toggle = document.createElement('span');
  toggle.className = 'toggle';
  toggle.textContent = kids ? '▸' : '';
  const name = document.createElement('span');
  name.className = 'name';
  name.textContent = node.function;
  td.append(toggle, name);
  if (node.place) {
    const pl = document.createElement('span');
    pl.className = 'place';
    pl.textContent = ` (${node.place})`;
    td.appendChild(pl);
  }
  if (treeView.scope === 'trace' && depth > (treeView.perProcess ? 1 : 0)) {
    const a = document.createElement('a');
    a.className = 'focus';
    a.href = '#';
    a.textContent = 'callers · callees';
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      ev.stopPropagation();
      $('tree-focus').value = node.function;
      setTreeMode('callers');
    });
    td.appendChild(a);
  }
  td.title = node.function;
  for (const [, key, , fmt] of costs) cell(tr, fmt(node.inclusive[key]), node.inclusive[key]);
  if (treeView.flat) for (const [, key, , fmt] of costs) cell(tr, fmt(node.self[key]), node.self[key]);
  tr.addEventListener('click', () => toggleTree(tr, node));
  tr.treeNode = node;
  return tr;
}

function toggleTree(tr, node) {
  const depth = Number(tr.dataset.depth);
  if (tr.dataset.open === '1') {
    while (tr.nextSibling && Number(tr.nextSibling.dataset.depth) > depth) tr.nextSibling.remove();
    tr.dataset.open = '0';
    tr.firstChild.firstChild.textContent = (node.children || []).length ? '▸' : '';
    return;
  }
  if (!(node.children || []).length) return;
  const path = JSON.parse(tr.dataset.path);
  let after = tr;
  for (const c of node.children) {
    const row = treeRow(c, path.concat(c.function), depth + 1);
    after.after(row);
    after = row;
  }
  tr.dataset.open = '1';
  tr.firstChild.firstChild.textContent = '▾';
}

function drawTree() {
  const t = treeView.data;
  if (!t) return;
  const head = $('tree').tHead.rows[0];
  head.replaceChildren();
  const costs = TREE_COSTS[treeView.scope];
  for (const h of ['function'].concat(costs.map((c) => c[2]), treeView.flat ? costs.map((c) => `self: ${c[2]}`) : [])) {
    const th = document.createElement('th');
    th.textContent = h;
    head.appendChild(th);
  }
  const tbody = $('tree').tBodies[0];
  tbody.replaceChildren();
  const filter = $('tree-filter').value.trim().toLowerCase();
  $('tree').dataset.filter = filter ? `${$('tree-filter-by').value}:${filter}` : '';
  if (!filter) {
    const root = treeRow(t, [], 0);
    tbody.appendChild(root);
    toggleTree(root, t);
  } else {
    drawFiltered(t, filter, tbody);
  }
  $('tree').dataset.drawn = String(Number($('tree').dataset.drawn || 0) + 1);
}

// The paths that hold a function matching the filter (by its name, or by
// the files or modules its frames come from: the nodes' "files" and
// "modules"), open down to each match.
function drawFiltered(t, filter, tbody) {
  const by = $('tree-filter-by').value;
  const hit = by === 'function' ? (n) => n.function.toLowerCase().includes(filter)
    : (n) => (n[by] || []).some((w) => w.toLowerCase().includes(filter));
  const keep = new Map();
  const mark = (n) => {
    let k = hit(n);
    for (const c of n.children || []) k = mark(c) || k;
    keep.set(n, k);
    return k;
  };
  mark(t);
  let rows = 0;
  const walk = (n, path, depth) => {
    if (!keep.get(n) || rows >= TREE_FILTER_ROWS) return;
    const tr = treeRow(n, path, depth);
    if (hit(n)) tr.classList.add('match');
    tbody.appendChild(tr);
    rows++;
    const open = (n.children || []).filter((c) => keep.get(c));
    if (open.length) {
      tr.dataset.open = '1';
      tr.firstChild.firstChild.textContent = '▾';
    }
    for (const c of open) walk(c, path.concat(c.function), depth + 1);
  };
  walk(t, [], 0);
  $('tree-info').dataset.rows = String(rows);
  $('tree-info').dataset.cap = String(TREE_FILTER_ROWS);
  if (rows >= TREE_FILTER_ROWS) $('tree-info').textContent = `the first ${TREE_FILTER_ROWS} rows that lead to a match`;
}

function setTreeMode(mode) {
  treeView.mode = mode;
  for (const o of document.querySelectorAll('#tree-tabs button')) o.classList.toggle('on', o.dataset.mode === mode);
  loadTree().catch(showError);
}
for (const b of document.querySelectorAll('#tree-tabs button'))
  b.addEventListener('click', () => setTreeMode(b.dataset.mode));
$('tree-scope').addEventListener('change', () => loadTree().catch(showError));
$('tree-cost').addEventListener('change', () => loadTree().catch(showError));
$('tree-focus').addEventListener('change', () => loadTree().catch(showError));
let treeFilterTimer = null;
$('tree-filter').addEventListener('input', () => {
  clearTimeout(treeFilterTimer);
  treeFilterTimer = setTimeout(drawTree, 200);
});
$('tree-filter-by').addEventListener('change', drawTree);

// Two runs compared (serve --base OLD NEW): diff's totals, its sites by the
// change of the cost picked, and the differential flame graph of that cost.
// The costs are the trees' (TREE_COSTS.trace): diff names them alike.
const COMPARE = Object.fromEntries(TREE_COSTS.trace.map(([k, field, label, fmt]) => [k, [field, label, fmt]]));
const compareView = { sort: 'peak' };
const signed = (fmt, v) => (v > 0 ? `+${fmt(v)}` : fmt(v));
async function loadCompare() {
  const sort = compareView.sort, [key, , fmt] = COMPARE[sort];
  const [d, svg] = await Promise.all([api('diff', { sort, top: '20' }, true),
    apiText('diffflame', { cost: sort, width: '1000' }, true)]);
  if (compareView.sort !== sort) return;
  $('compare-section').hidden = false;
  $('compare-base').textContent = d.base.trace;
  const total = $('compare-total').tBodies[0];
  total.replaceChildren();
  for (const [k, [f, label, ff]] of Object.entries(COMPARE)) {
    const tr = document.createElement('tr');
    tr.dataset.cost = k;
    cell(tr, label, undefined, 'where');
    cell(tr, ff(d.total[`${f}_base`]), d.total[`${f}_base`]);
    cell(tr, ff(d.total[`${f}_new`]), d.total[`${f}_new`]);
    const c = d.total[`${f}_change`];
    cell(tr, signed(ff, c), c, c > 0 ? 'grew' : c < 0 ? 'shrank' : '');
    total.appendChild(tr);
  }
  const tbody = $('compare-sites').tBodies[0];
  tbody.replaceChildren();
  for (const r of d.rows) {
    const c = r[`${key}_change`];
    stackRow(tbody, [[signed(fmt, c), c], [fmt(r[`${key}_base`]), r[`${key}_base`]], [fmt(r[`${key}_new`]), r[`${key}_new`]],
      [signed(group, r.allocations_change), r.allocations_change]], r.site, r.interest);
    tbody.lastChild.cells[0].className = c > 0 ? 'grew' : c < 0 ? 'shrank' : '';
  }
  labelRows(tbody);
  // The graph drawn in the page, without its own script and style (the
  // page's rules allow neither): frames, names and titles, the page's CSS.
  const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
  for (const el of doc.querySelectorAll('script, style, .button')) el.remove();
  $('compare-flame').replaceChildren(document.importNode(doc.documentElement, true));
  $('compare-section').dataset.sort = sort;
  $('compare-section').dataset.drawn = String(Number($('compare-section').dataset.drawn || 0) + 1);
}
onTabs('compare-tabs', (b) => {
  compareView.sort = b.dataset.sort;
  loadCompare().catch(showError);
});

// The filters' choices: the trace's processes (report's, unfiltered) and
// the threads that allocated (window --by thread over the whole trace).
async function fillFilters(report) {
  const pick = (sel, items) => {
    const keep = sel.value, key = items.map((i) => i[0]).join(',');
    if (sel.dataset.keys === key) return;
    sel.replaceChildren(new Option('all', ''), ...items.map(([v, text]) => new Option(text, v)));
    sel.dataset.keys = key;
    sel.value = items.some((i) => i[0] === keep) ? keep : '';
  };
  pick($('f-pid'), report.processes.map((p) => [String(p.pid), `${p.pid} ${p.exe || ''}`]));
  const w = await api('window', { by: 'thread', top: '200' }, true);
  const seen = new Map();
  for (const r of w.rows || []) if (r.tid !== undefined) seen.set(r.tid, r.pid);
  pick($('f-thread'), [...seen].sort((a, b) => a[1] - b[1] || a[0] - b[0])
    .map(([tid, pid]) => [String(tid), `${tid} (process ${pid})`]));
  $('filters').dataset.filled = String(Number($('filters').dataset.filled || 0) + 1);
}
for (const id of ['f-pid', 'f-thread'])
  $(id).addEventListener('change', () => {
    state.filter = { pid: $('f-pid').value, thread: $('f-thread').value };
    loadAll().catch(showError);
  });

async function loadAll() {
  // The server runs each query in a process of its own: the charts (their
  // span from the status, or the latest report) are asked with report, the
  // live blocks and the window after it (report checks the index they may
  // answer from), and all come as they are done.
  // A span of 0 (a trace being written whose status came before its first
  // events: record --live) is no span: charts over it at 1 us would ask a
  // growing trace for gigabytes of rows. Then they wait for the report's.
  let charts = state.lastNs ? loadCharts() : null;
  if (charts) charts.catch(() => {}); // its error is shown below, once
  const report = await api('report', state.totals ? { top: '20', index: '1' } : { top: '20' });
  showReport(report);
  if (!state.filter.pid && !state.filter.thread) fillFilters(report).catch(showError);
  if (!charts) charts = loadCharts();
  await Promise.all([charts, loadLeaks(), loadHistogram(), state.window ? loadWindow() : null,
    state.compare ? loadCompare() : null]);
  $('status').textContent = report.incomplete ? 'being written (or cut short)' : 'complete';
  $('status').dataset.complete = String(!report.incomplete);
  document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
  showError(null);
  loadTree().catch(showError); // the tree as it is now; a large trace's may take a while
  if (state.totals) checkTotals(report).catch(showError);
}

function showReport(report) {
  state.report = report;
  showSummary(report);
  showSites(report);
  showProcesses(report);
  showPrograms(report);
}

// The first view from the chunks' totals is checked once shown: report
// replays every event (and holds the summaries and the totals against
// them: a failed check is its error), and where its answer differs the
// page says so and shows the replay's.
async function checkTotals(fromTotals) {
  let replayed;
  try {
    replayed = await api('report', { top: '20' });
  } catch (e) {
    $('status').dataset.checked = 'disagree';
    throw e;
  }
  const same = JSON.stringify(replayed) === JSON.stringify(fromTotals);
  $('status').dataset.checked = same ? 'agree' : 'disagree';
  if (!same) {
    showReport(replayed);
    showError(new Error("the trace's chunk totals disagree with its events: the numbers shown are the replay's"));
  }
}

// Follow the trace: every POLL_MS, ask whether it changed; only then ask
// again for what the page shows (the server keeps answers until it does).
// Once the live recording ended (the status says how the program did), the
// final state is shown and the page asks no more; a server gone (the
// network fails, not a query) leaves the last state, said so, and no
// error loop.
async function poll() {
  try {
    const s = await api('status');
    const version = `${s.size}/${s.mtime_ns}`;
    if (version !== state.version) {
      state.version = version;
      if (!state.lastNs) state.lastNs = s.last_ns || 0;
      state.totals = Boolean(s.totals);
      state.chunks = s.chunks || 0;
      state.compare = Boolean(s.compare);
      await loadAll();
      $('status').textContent += `, updated ${new Date().toLocaleTimeString()}`;
    }
    if (s.ended) {
      $('status').textContent = `${s.ended}: the recording ended, and this is its final state`;
      $('status').dataset.ended = s.ended;
      // The server waits for this before it ends (cmd_serve.c, linger).
      await apiText('status', { took: 'end' }).catch(() => {});
      return;
    }
  } catch (e) {
    if (e instanceof TypeError && state.version) {
      $('status').textContent += '; the server stopped: the numbers shown are the last it gave';
      $('status').dataset.stopped = 'true';
      return;
    }
    showError(e);
  }
  setTimeout(poll, POLL_MS);
}
poll();
