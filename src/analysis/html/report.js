// SPDX-License-Identifier: MIT
// The memscribe HTML report's script. It reads the data memscribe embedded
// (the JSON in #ms-data, written by src/analysis/html/ana_html_data.c) and
// fills the tables, the window selection (the heap's window table and the
// commit lifetimes') and the flame graph. Every trace
// string goes into the page through textContent, never as markup.
//
// Data (arrays are columnar; "site" = a call site = a recorded stack):
//   summary: heap model totals (ana_model.h), exact integers, named as in
//          `memscribe report --format json` (docs/json.md)
//   ended: every selected process ended in the trace (false: record -p
//          detached, or a trace cut short: blocks are "live at the end",
//          not leaked)
//   strings: function names and places; other parts index into it
//   frames: the stacks' frames as one prefix tree, node 0 the root:
//          parent[], fn[] and place[] (string ids), kind[] (the frame's
//          class: 0 user, 1 allocator, 2 runtime, 3 entry; ana_interest.h),
//          and of a stack whose leaf the node is, interest[] (its frame of
//          interest, counted from the leaf) and shown[] (its frames before
//          the entry chain)
//   sites: stack[] (trace stack id), node[] (its leaf in frames), pid[],
//          allocations[], allocated_bytes[], leaked_bytes[], leaked_blocks[],
//          peak_bytes[], temporary[], temporary_bytes[] (docs/json.md); a
//          sampled trace's also allocations_se[], allocated_bytes_se[],
//          leaked_bytes_se[], leaked_blocks_se[], peak_bytes_se[]; with
//          leak classes also definitely_lost_bytes[], ..._blocks[],
//          indirectly_lost_*, possibly_lost_*, still_reachable_*
//   classes: the leak classes at exit of record --reach in all (keys as
//          report's, docs/leaks.md) and their legend; null without them
//   wpa: bucketNs, nrBuckets, and per cell site[], a[] (allocation bucket),
//        f[] (free bucket, -1: never freed), n[] (blocks), b[] (bytes)
//   vm: the commit lifetimes (ana_html_vm.h), in buckets as wpa's:
//       bucketNs, nrBuckets, windows (a Windows program's), per key (a
//       commit stack in a process; the last one the lumped keys, if any)
//       stack[], node[] (its leaf in frames), pid[]; per cell k[] (key),
//       a[] (commit bucket), f[] (decommit bucket, -1: still committed),
//       n[] (lifetimes), b[] (bytes)
//   flame, flameInv: nodes depth first, children by name: name[] (string
//        id, -1 for the root), parent[], cost[5][] (inclusive)
//   base (html --base only): trace, summary (as summary), and the base
//        run's sites by function chain: keys[] (function names, leaf first,
//        one per line) and v[] ([allocs, bytes, peak, leaked, temp] each)
(function () {
  'use strict';

  var errors = [];
  window.addEventListener('error', function (e) {
    errors.push(String(e.message));
    document.body.setAttribute('data-errors', errors.join(' | '));
  });

  var D = JSON.parse(document.getElementById('ms-data').textContent);
  var S = D.strings;
  // A sampled trace's temporary figures are not estimated: its data has
  // none (summary null, no sites columns, flame cost null; ana_sample.h),
  // and the page shows none. With --base, either run's.
  var TEMP = D.summary.temporary !== null;
  var BASE_TEMP = TEMP && !(D.base && D.base.summary.temporary === null);
  // What the blocks left at the end are called (docs/architecture.md).
  var LEFT = D.ended === false
    ? { title: 'Live at the end', bytes: 'Bytes live at the end', blocks: 'Blocks live at the end',
        hint: 'Heap blocks still allocated when the trace ended, by call site. A process ran on ' +
          'after the trace (record -p detached, or the trace was cut short): live then, not ' +
          'necessarily leaked.', cost: 'bytes live at the end' }
    : { title: 'Leaks', card: 'Leaked', bytes: 'Leaked bytes', blocks: 'Leaked blocks' };
  var NR_SITES = D.sites.stack.length;
  // A row's stack is a call site's (i < NR_SITES) or a commit stack's
  // (NR_SITES + key of D.vm): their leaves are in the one tree of frames.
  function nodeOf(i) { return i < NR_SITES ? D.sites.node[i] : D.vm.node[i - NR_SITES]; }
  function pidOf(i) { return i < NR_SITES ? D.sites.pid[i] : D.vm.pid[i - NR_SITES]; }
  function stackIdOf(i) { return i < NR_SITES ? D.sites.stack[i] : D.vm.stack[i - NR_SITES]; }

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function int(n) { return Math.round(n).toLocaleString('en-US'); }
  function bytes(n) {
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], v = Math.abs(n), k = 0;
    while (v >= 1024 && k < units.length - 1) { v /= 1024; k++; }
    var s = k === 0 ? String(v) : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
    return (n < 0 ? '-' : '') + s + ' ' + units[k];
  }
  function time(ns) {
    if (ns >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (ns >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (ns >= 1e3) return (ns / 1e3).toFixed(3) + ' \u00b5s';
    return ns + ' ns';
  }
  // A span in one unit, its end's: "0.000 s \u2013 1.505 s", never "0 ns \u2013 1.505 s".
  function timeSpan(t0, t1) {
    var u = t1 >= 1e9 ? [1e9, ' s'] : t1 >= 1e6 ? [1e6, ' ms'] : t1 >= 1e3 ? [1e3, ' \u00b5s'] : null;
    if (!u) return t0 + ' ns \u2013 ' + t1 + ' ns';
    return (t0 / u[0]).toFixed(3) + u[1] + ' \u2013 ' + (t1 / u[0]).toFixed(3) + u[1];
  }
  // "1.5s", "250ms", "40us", "100ns" or a plain number of ns.
  function parseTime(s) {
    var m = /^\s*([0-9]*\.?[0-9]+)\s*(ns|us|\u00b5s|ms|s|)\s*$/.exec(s);
    if (!m) return NaN;
    var mul = {ns: 1, us: 1e3, '\u00b5s': 1e3, ms: 1e6, s: 1e9, '': 1}[m[2]];
    return Math.round(parseFloat(m[1]) * mul);
  }
  var FR = D.frames;
  function siteLeaf(i) {
    var n = nodeOf(i);
    return { fn: S[FR.fn[n]], place: S[FR.place[n]] };
  }

  // ---- stacks in tables -------------------------------------------------
  // A row shows its stack as `memscribe report` prints it, leaf first
  // ("A (a.c:3) < B (b.c:9) < ..."), at most STACK_ITEMS items, and more
  // where two rows would read the same; rows whose whole stacks read the
  // same (one call site in several processes) say their pid. The rule of
  // which frames show is memscribe's, in C (ana_interest.h), given in the
  // data: the allocation wrappers at the leaf (frames.kind 1: xmalloc,
  // g_malloc) are left out, the other frames down to the frame of
  // interest (the first of the program's own code, frames.interest) fold
  // into one item, "[6 library frames]", which a click opens; after it
  // each run of two or more library frames (frames.kind not 0) folds the
  // same; the entry chain (libc's start-up, thread start: the frames from
  // frames.shown on) is left out of the row.
  var STACK_ITEMS = 6; // as report's text (CLI_ANA_TEXT_FRAMES)
  // as ana_interest_mark()
  function runLabel(n) { return '[' + n + ' library frame' + (n === 1 ? '' : 's') + ']'; }
  // Site i's frames, leaf first, and its items: a frame, or a run of two
  // or more frames ({run: [frames]}); shown: the frames before the entry
  // chain.
  var STACKS = [];
  function stackOf(i) {
    if (STACKS[i]) return STACKS[i];
    var frames = [], leaf = nodeOf(i);
    for (var n = leaf; n > 0; n = FR.parent[n]) {
      frames.push({ fn: S[FR.fn[n]], place: S[FR.place[n]], kind: FR.kind[n] });
    }
    var shown = FR.shown[leaf], at = FR.interest[leaf], items = [], k = 0;
    function push(k, e, fold) {
      if (fold) items.push({ run: frames.slice(k, e) });
      else items.push(frames[k]);
    }
    // the leaf's allocation wrappers (kind 1) are left out, as malloc is
    while (k < at && frames[k].kind === 1) k++;
    var skipped = k;
    if (k < at) push(k, at, true);
    for (k = at; k < shown;) {
      var e = k + 1;
      if (k > at && frames[k].kind) while (e < shown && frames[e].kind) e++;
      push(k, e, e - k >= 2);
      k = e;
    }
    return (STACKS[i] = { frames: frames, items: items, shown: Math.min(STACK_ITEMS, items.length),
                          entry: frames.slice(shown), skipped: skipped, open: false, pid: false });
  }
  function stackText(st) {
    var t = st.items.slice(0, st.shown).map(function (it) {
      return it.run ? (st.open ? it.run.map(function (f) { return f.place; }).join(' < ')
        : runLabel(it.run.length)) : it.place;
    }).join(' < ');
    return t;
  }
  function fullText(st) {
    return st.whole || (st.whole = st.frames.map(function (f) { return f.place; }).join(' < '));
  }
  // Show more of the stacks that would read alike, until they differ
  // (the call sites among themselves, the commit stacks among theirs).
  function tellApart(from, to) {
    var all = [];
    for (var i = from; i < to; i++) all.push(i);
    for (var round = 0; round < 4096 && all.length; round++) {
      var by = {}, next = [];
      all.forEach(function (i) {
        var key = stackText(stackOf(i));
        (by[key] || (by[key] = [])).push(i);
      });
      Object.keys(by).forEach(function (key) {
        var alike = by[key];
        if (alike.length < 2) return;
        alike.forEach(function (i) {
          var st = stackOf(i), whole = fullText(st);
          if (!alike.some(function (j) { return fullText(stackOf(j)) !== whole; })) {
            st.pid = true; // the same whole stack, in other processes
            return;
          }
          if (st.shown < st.items.length) st.shown++;
          else if (!st.open) st.open = true; // they differ inside a library run
          else if (st.skipped) { // or in the allocation wrappers left out
            st.items = st.frames.slice(0, st.skipped).concat(st.items);
            st.shown = st.items.length;
            st.skipped = 0;
          } else if (st.entry.length) { // or in the entry chain
            st.items = st.items.concat(st.entry);
            st.shown = st.items.length;
            st.entry = [];
          }
          next.push(i);
        });
      });
      all = next;
    }
  }
  tellApart(0, NR_SITES);
  // A function cell: the stack's items; a library run opens on a click.
  function fnCell(i) {
    var td = el('td', 'text fn'), st = stackOf(i);
    st.items.slice(0, st.shown).forEach(function (it, k) {
      if (k) td.appendChild(document.createTextNode(' < '));
      if (!it.run) { td.appendChild(el('span', 'frame', it.place)); return; }
      var places = it.run.map(function (f) { return f.place; });
      if (st.open) { td.appendChild(el('span', 'frame', places.join(' < '))); return; }
      var b = el('span', 'lib', runLabel(it.run.length));
      b.title = places.join('\n');
      b.setAttribute('data-n', String(it.run.length));
      b.addEventListener('click', function (e) {
        e.stopPropagation();
        b.textContent = places.join(' < ');
        b.className = 'frame';
      });
      td.appendChild(b);
    });
    var more = st.frames.length - st.entry.length - st.skipped - st.items.slice(0, st.shown).reduce(function (n, it) {
      return n + (it.run ? it.run.length : 1);
    }, 0);
    if (more > 0) td.appendChild(el('span', 'more', ' < \u2026 ' + more + ' more'));
    if (st.pid) td.appendChild(el('span', 'pid', ' (pid ' + pidOf(i) + ')'));
    td.setAttribute('data-frames', String(st.frames.length));
    td.setAttribute('data-skipped', String(st.skipped));
    return td;
  }
  // A sampled trace's standard error as the text says it: relative to
  // its estimate, "±1.3%" below 10 %, whole percents above.
  function seText(v, se) {
    if (se === undefined || se === null || !v || !se) return ''; // as the text says it
    var pct = 100 * se / Math.abs(v);
    return '\u00b1' + (pct < 9.95 ? pct.toFixed(1) : pct.toFixed(0)) + '%';
  }
  function numCell(v, kind, cls, se) {
    var td = el('td', cls || '', kind === 'bytes' ? int(v) : int(v));
    td.setAttribute('data-v', String(v));
    if (kind === 'bytes' && Math.abs(v) >= 1024) td.title = bytes(v);
    var s = seText(v, se);
    if (s) {
      td.appendChild(el('span', 'se', s));
      td.setAttribute('data-se', String(se));
      td.title = (td.title ? td.title + ', ' : '') + 'standard error ' + int(se);
    }
    return td;
  }

  // ---- the stack panel ----------------------------------------------
  function showStack(i) {
    var ol = $('stack-frames');
    ol.textContent = '';
    // Every frame: the allocation wrappers the row leaves out, the row's
    // items (a library run folded behind a line that opens it), the entry
    // chain last, folded as one.
    var st = stackOf(i), all = st.frames.slice(0, st.skipped).concat(st.items);
    if (st.entry.length) all.push(st.entry.length > 1 ? { run: st.entry } : st.entry[0]);
    all.forEach(function (it) {
      if (!it.run) { ol.appendChild(el('li', '', it.place)); return; }
      var head = el('li', 'lib', runLabel(it.run.length).replace(']', ': show]')), lis = [];
      it.run.forEach(function (f) { var li = el('li', 'lib-frame', f.place); li.hidden = true; lis.push(li); });
      head.addEventListener('click', function () {
        var open = lis[0].hidden;
        lis.forEach(function (li) { li.hidden = !open; });
        head.textContent = runLabel(it.run.length).replace(']', ': ' + (open ? 'hide' : 'show') + ']');
      });
      ol.appendChild(head);
      lis.forEach(function (li) { ol.appendChild(li); });
    });
    $('stack-title').textContent = 'Stack ' + stackIdOf(i) +
      (i < NR_SITES ? ' (allocating function first)' : ' (committing function first)');
    $('stack-panel').hidden = false;
  }
  $('stack-close').addEventListener('click', function () { $('stack-panel').hidden = true; });

  // ---- tables ---------------------------------------------------------
  // cols: [title, key, kind, value(row), class(value)]; kind 'fn' is the
  // allocating function of siteOf(row), 'label' a string value(row),
  // 'count' and 'bytes' numbers (sortable by clicking the title). Rows
  // sort by |value| of the chosen column, largest first; ties[key] names
  // the column that breaks ties when sorting by key (the window table
  // orders as `memscribe window`: |Impacting Size|, then Size), then the
  // row id.
  function fillTable(table, cols, rows, sortKey, limit, moreEl, total, siteOf, ties) {
    var state = { key: sortKey };
    limit = limit || Infinity; // --top 0: every row
    siteOf = siteOf || function (r) { return r; };
    ties = ties || {};
    function column(key) { return cols.filter(function (c) { return c[1] === key; })[0]; }
    function order(col, x, y) {
      var a = col[3](x), b = col[3](y);
      return Math.abs(b) - Math.abs(a) || b - a;
    }
    function render() {
      var col = column(state.key), tie = ties[state.key] ? column(ties[state.key]) : null;
      var sorted = rows.slice().sort(function (x, y) {
        return order(col, x, y) || (tie ? order(tie, x, y) : 0) || x - y;
      });
      table.textContent = '';
      var head = el('tr');
      cols.forEach(function (c) {
        var text = c[2] === 'fn' || c[2] === 'label';
        var th = el('th', text ? 'text' : '', c[0]);
        if (c[1] === state.key) th.classList.add('sorted');
        if (!text) th.addEventListener('click', function () { state.key = c[1]; render(); });
        head.appendChild(th);
      });
      var thead = el('thead'); thead.appendChild(head); table.appendChild(thead);
      var tbody = el('tbody');
      sorted.slice(0, limit).forEach(function (r) {
        var tr = el('tr', 'row'), site = siteOf(r);
        tr.setAttribute('data-site', String(site));
        cols.forEach(function (c) {
          if (c[2] === 'fn') tr.appendChild(fnCell(site));
          else if (c[2] === 'label') tr.appendChild(el('td', 'text c-' + c[1], c[3](r)));
          else tr.appendChild(numCell(c[3](r), c[2], 'c-' + c[1] + (c[4] ? ' ' + c[4](c[3](r)) : ''),
            c[5] ? c[5](r) : undefined));
        });
        tr.addEventListener('click', function () { showStack(site); });
        tbody.appendChild(tr);
      });
      if (total) {
        var tr = el('tr', 'total');
        cols.forEach(function (c, k) {
          if (c[2] === 'fn' || c[2] === 'label') tr.appendChild(el('td', 'text', k ? '' : 'Total'));
          else tr.appendChild(numCell(total[c[1]], c[2], 'c-' + c[1]));
        });
        tbody.appendChild(tr);
      }
      table.appendChild(tbody);
      moreEl.textContent = sorted.length > limit
        ? (sorted.length - limit) + ' more rows not shown.' : '';
    }
    render();
  }

  // ---- the base run (html --base) ---------------------------------------
  var BASE = null, CHAIN = null, KEYS = [];
  if (D.base) {
    BASE = {};
    D.base.keys.forEach(function (k, i) { BASE[k] = D.base.v[i]; });
    // The page lists recorded stacks; the base is matched by function
    // chain, so a row's change is its whole chain's: the new run's sites
    // of that chain added up, against the base's.
    CHAIN = {};
    var M = ['allocations', 'allocated_bytes', 'peak_bytes', 'leaked_bytes', 'temporary'];
    for (var i = 0; i < D.sites.stack.length; i++) {
      var names = [];
      for (var n = D.sites.node[i]; n > 0; n = D.frames.parent[n]) names.push(S[D.frames.fn[n]]);
      KEYS.push(names.join('\n'));
      var c = CHAIN[KEYS[i]] || (CHAIN[KEYS[i]] = [0, 0, 0, 0, 0]);
      M.forEach(function (m, k) { c[k] += D.sites[m] ? D.sites[m][i] : 0; });
    }
  }
  // The change of metric m (0 allocs, 1 bytes, 2 peak, 3 leaked, 4 temp)
  // of site i's function chain against the base's (0 there if none).
  function chainChange(i, m) {
    var b = BASE[KEYS[i]];
    return CHAIN[KEYS[i]][m] - (b ? b[m] : 0);
  }
  function signed(v) { return (v > 0 ? '+' : '') + int(v); }
  function posneg(x) { return x < 0 ? 'neg' : x > 0 ? 'pos' : ''; }
  function baseSummary() {
    var b = D.base.summary, s = D.summary, cards = $('summary-cards');
    card(cards, 'card-base', 'Compared with', D.base.trace, 'changes in brackets');
    [['card-peak', 'peak_bytes'], ['card-allocs', 'allocations'], ['card-leaked', 'leaked_bytes'],
     ['card-temp', 'temporary']].forEach(function (c) {
      if (!$(c[0]) || typeof b[c[1]] !== 'number') return;
      var d = el('div', 'change', 'base ' + int(b[c[1]]) + ', ' + signed(s[c[1]] - b[c[1]]));
      $(c[0]).appendChild(d);
    });
  }

  // ---- summary --------------------------------------------------------
  function card(parent, id, label, value, exact) {
    var c = el('div', 'card'); c.id = id;
    c.appendChild(el('div', 'label', label));
    c.appendChild(el('div', 'value', value));
    if (exact) c.appendChild(el('div', 'exact', exact));
    parent.appendChild(c);
  }
  function summary() {
    var s = D.summary, cards = $('summary-cards'), t = $('summary-table');
    if (D.incomplete) $('incomplete').hidden = false;
    // A sampled trace's counted totals (format 1.13): every call counted
    var X = s.exact || null;
    if (D.sampled) {
      // record --sample: the page's bytes and counts are estimates (as every command says)
      $('sampled').hidden = false;
      $('sampled').textContent = 'Sampled trace (record --sample ' + int(D.sampled.sample_bytes) +
        ' bytes): ' + (X ? 'calls, allocations, frees, their bytes, temporary allocations and ' +
        'the heap\u2019s usable bytes are counted (the cards and the table\u2019s \u201ccounted\u201d ' +
        'rows); call sites, leaks and the peak of requested bytes are estimates, and a peak is not ' +
        'an unbiased estimate.' : 'byte figures and counts are estimates, a peak ' +
        'is not an unbiased estimate, and temporary allocations are not estimated (left out).');
    }
    // record --aggregate: totals exact, times at the intervals' granularity;
    // record --keep-last: where the exact segments are, or what a segment holds
    const kinds = [D.aggregateNote, D.segmentNote].filter(Boolean);
    if (kinds.length) {
      $('aggregated').hidden = false;
      $('aggregated').textContent = kinds.map(n => n.charAt(0).toUpperCase() + n.slice(1) + '.').join(' ');
    }
    card(cards, 'card-peak', 'Peak heap in use', bytes(s.peak_bytes), int(s.peak_bytes) + ' B at ' + time(s.peak_ns));
    if (X) {
      card(cards, 'card-allocs', 'Allocations (counted)', int(X.allocations),
        bytes(X.allocated_bytes) + ' requested');
      card(cards, 'card-usable', 'Heap, usable bytes (counted)',
        X.peak_usable_bytes !== null ? bytes(X.peak_usable_bytes) : bytes(X.heap_usable_bytes),
        X.peak_usable_bytes !== null ? 'peak, by ' + time(X.peak_usable_ns) + '; ' +
          bytes(X.heap_usable_bytes) + ' at the end' : 'at the end (each process\u2019s peak apart)');
    } else {
      card(cards, 'card-allocs', 'Allocations', int(s.allocations), bytes(s.allocated_bytes) + ' requested');
    }
    card(cards, 'card-leaked', LEFT.card || LEFT.title, bytes(s.leaked_bytes), int(s.leaked_blocks) + ' blocks' +
      (D.classes ? ', ' + bytes(D.classes.lost_bytes) + ' lost' : ''));
    if (TEMP) card(cards, 'card-temp', 'Temporary allocations', int(s.temporary), bytes(s.temporary_bytes));
    else if (X) card(cards, 'card-temp', 'Temporary allocations (counted)', int(X.temporary), bytes(X.temporary_bytes));
    if (s.peak_rss_bytes !== null) {
      card(cards, 'card-rss', 'Peak RSS', bytes(s.peak_rss_bytes),
        'at ' + time(s.peak_rss_ns) + ', with memscribe\u2019s ring buffers (up to 4 MiB a thread)');
    }
    card(cards, 'card-duration', 'Duration', time(D.endNs), int(s.events) + ' events');
    var rows = [
      ['Allocations', 'allocations', s.allocations, 'count'],
      ['Bytes allocated', 'allocated_bytes', s.allocated_bytes, 'bytes'],
      ['Frees', 'frees', s.frees, 'count'],
      ['Bytes freed', 'freed_bytes', s.freed_bytes, 'bytes'],
      ['Peak heap in use', 'peak_bytes', s.peak_bytes, 'bytes'],
      ['Peak at', 'peak_ns', s.peak_ns, 'time'],
      ['Blocks live at the peak', 'peak_blocks', s.peak_blocks, 'count'],
      [LEFT.bytes, 'leaked_bytes', s.leaked_bytes, 'bytes'],
      [LEFT.blocks, 'leaked_blocks', s.leaked_blocks, 'count'],
      ['Temporary allocations', 'temporary', s.temporary, 'count'],
      ['Temporary bytes', 'temporary_bytes', s.temporary_bytes, 'bytes'],
      ['Peak RSS (with memscribe\u2019s ring buffers, up to 4 MiB a thread)', 'peak_rss_bytes', s.peak_rss_bytes,
        'bytes'],
      ['Ranges mapped at start (a snapshot, not calls)', 'start_mappings', s.start_mappings, 'count'],
      ['Failed calls', 'failed_calls', s.failed_calls, 'count'],
      ['Frees of unknown blocks', 'unmatched_frees', s.unmatched_frees, 'count'],
      ['Events lost by the collector', 'dropped_events', s.dropped_events, 'count'],
      ['Events', 'events', s.events, 'count'],
      ['Processes', 'process_count', s.process_count, 'count'],
      ['Threads', 'thread_count', s.thread_count, 'count'],
      ['Distinct stacks', 'stack_count', s.stack_count, 'count'],
      ['Duration', 'endNs', D.endNs, 'time']
    ];
    // The counted totals, after the estimates they stand beside.
    if (X) {
      rows.unshift(
        ['Allocations, counted', 'exact_allocations', X.allocations, 'count'],
        ['Bytes allocated, counted', 'exact_allocated_bytes', X.allocated_bytes, 'bytes'],
        ['Frees, counted', 'exact_frees', X.frees, 'count'],
        ['Temporary allocations, counted', 'exact_temporary', X.temporary, 'count'],
        ['Temporary bytes, counted', 'exact_temporary_bytes', X.temporary_bytes, 'bytes'],
        ['Heap in use at the end, usable bytes, counted', 'exact_heap_usable_bytes', X.heap_usable_bytes, 'bytes']);
      if (X.peak_usable_bytes !== null)
        rows.splice(6, 0, ['Peak heap in use, usable bytes, counted', 'exact_peak_usable_bytes',
          X.peak_usable_bytes, 'bytes']);
    }
    // Leak classes at exit (record --reach), as report gives them.
    if (D.classes) {
      var at = rows.findIndex(function (r) { return r[1] === 'leaked_blocks'; }) + 1;
      rows.splice(at, 0,
        ['Lost at exit (definitely + indirectly)', 'lost_bytes', D.classes.lost_bytes, 'bytes'],
        ['Definitely lost', 'definitely_lost_bytes', D.classes.definitely_lost_bytes, 'bytes'],
        ['Indirectly lost', 'indirectly_lost_bytes', D.classes.indirectly_lost_bytes, 'bytes'],
        ['Possibly lost', 'possibly_lost_bytes', D.classes.possibly_lost_bytes, 'bytes'],
        ['Still reachable', 'still_reachable_bytes', D.classes.still_reachable_bytes, 'bytes']);
    }
    Object.keys(s.calls).forEach(function (k) {
      rows.push(['Calls to ' + k, 'calls-' + k, s.calls[k], 'count']);
    });
    if (D.host) rows.push(['Host', 'host', D.host, 'text']);
    if (D.threads.length) {
      rows.push(['Threads (tid: name)', 'threads', D.threads.slice(0, 50).map(function (t) {
        return t.tid + ': ' + (t.name === null ? '(no name)' : t.name);
      }).join(', ') + (D.threads.length > 50 ? ', \u2026' : ''), 'text']);
    }
    if (D.command.length) rows.push(['Command', 'command', D.command.join(' '), 'text']);
    rows.forEach(function (r) {
      if (r[2] === null) return; // no RSS recorded, a sampled trace's temporary figures
      var tr = el('tr'), td = el('td');
      td.id = 'sum-' + r[1];
      if (r[3] === 'text') td.textContent = r[2];
      else {
        td.setAttribute('data-v', String(r[2]));
        td.textContent = r[3] === 'time' ? time(r[2]) : int(r[2]) +
          (r[3] === 'bytes' && r[2] >= 1024 ? ' (' + bytes(r[2]) + ')' : '');
        if (D.base && r[3] !== 'time' && typeof D.base.summary[r[1]] === 'number') {
          var chg = el('span', 'change', ' [' + signed(r[2] - D.base.summary[r[1]]) + ']');
          chg.id = 'chg-' + r[1];
          td.appendChild(chg);
        }
      }
      tr.appendChild(el('td', '', r[0]));
      tr.appendChild(td);
      t.appendChild(tr);
    });
  }

  // The per-program view's table (html of a tree where an executable ran
  // in several processes): largest peak first, as report's.
  function programs() {
    if (!D.programs) return;
    var t = $('programs-table'), head = el('tr');
    ['Program', 'Processes', 'Peak', 'Leaked', 'Allocations'].forEach(function (h, k) {
      head.appendChild(el('th', k ? '' : 'text', h));
    });
    t.appendChild(head);
    D.programs.slice().sort(function (a, b) { return b.peak_bytes - a.peak_bytes; })
      .forEach(function (p) {
        var tr = el('tr');
        tr.appendChild(el('td', 'text fn', p.exe === null ? '(unknown)' : p.exe));
        [p.processes, p.peak_bytes, p.leaked_bytes, p.allocations].forEach(function (v, k) {
          var td = el('td', '', k === 0 || k === 3 ? int(v) : bytes(v));
          td.setAttribute('data-v', String(v));
          tr.appendChild(td);
        });
        t.appendChild(tr);
      });
    $('programs').hidden = false;
  }

  // ---- leaks and top sites ------------------------------------------
  function sites() {
    var all = [], leaks = [], C = D.sites;
    for (var i = 0; i < NR_SITES; i++) {
      all.push(i);
      if (C.leaked_bytes[i] > 0) leaks.push(i);
    }
    // A sampled trace's sites carry each estimate's standard error
    // (KEY_se), shown after it.
    function col(title, key, kind) {
      var se = C[key + '_se'];
      return [title, key, kind, function (i) { return C[key][i]; }, null,
        se ? function (i) { return se[i]; } : null];
    }
    $('leaks-count').textContent = '(' + int(leaks.length) + ' call sites, ' +
      bytes(D.summary.leaked_bytes) + ')';
    // With a base, the change of each row's function chain against the
    // base's (html --base).
    function change(title, key, kind, m) {
      return [title, key, kind, function (i) { return chainChange(i, m); }, posneg];
    }
    var leakCols = [
      ['Allocating function', 'fn', 'fn'],
      col(LEFT.bytes, 'leaked_bytes', 'bytes'),
      col(LEFT.blocks, 'leaked_blocks', 'count'),
      col('Allocations', 'allocations', 'count'),
      col('Bytes allocated', 'allocated_bytes', 'bytes')
    ];
    var siteCols = [
      ['Allocating function', 'fn', 'fn'],
      col('Allocations', 'allocations', 'count'),
      col('Bytes allocated', 'allocated_bytes', 'bytes'),
      col('At the peak', 'peak_bytes', 'bytes'),
      col(LEFT.card || LEFT.title, 'leaked_bytes', 'bytes')
    ];
    if (TEMP) siteCols.push(col('Temporary', 'temporary', 'count'));
    // Leak classes at exit (record --reach): each class's bytes after the
    // leaked blocks, and the legend under the table.
    if (D.classes) {
      leakCols.splice(3, 0, col('Definitely lost', 'definitely_lost_bytes', 'bytes'),
        col('Indirectly lost', 'indirectly_lost_bytes', 'bytes'),
        col('Possibly lost', 'possibly_lost_bytes', 'bytes'),
        col('Still reachable', 'still_reachable_bytes', 'bytes'));
      var K = D.classes;
      $('leaks-classes').textContent = 'Classes at exit: lost ' + bytes(K.lost_bytes) + ' in ' +
        int(K.lost_blocks) + ' blocks (definitely ' + bytes(K.definitely_lost_bytes) +
        ', indirectly ' + bytes(K.indirectly_lost_bytes) + '), possibly lost ' +
        bytes(K.possibly_lost_bytes) + ', still reachable ' + bytes(K.still_reachable_bytes) +
        '. ' + K.legend + '.';
      $('leaks-classes').hidden = false;
    }
    if (BASE) {
      leakCols.splice(2, 0, change('Chain +/- leaked', 'dleaked', 'bytes', 3));
      siteCols.push(change('Chain +/- allocations', 'dallocs', 'count', 0),
        change('Chain +/- bytes', 'dbytes', 'bytes', 1), change('Chain +/- peak', 'dpeak', 'bytes', 2),
        change('Chain +/- leaked', 'dleaked', 'bytes', 3));
      if (BASE_TEMP) siteCols.push(change('Chain +/- temporary', 'dtemp', 'count', 4));
    }
    fillTable($('leaks-table'), leakCols, leaks, 'leaked_bytes', D.top_rows, $('leaks-more'));
    fillTable($('sites-table'), siteCols, all, 'allocated_bytes', D.top_rows, $('sites-more'));
  }

  // ---- the window -----------------------------------------------------
  var W = D.wpa, NB = W.nrBuckets, BW = W.bucketNs;
  var AIFI = 0, AIFO = 1, AOFI = 2, AOFO = 3;
  // Per key (a call site of wpa, a commit stack of vm) and class, the
  // count and bytes of cells C (keys in C[key]) for the buckets [i, j].
  function computeCells(C, key, nKeys, i, j) {
    var acc = new Float64Array(nKeys * 8), n = C[key].length;
    var site = C[key], A = C.a, F = C.f, N = C.n, B = C.b;
    for (var k = 0; k < n; k++) {
      var a = A[k], f = F[k], cls;
      if (a > j) continue;
      var freedIn = f >= 0 && f <= j;
      if (a >= i) cls = freedIn ? AIFI : AIFO;
      else if (f >= 0 && f < i) continue;
      else cls = freedIn ? AOFI : AOFO;
      var o = site[k] * 8 + cls * 2;
      acc[o] += N[k];
      acc[o + 1] += B[k];
    }
    return acc;
  }
  function computeWindow(i, j) { return computeCells(W, 'site', NR_SITES, i, j); }
  // Rows as `memscribe window` prints them (and `memscribe vmem` its
  // groups) of acc (computeCells): per key one Transient row (AIFI) and one
  // Impacting row (AIFO and AOFI), row id = key * 2 + (1 for Transient);
  // the columns (the key's titled keyTitle), their total and the cards'
  // sums.
  function wpaTable(acc, nKeys, keyTitle) {
    function v(s, cls, b) { return acc[s * 8 + cls * 2 + (b ? 1 : 0)]; }
    function key(r) { return r >> 1; }
    function transient(r) { return (r & 1) === 1; }
    var get = {
      type: function (r) { return transient(r) ? 'Transient' : 'Impacting'; },
      count: function (r) {
        var s = key(r);
        return transient(r) ? v(s, AIFI) : v(s, AIFO) + v(s, AOFI);
      },
      size: function (r) { return transient(r) ? v(key(r), AIFI, 1) : v(key(r), AIFO, 1); },
      impacting: function (r) { return transient(r) ? 0 : v(key(r), AIFO, 1) - v(key(r), AOFI, 1); }
    };
    var rows = [], tot = { count: 0, size: 0, impacting: 0 };
    var sum = { tc: 0, tb: 0, ic: 0, is: 0, aofo: 0, aofob: 0 };
    for (var s = 0; s < nKeys; s++) {
      if (v(s, AIFI)) rows.push(s * 2 + 1);
      if (v(s, AIFO) || v(s, AOFI)) rows.push(s * 2);
      sum.aofo += v(s, AOFO);
      sum.aofob += v(s, AOFO, 1);
    }
    rows.forEach(function (r) {
      tot.count += get.count(r); tot.size += get.size(r); tot.impacting += get.impacting(r);
      if (transient(r)) { sum.tc += get.count(r); sum.tb += get.size(r); }
      else { sum.ic += get.count(r); sum.is += get.impacting(r); }
    });
    var cols = [
      ['Impacting Type', 'type', 'label', get.type],
      [keyTitle, 'fn', 'fn'],
      ['Count', 'count', 'count', get.count],
      ['Size', 'size', 'bytes', get.size],
      ['Impacting Size', 'impacting', 'bytes', get.impacting, posneg]
    ];
    return { rows: rows, cols: cols, tot: tot, sum: sum, key: key };
  }
  function showWindow(i, j) {
    var started = performance.now();
    var t = wpaTable(computeWindow(i, j), NR_SITES, 'Allocating function'), sum = t.sum;
    var t0 = i * BW, t1 = (j + 1) * BW;
    $('window-range').textContent = 'Window ' + timeSpan(t0, t1) +
      ' (buckets ' + i + '\u2013' + j + ' of ' + NB + ')';
    $('window-range').setAttribute('data-t0', String(t0));
    $('window-range').setAttribute('data-t1', String(t1 - 1));
    var cards = $('window-cards');
    cards.textContent = '';
    card(cards, 'win-transient', 'Transient (AIFI)', int(sum.tc) + ' blocks', int(sum.tb) + ' B');
    card(cards, 'win-impacting', 'Impacting (AIFO + AOFI)', int(sum.ic) + ' blocks');
    card(cards, 'win-impacting-size', 'Impacting Size', bytes(sum.is), int(sum.is) + ' B');
    card(cards, 'win-size', 'Size (allocated inside)', bytes(t.tot.size), int(t.tot.size) + ' B');
    card(cards, 'win-aofo', 'Outstanding throughout (AOFO)', int(sum.aofo) + ' blocks');
    fillTable($('window-table'), t.cols, t.rows, 'impacting', D.top_rows, $('window-more'), t.tot,
              t.key, { impacting: 'size' });
    if (NV) showVm(i, j);
    drawSelection(i, j);
    // How long a selection takes to show, for tests and the docs.
    $('window-range').setAttribute('data-ms', String(Math.round(performance.now() - started)));
  }

  // ---- commit lifetimes ---------------------------------------------------
  // The window's commit lifetimes, as `memscribe vmem --from T0 --to T1`
  // groups them by stack: per commit stack one Transient row (AIFI) and one
  // Impacting row (AIFO and AOFI). Row id = key * 2 + (1 for Transient);
  // its stack is the pseudo-site NR_SITES + key.
  var V = D.vm, NV = V && V.k.length ? V.stack.length : 0;
  function showVm(i, j) {
    var t = wpaTable(computeCells(V, 'k', NV, i, j), NV, 'Commit stack'), sum = t.sum;
    var t0 = i * BW, t1 = (j + 1) * BW;
    $('vm-range').textContent = 'Window ' + timeSpan(t0, t1) + ' (the timeline\u2019s selection)';
    $('vm-range').setAttribute('data-t0', String(t0));
    $('vm-range').setAttribute('data-t1', String(t1 - 1));
    var cards = $('vm-cards');
    cards.textContent = '';
    card(cards, 'vm-transient', 'Transient (AIFI)', int(sum.tc) + ' lifetimes', int(sum.tb) + ' B');
    card(cards, 'vm-impacting', 'Impacting (AIFO + AOFI)', int(sum.ic) + ' lifetimes');
    card(cards, 'vm-impacting-size', 'Impacting Size', bytes(sum.is), int(sum.is) + ' B');
    card(cards, 'vm-size', 'Size (committed inside)', bytes(t.tot.size), int(t.tot.size) + ' B');
    card(cards, 'vm-aofo', 'Committed throughout (AOFO)', int(sum.aofo) + ' lifetimes', int(sum.aofob) + ' B');
    fillTable($('vm-table'), t.cols, t.rows, 'impacting', D.top_rows, $('vm-more'), t.tot,
              function (r) { return NR_SITES + t.key(r); }, { impacting: 'size' });
  }
  if (NV) {
    tellApart(NR_SITES, NR_SITES + NV);
    $('vmem').hidden = false;
    $('nav-vmem').hidden = false;
    if (V.windows) $('vm-title').textContent = 'VirtualAlloc commit lifetimes';
  }

  // ---- timeline selection ------------------------------------------------
  var tsvg = document.getElementById('timeline-svg');
  var selRect = null, sel = { i: 0, j: NB - 1 };
  function tAttr(name) { return parseFloat(tsvg.getAttribute(name)); }
  function xOfTime(t) {
    var l = tAttr('data-left'), r = tAttr('data-right'), lo = tAttr('data-t-lo'), hi = tAttr('data-t-hi');
    return l + (t - lo) / (hi - lo) * (r - l);
  }
  function timeOfX(x) {
    var l = tAttr('data-left'), r = tAttr('data-right'), lo = tAttr('data-t-lo'), hi = tAttr('data-t-hi');
    return lo + (x - l) / (r - l) * (hi - lo);
  }
  function bucketAt(t) { return Math.max(0, Math.min(NB - 1, Math.floor(t / BW))); }
  function drawSelection(i, j) {
    if (!tsvg) return;
    if (!selRect) {
      selRect = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
      selRect.setAttribute('class', 'sel-rect');
      tsvg.appendChild(selRect);
    }
    var whole = i === 0 && j === NB - 1;
    var x0 = xOfTime(i * BW), x1 = xOfTime(Math.min((j + 1) * BW, tAttr('data-t-hi')));
    selRect.setAttribute('x', x0.toFixed(1));
    selRect.setAttribute('width', Math.max(1, x1 - x0).toFixed(1));
    selRect.setAttribute('y', tAttr('data-top'));
    selRect.setAttribute('height', tAttr('data-bottom') - tAttr('data-top'));
    selRect.style.display = whole ? 'none' : '';
  }
  function select(i, j, fromUser) {
    sel = { i: Math.min(i, j), j: Math.max(i, j) };
    showWindow(sel.i, sel.j);
    if (fromUser && window.history && history.replaceState) {
      var h = sel.i === 0 && sel.j === NB - 1 ? ' ' :
        '#window=' + (sel.i * BW) + 'ns-' + ((sel.j + 1) * BW) + 'ns';
      history.replaceState(null, '', h.trim() || window.location.pathname);
    }
  }
  function svgX(evt) {
    var pt = tsvg.createSVGPoint();
    pt.x = evt.clientX; pt.y = evt.clientY;
    return pt.matrixTransform(tsvg.getScreenCTM().inverse()).x;
  }
  if (tsvg) {
    var dragFrom = null;
    tsvg.addEventListener('mousedown', function (e) {
      dragFrom = bucketAt(timeOfX(svgX(e)));
      e.preventDefault();
    });
    tsvg.addEventListener('mousemove', function (e) {
      if (dragFrom === null) return;
      var b = bucketAt(timeOfX(svgX(e)));
      drawSelection(Math.min(dragFrom, b), Math.max(dragFrom, b));
    });
    window.addEventListener('mouseup', function (e) {
      if (dragFrom === null) return;
      var b = bucketAt(timeOfX(svgX(e)));
      select(dragFrom, b, true);
      dragFrom = null;
    });
    tsvg.addEventListener('dblclick', function () { select(0, NB - 1, true); });
  }
  $('window-all').addEventListener('click', function () { select(0, NB - 1, true); });
  // "10 ms", not "10.000 ms".
  $('bucket-width').textContent = time(BW).replace(/\.(\d*?)0+ /, function (m, d) {
    return (d ? '.' + d : '') + ' ';
  });

  // #window=T0-T1 (times as "1.25s", "250ms", or ns): the buckets holding
  // [T0, T1), for links and for tests.
  function fromHash() {
    var m = /[#&]window=([^&-]+)-([^&]+)/.exec(decodeURIComponent(window.location.hash || ''));
    if (!m) return false;
    var t0 = parseTime(m[1]), t1 = parseTime(m[2]);
    if (isNaN(t0) || isNaN(t1) || t1 <= t0) return false;
    var i = bucketAt(t0), j = Math.max(i, Math.min(NB - 1, Math.ceil(t1 / BW) - 1));
    select(i, j, false);
    return true;
  }

  // ---- flame graph --------------------------------------------------------
  var FH = 16, FPAD = 10;
  var fsvg = $('flame-svg');
  var flame = { tree: null, cost: 1, zoom: 0, term: '' };
  function layout(t, c) {
    var n = t.parent.length, left = new Float64Array(n), next = new Float64Array(n);
    var depth = new Int32Array(n), cost = t.cost[c];
    for (var k = 1; k < n; k++) {
      var p = t.parent[k];
      depth[k] = depth[p] + 1;
      left[k] = next[p];
      next[k] = left[k];
      next[p] += Math.max(0, cost[k]);
    }
    return { left: left, depth: depth, cost: cost };
  }
  function frameName(t, k) { return t.name[k] < 0 ? 'all' : S[t.name[k]]; }
  function colour(name) {
    var h = 2166136261;
    for (var i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619) >>> 0;
    return 'rgb(' + (205 + h % 50) + ',' + (80 + (h >>> 8) % 150) + ',' + (20 + (h >>> 16) % 50) + ')';
  }
  function drawFlame() {
    var inv = $('flame-inverted').checked;
    var t = inv ? D.flameInv : D.flame, c = flame.cost;
    var L = layout(t, c), n = t.parent.length, total = L.cost[0];
    var width = fsvg.clientWidth || 1100, w = width - 2 * FPAD;
    var z = flame.zoom < n ? flame.zoom : 0;
    var zl = L.left[z], zw = L.cost[z] > 0 ? L.cost[z] : total, zd = L.depth[z];
    var re = null;
    if (flame.term) { try { re = new RegExp(flame.term); } catch (e) { re = null; } }
    // First what is visible (and so how deep the picture is), then draw.
    var vis = [], maxD = 0;
    for (var k = 0; k < n; k++) {
      var v = L.cost[k];
      if (!(v > 0)) continue;
      var l = L.left[k], d = L.depth[k];
      var x0 = Math.max(l, zl), x1 = Math.min(l + v, zl + zw);
      if (x1 <= x0) continue;
      if (d < zd && !(l <= zl && l + v >= zl + zw)) continue;
      var pw = (x1 - x0) / zw * w;
      if (pw < 0.1) continue;
      vis.push([k, FPAD + (x0 - zl) / zw * w, pw]);
      if (d > maxD) maxD = d;
    }
    var height = (maxD + 1) * FH + 2 * FPAD;
    fsvg.setAttribute('height', height);
    fsvg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    fsvg.textContent = '';
    var frag = document.createDocumentFragment(), spans = [];
    vis.forEach(function (e) {
      var k = e[0], px = e[1], pw = e[2], d = L.depth[k];
      var name = frameName(t, k);
      var hit = flame.term && (re ? re.test(name) : name.indexOf(flame.term) >= 0);
      if (hit) spans.push([L.left[k], L.cost[k]]);
      var y = inv ? FPAD + d * FH : height - FPAD - (d + 1) * FH;
      var g = document.createElementNS('http://www.w3.org/2000/svg', 'g');
      g.setAttribute('class', 'f' + (hit ? ' hit' : '') + (d < zd ? ' parent' : ''));
      g.setAttribute('data-k', String(k));
      var r = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
      r.setAttribute('x', px.toFixed(1)); r.setAttribute('y', y);
      r.setAttribute('width', pw.toFixed(1)); r.setAttribute('height', FH - 1);
      r.setAttribute('rx', 2); r.setAttribute('fill', k === 0 ? 'rgb(230,200,120)' : colour(name));
      g.appendChild(r);
      var chars = Math.floor((pw - 6) / 7);
      if (chars >= 3) {
        var tx = document.createElementNS('http://www.w3.org/2000/svg', 'text');
        tx.setAttribute('x', (px + 3).toFixed(1)); tx.setAttribute('y', y + FH - 4.5);
        tx.textContent = name.length <= chars ? name : name.slice(0, chars - 2) + '..';
        g.appendChild(tx);
      }
      frag.appendChild(g);
    });
    fsvg.appendChild(frag);
    flame.tree = t; flame.L = L; flame.total = total;
    if (flame.term) {
      spans.sort(function (a, b) { return a[0] - b[0]; });
      var sum = 0, end = -1;
      spans.forEach(function (s) {
        var a = Math.max(s[0], end), b = s[0] + s[1];
        if (b > a) { sum += b - a; end = b; }
      });
      $('flame-matched').textContent = 'Matched: ' + (total > 0 ? (100 * sum / total).toFixed(1) : '0') + '%';
    } else {
      $('flame-matched').textContent = '';
    }
  }
  function describe(k) {
    var L = flame.L, v = L.cost[k], name = frameName(flame.tree, k);
    var unit = flame.cost === 0 ? ' allocations' : flame.cost === 4 ? ' temporary allocations' : ' bytes';
    var pct = flame.total > 0 ? (100 * v / flame.total).toFixed(2) : '0';
    return name + ' \u2014 ' + int(v) + unit + (flame.cost !== 0 && flame.cost !== 4 ? ' (' + bytes(v) + ')' : '') +
      ', ' + pct + '%';
  }
  fsvg.addEventListener('click', function (e) {
    var g = e.target.closest ? e.target.closest('g.f') : null;
    if (!g) return;
    flame.zoom = parseInt(g.getAttribute('data-k'), 10);
    drawFlame();
  });
  fsvg.addEventListener('mouseover', function (e) {
    var g = e.target.closest ? e.target.closest('g.f') : null;
    if (g) $('flame-details').textContent = describe(parseInt(g.getAttribute('data-k'), 10));
  });
  $('flame-cost').addEventListener('change', function () {
    flame.cost = parseInt(this.value, 10); flame.zoom = 0; drawFlame();
  });
  $('flame-inverted').addEventListener('change', function () { flame.zoom = 0; drawFlame(); });
  $('flame-reset').addEventListener('click', function () { flame.zoom = 0; drawFlame(); });
  $('flame-search').addEventListener('input', function () { flame.term = this.value; drawFlame(); });
  window.addEventListener('resize', function () { drawFlame(); });

  // #drag=F0,F1: drag with the mouse from fraction F0 to F1 of the plot's
  // width, through the same handlers a person's mouse goes through (tests
  // use it: headless browsers have no hand).
  function dragFromHash() {
    var m = /[#&]drag=([0-9.]+),([0-9.]+)/.exec(window.location.hash || '');
    if (!m || !tsvg) return false;
    var ctm = tsvg.getScreenCTM();
    var l = tAttr('data-left'), r = tAttr('data-right'), y = (tAttr('data-top') + tAttr('data-bottom')) / 2;
    function at(f) {
      var pt = tsvg.createSVGPoint();
      pt.x = l + parseFloat(f) * (r - l); pt.y = y;
      var c = pt.matrixTransform(ctm);
      return { clientX: c.x, clientY: c.y, bubbles: true };
    }
    tsvg.dispatchEvent(new MouseEvent('mousedown', at(m[1])));
    tsvg.dispatchEvent(new MouseEvent('mousemove', at(m[2])));
    window.dispatchEvent(new MouseEvent('mouseup', at(m[2])));
    return true;
  }

  // ---- start ------------------------------------------------------------
  if (!TEMP) $('flame-cost').removeChild($('flame-cost').querySelector('option[value="4"]'));
  if (LEFT.hint) {
    $('leaks-title').textContent = LEFT.title;
    $('leaks-hint').textContent = LEFT.hint;
    $('flame-cost').options[2].textContent = LEFT.cost;
  }
  summary();
  programs();
  if (D.base) baseSummary();
  sites();
  if (!fromHash()) select(0, NB - 1, false);
  dragFromHash();
  // #stack=REGEX: show the stack of the first call site whose allocating
  // function matches (as a click on its row does).
  var sm = /[#&]stack=([^&]*)/.exec(window.location.hash || '');
  if (sm) {
    var sre = new RegExp(decodeURIComponent(sm[1]));
    for (var si = 0; si < NR_SITES; si++) {
      if (sre.test(siteLeaf(si).fn)) { showStack(si); break; }
    }
  }
  var cm = /[#&]cost=([0-4])/.exec(window.location.hash || '');
  if (cm && (TEMP || cm[1] !== '4')) { flame.cost = parseInt(cm[1], 10); $('flame-cost').value = cm[1]; }
  if (/[#&]inverted/.test(window.location.hash || '')) $('flame-inverted').checked = true;
  drawFlame();
  // How long the page took to become usable, for tests and the docs.
  document.body.setAttribute('data-ready-ms', String(Math.round(performance.now())));
  document.body.setAttribute('data-ready', '1');
})();
