// SPDX-License-Identifier: MIT
// Click-to-zoom and search inside a standalone flame graph SVG written by
// memscribe (src/analysis/pictures/ana_flame_svg.c). Each frame is a
// <g class="f"> with data-l (cost left of it), data-w (its cost) and data-d
// (depth); the script moves rects and re-cuts labels from those, so nothing
// is computed twice and the SVG still shows everything with scripts off.
(function () {
  'use strict';
  var svg = document.documentElement;
  var frames = [].slice.call(document.querySelectorAll('g.f'));
  var total = parseFloat(svg.getAttribute('data-total'));
  var pad = parseFloat(svg.getAttribute('data-pad'));
  var width = parseFloat(svg.getAttribute('data-width')) - 2 * pad;
  var details = document.getElementById('details');
  var matched = document.getElementById('matched');
  var unzoom = document.getElementById('unzoom');
  var zoomL = 0, zoomW = total, zoomDepth = 0;

  function label(g) { return g.querySelector('title').textContent; }
  function fname(g) { return g.getAttribute('data-n') || label(g); }
  function fit(g, px) {
    var t = g.querySelector('text');
    var name = fname(g);
    var chars = Math.floor((px - 6) / 7);
    if (chars < 3) { t.textContent = ''; return; }
    t.textContent = name.length <= chars ? name : name.slice(0, chars - 2) + '..';
  }
  function place(g) {
    var l = parseFloat(g.getAttribute('data-l'));
    var w = parseFloat(g.getAttribute('data-w'));
    var d = parseInt(g.getAttribute('data-d'), 10);
    var r = g.querySelector('rect');
    var t = g.querySelector('text');
    var x0 = Math.max(l, zoomL), x1 = Math.min(l + w, zoomL + zoomW);
    if (x1 <= x0 || (d < zoomDepth && !(l <= zoomL && l + w >= zoomL + zoomW))) {
      g.style.display = 'none';
      return;
    }
    g.style.display = '';
    var px = pad + (x0 - zoomL) / zoomW * width;
    var pw = (x1 - x0) / zoomW * width;
    r.setAttribute('x', px.toFixed(1));
    r.setAttribute('width', pw.toFixed(1));
    t.setAttribute('x', (px + 3).toFixed(1));
    g.classList.toggle('parent', d < zoomDepth);
    fit(g, pw);
  }
  function zoom(g) {
    zoomL = parseFloat(g.getAttribute('data-l'));
    zoomW = parseFloat(g.getAttribute('data-w'));
    zoomDepth = parseInt(g.getAttribute('data-d'), 10);
    frames.forEach(place);
    unzoom.style.opacity = zoomW < total ? '1' : '0.3';
  }
  function reset() {
    zoomL = 0; zoomW = total; zoomDepth = 0;
    frames.forEach(place);
    unzoom.style.opacity = '0.3';
  }
  function search(term) {
    var re;
    try { re = new RegExp(term); } catch (e) { re = null; }
    var spans = [];
    frames.forEach(function (g) {
      var hit = term && (re ? re.test(fname(g)) : fname(g).indexOf(term) >= 0);
      g.classList.toggle('hit', !!hit);
      if (hit) {
        spans.push([parseFloat(g.getAttribute('data-l')), parseFloat(g.getAttribute('data-w'))]);
      }
    });
    // Nested matches count once: merge the cost ranges.
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var sum = 0, end = -1;
    spans.forEach(function (s) {
      var l = Math.max(s[0], end), r = s[0] + s[1];
      if (r > l) { sum += r - l; end = r; }
    });
    matched.textContent = term ? 'Matched: ' + (total ? (100 * sum / total).toFixed(1) : '0') + '%' : '';
  }
  frames.forEach(function (g) {
    g.addEventListener('click', function () { zoom(g); });
    g.addEventListener('mouseover', function () { details.textContent = label(g); });
    g.addEventListener('mouseout', function () { details.textContent = ' '; });
  });
  unzoom.addEventListener('click', reset);
  document.getElementById('search').addEventListener('click', function () {
    var term = window.prompt('Search for (regular expression):', '');
    if (term !== null) search(term);
  });
  document.addEventListener('keydown', function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === 'f') {
      e.preventDefault();
      var term = window.prompt('Search for (regular expression):', '');
      if (term !== null) search(term);
    } else if (e.key === 'Escape') {
      search('');
      reset();
    }
  });
  // A search (#search=regex) or a zoom into the first frame whose name
  // matches (#zoom=regex) given in the URL, for links and for tests.
  var m = /[#&]search=([^&]*)/.exec(window.location.hash || '');
  if (m) search(decodeURIComponent(m[1]));
  var z = /[#&]zoom=([^&]*)/.exec(window.location.hash || '');
  if (z) {
    var zre = new RegExp(decodeURIComponent(z[1]));
    var target = frames.filter(function (g) { return zre.test(fname(g)); })[0];
    if (target) zoom(target);
  }
})();
