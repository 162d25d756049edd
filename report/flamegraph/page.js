// hwprof flame graph page. Drawn on a canvas rather than as SVG: a large
// profile lays out tens of thousands of frames, and one canvas redraw of
// them costs a few milliseconds where as many SVG elements take seconds to
// build and make every zoom slow. Text and hit testing are done here; the
// frame under the pointer is found by binary search in its row.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('hwprof-data').textContent);
  var N = D.depth.length;
  var diff = !!D.base;
  var ROW = 18, MINPX = 0.1;

  // ---- the tree -----------------------------------------------------------
  var depth = Int32Array.from(D.depth), fn = Int32Array.from(D.fn);
  var parent = new Int32Array(N), end = new Int32Array(N), nkids = new Int32Array(N);
  var last = [], maxDepth = 0;
  for (var i = 0; i < N; i++) {
    var d = depth[i];
    last[d] = i;
    parent[i] = d > 0 ? last[d - 1] : -1;
    if (d > 0) nkids[parent[i]]++;
    if (d > maxDepth) maxDepth = d;
  }
  // Children in order, as one flat array with offsets (CSR).
  var kidStart = new Int32Array(N + 1);
  for (i = 0; i < N; i++) kidStart[i + 1] = kidStart[i] + nkids[i];
  var kids = new Int32Array(Math.max(N - 1, 0)), fill = kidStart.slice(0, N);
  for (i = 1; i < N; i++) kids[fill[parent[i]]++] = i;
  // end[i]: one past the last node of i's subtree.
  for (i = N - 1; i >= 0; i--) {
    var e = i + 1;
    if (nkids[i] > 0) e = end[kids[kidStart[i + 1] - 1]];
    end[i] = e;
  }
  function fname(n) { return D.strings[D.funcs[3 * fn[n]]]; }
  function fobj(n) { var o = D.funcs[3 * fn[n] + 1]; return o < 0 ? '' : D.strings[o]; }
  function fkind(n) { return D.kinds[D.funcs[3 * fn[n] + 2]]; }

  function totals(self) {
    var t = Float64Array.from(self);
    for (var n = N - 1; n > 0; n--) t[parent[n]] += t[n];
    return t;
  }
  function weightSet(self, scale) {
    if (!self) return null;
    var s = Float64Array.from(self);
    if (scale !== 1) for (var n = 0; n < N; n++) s[n] *= scale;
    return { self: s, total: totals(s) };
  }
  var W = {}, B = {}, weights = [];
  if (D.time) { W.time = weightSet(D.time, D.timeUnit); B.time = weightSet(D.btime, D.timeUnit); weights.push('time'); }
  if (D.calls) { W.calls = weightSet(D.calls, 1); B.calls = weightSet(D.bcalls, 1); weights.push('calls'); }
  // Time off the CPU (a recording of it): its own weight, and with on-CPU
  // time of a clock event, wall time, the two summed node by node.
  var offPage = !!D.offcpu;
  if (offPage) {
    W['off-cpu'] = weightSet(D.offcpu, D.offUnit); weights.push('off-cpu');
    if (D.meta.hasWall) {
      var wall = Float64Array.from(W['off-cpu'].self);
      if (W.time) for (i = 0; i < N; i++) wall[i] += W.time.self[i];
      W.wall = { self: wall, total: totals(wall) }; weights.push('wall');
    }
  }
  W.samples = weightSet(D.samples, 1); B.samples = weightSet(D.bsamples, 1);
  if (!weights.length) weights.push('samples');

  // ---- state ----------------------------------------------------------------
  var st = { zoom: 0, weight: weights.indexOf(D.weight) >= 0 ? D.weight : weights[0],
             icicle: !!D.icicle, re: null, query: '', match: null, matchShare: 0, matchCount: 0 };
  var canvas = document.getElementById('flame'), ctx = canvas.getContext('2d');
  var tip = document.getElementById('tip'), hoverBox = document.getElementById('hover');
  var laid = [], rows = [], cssWidth = 0, rowsShown = 0, hovered = -1;

  // ---- formatting -----------------------------------------------------------
  function pct(x) { return (x * 100).toFixed(x > 0 && x < 0.001 ? 3 : 2) + '%'; }
  function int(x) { return Math.round(x).toLocaleString('en-US'); }
  function num(x) { return x === Math.round(x) ? int(x) : x.toLocaleString('en-US', { maximumFractionDigits: 1 }); }
  function dur(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e11 ? 0 : 2) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e8 ? 0 : 2) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e5 ? 0 : 2) + ' µs';
    return Math.round(ns) + ' ns';
  }
  function amount(w, x) { return w === 'calls' ? num(x) + ' calls' : w === 'samples' ? int(x) + ' samples' : dur(x); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ---- colours ----------------------------------------------------------------
  var HUES = { program: [14, 32, 80, 62], library: [42, 52, 78, 56], kernel: [198, 212, 62, 66],
               jit: [96, 128, 48, 56], unknown: [0, 0, 0, 74], broken: [350, 352, 45, 40], narrow: [0, 0, 0, 86] };
  var LABEL = { program: 'program', library: 'shared library', kernel: 'kernel', jit: 'JIT', unknown: 'unknown',
                broken: 'broken / truncated stack', narrow: 'merged narrow frames' };
  function hash(s) { var h = 2166136261; for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); } return (h >>> 0) / 4294967296; }
  var colourCache = new Map();
  function kindColour(n) {
    var f = fn[n], c = colourCache.get(f);
    if (c) return c;
    var k = HUES[fkind(n)] || HUES.unknown, h = hash(fname(n)), h2 = hash(fname(n) + '\u0001');
    c = 'hsl(' + (k[0] + (k[1] - k[0]) * h).toFixed(0) + ',' + k[2] + '%,' + (k[3] - 5 + 10 * h2).toFixed(0) + '%)';
    if (n === 0) c = '#c9ced8';
    colourCache.set(f, c);
    return c;
  }
  // Frames whose weight in the view shown is all time off the CPU: every
  // frame of the off-CPU view, those without time on the CPU in the wall
  // view. They take the off-CPU palette (blues; a thread preempted while
  // runnable, teal), whatever their object.
  var OFF = [232, 258, 55, 62], PREEMPTED = 'hsl(172,48%,48%)', OFFNARROW = 'hsl(230,28%,84%)';
  function offFrame(n) {
    if (n === 0) return false;
    if (st.weight === 'off-cpu') return true;
    return st.weight === 'wall' && W.wall.total[n] > 0 && !(W.time && W.time.total[n] > 0);
  }
  var offCache = new Map();
  function offColour(n) {
    var f = fn[n], c = offCache.get(f);
    if (c) return c;
    var k = fkind(n), name = fname(n), h = hash(name), h2 = hash(name + '\u0001');
    if (name === '[preempted]') c = PREEMPTED;
    else if (k === 'narrow') c = OFFNARROW;
    else c = 'hsl(' + (OFF[0] + (OFF[1] - OFF[0]) * h).toFixed(0) + ',' + OFF[2] + '%,' + (OFF[3] - 5 + 10 * h2).toFixed(0) + '%)';
    offCache.set(f, c);
    return c;
  }
  // offBar marks the part of a frame of the wall view, on the CPU and off
  // it, that is off it: a bar along its top, as long as that share.
  var OFFBAR = 'hsl(' + (OFF[0] + OFF[1]) / 2 + ',' + OFF[2] + '%,' + (OFF[3] - 12) + '%)';
  function offBar(n, f, y) {
    if (st.weight !== 'wall' || n === 0 || diff || (st.match && st.match[n]) || offFrame(n) || f.w < 3) return;
    var share = W['off-cpu'].total[n] / W.wall.total[n];
    if (!(share > 0)) return;
    ctx.fillStyle = OFFBAR;
    ctx.fillRect(f.x, y + 1, (f.w - 0.5) * share, 2); // along the top, clear of the label
  }
  var maxDelta = 0;
  function deltaOf(n) {
    var w = st.weight, a = W[w].total, b = B[w].total;
    var ns = a[0] > 0 ? a[n] / a[0] : 0, bs = b[0] > 0 ? b[n] / b[0] : 0;
    return { now: ns, was: bs, d: ns - bs };
  }
  function computeMaxDelta() {
    maxDelta = 0;
    for (var n = 1; n < N; n++) { var x = Math.abs(deltaOf(n).d); if (x > maxDelta) maxDelta = x; }
  }
  function diffColour(n) {
    var d = deltaOf(n).d, r = maxDelta > 0 ? Math.min(1, Math.abs(d) / maxDelta) : 0;
    if (Math.abs(d) < 1e-12) return 'hsl(220,10%,90%)';
    return d > 0 ? 'hsl(0,' + (55 + 30 * r).toFixed(0) + '%,' + (88 - 38 * r).toFixed(0) + '%)'
                 : 'hsl(214,' + (55 + 30 * r).toFixed(0) + '%,' + (88 - 38 * r).toFixed(0) + '%)';
  }
  function textColour(n) {
    if (st.match && st.match[n]) return '#fff';
    if (diff) { var r = maxDelta > 0 ? Math.abs(deltaOf(n).d) / maxDelta : 0; return r > 0.75 ? '#fff' : '#1d2330'; }
    return fkind(n) === 'broken' ? '#fff' : '#1d2330';
  }

  // ---- layout and drawing -------------------------------------------------------
  // layout places the zoomed frame across the whole width, its ancestors as
  // full-width bars below it and its descendants in proportion to their
  // total weight; frames under MINPX wide are not drawn.
  function layout() {
    var tot = W[st.weight].total, z = st.zoom;
    cssWidth = canvas.parentNode.clientWidth - 36;
    laid = []; rows = [];
    var a = [], p = parent[z];
    while (p >= 0) { a.push(p); p = parent[p]; }
    for (var i = a.length - 1; i >= 0; i--) place(a[i], 0, cssWidth);
    if (tot[z] <= 0) { place(z, 0, cssWidth); return; }
    var scale = cssWidth / tot[z];
    (function walk(n, x) {
      place(n, x, tot[n] * scale);
      for (var k = kidStart[n]; k < kidStart[n + 1]; k++) {
        var c = kids[k], w = tot[c] * scale;
        if (w >= MINPX) walk(c, x);
        x += w;
      }
    })(z, 0);
  }
  function place(n, x, w) {
    var f = { n: n, x: x, w: w, d: depth[n] };
    laid.push(f);
    (rows[f.d] || (rows[f.d] = [])).push(f);
  }
  function rowY(d) { return st.icicle ? d * ROW : (rowsShown - 1 - d) * ROW; }
  var charW = 7;
  function draw() {
    layout();
    if (diff) computeMaxDelta();
    rowsShown = rows.length;
    var dpr = window.devicePixelRatio || 1, h = rowsShown * ROW + 2;
    canvas.style.height = h + 'px';
    canvas.style.width = cssWidth + 'px';
    // The new height may add or remove the chart's scroll bar, and so
    // change the width available: lay out again for that width.
    if (canvas.parentNode.clientWidth - 36 !== cssWidth) layout();
    canvas.style.width = cssWidth + 'px';
    canvas.width = Math.round(cssWidth * dpr); canvas.height = Math.round(h * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssWidth, h);
    ctx.font = '12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
    charW = ctx.measureText('mmmmmmmmmm').width / 10 || 7;
    ctx.textBaseline = 'middle';
    for (var i = 0; i < laid.length; i++) {
      var f = laid[i], y = rowY(f.d), n = f.n;
      var dim = f.d < depth[st.zoom];
      ctx.globalAlpha = dim ? 0.55 : 1;
      ctx.fillStyle = st.match && st.match[n] ? 'hsl(291,64%,52%)' : diff ? diffColour(n) : offFrame(n) ? offColour(n) : kindColour(n);
      ctx.fillRect(f.x, y + 1, f.w >= 3 ? f.w - 0.5 : f.w, ROW - 1); // a gap between frames wide enough to show one
      offBar(n, f, y);
      if (f.w > 3 * charW) {
        var name = n === 0 ? 'all' : fname(n), fit = Math.floor((f.w - 6) / charW);
        if (name.length > fit) name = fit > 2 ? name.slice(0, fit - 1) + '…' : '';
        if (name) { ctx.fillStyle = textColour(n); ctx.fillText(name, f.x + 3, y + 1 + ROW / 2); }
      }
    }
    ctx.globalAlpha = 1;
    hideHover();
  }
  // showRoot scrolls the chart so that the zoomed frame is in view: the
  // bottom of a flame graph, the top of an icicle graph.
  function showRoot() {
    var c = canvas.parentNode;
    c.scrollTop = st.icicle ? 0 : c.scrollHeight;
  }

  // ---- header, toolbar, legend ------------------------------------------------
  function header() {
    var m = D.meta, title = document.title;
    document.getElementById('title').textContent = title;
    var facts = document.getElementById('facts');
    function fact(k, v, bad) {
      var div = el('div'); div.appendChild(el('dt', '', k));
      div.appendChild(el('dd', bad ? 'bad' : '', v)); facts.appendChild(div);
      return div;
    }
    if (diff) {
      fact('base', (D.base.source || 'unknown source') + ', ' + int(D.base.samples) + ' samples');
      if (D.base.lost) fact('base lost', int(D.base.lost), true);
      if (D.base.throttled) fact('base throttled', int(D.base.throttled), true);
      fact('new', (m.source || 'unknown source') + ', ' + int(m.samples) + ' samples');
    } else {
      fact('source', m.source || 'unknown');
      fact('samples', int(m.samples));
    }
    fact(diff ? 'new lost' : 'lost', int(m.lost), m.lost > 0);
    fact(diff ? 'new throttled' : 'throttled', int(m.throttled), m.throttled > 0);
    fact('weight', weightLabel(st.weight)).lastChild.id = 'weight-shown';
    if (offPage) fact('total', amount(st.weight, W[st.weight].total[0])).lastChild.id = 'total-shown';
    fact('frames', int(N - 1));
    var cmd = document.getElementById('command');
    if (m.command) cmd.textContent = '$ ' + m.command; else cmd.remove();
    var ws = document.getElementById('warnings');
    var all = (D.base ? D.base.warnings.map(function (w) { return 'base: ' + w; }) : []).concat(m.warnings);
    all.forEach(function (w) { ws.appendChild(el('li', '', w)); });
  }
  function weightLabel(w) {
    return { time: (offPage ? 'on-CPU ' : '') + 'time (samples × period)', calls: 'calls (estimated calls per context)', samples: 'samples',
             'off-cpu': 'off-CPU time (the stacks threads waited in)', wall: 'wall time (on-CPU samples + off-CPU time)' }[w] +
      (diff ? ', shares compared' : '');
  }
  function factsRefresh() {
    var e = document.getElementById('weight-shown'); if (e) e.textContent = weightLabel(st.weight);
    e = document.getElementById('total-shown'); if (e) e.textContent = amount(st.weight, W[st.weight].total[0]);
  }
  var BUTTON = { time: ['Time', 'Width: time (samples × period)'], calls: ['Calls', 'Width: estimated calls in each calling context'],
                 samples: ['Samples', 'Width: samples'], 'off-cpu': ['Off-CPU', 'Width: time spent off the CPU, by the stack each wait began in'],
                 wall: ['Wall', 'Width: wall time, on the CPU and off it'] };
  if (offPage) BUTTON.time = ['CPU', 'Width: time on the CPU (samples × period)'];
  function toolbar() {
    var g = document.getElementById('weights');
    if (weights.length > 1) weights.forEach(function (w) {
      var b = el('button', '', BUTTON[w][0]);
      b.type = 'button'; b.dataset.weight = w; b.setAttribute('role', 'radio');
      b.title = BUTTON[w][1];
      b.onclick = function () { api.setWeight(w); };
      g.appendChild(b);
    });
    document.querySelectorAll('#orient button').forEach(function (b) {
      b.setAttribute('role', 'radio');
      b.onclick = function () { api.setOrientation(b.dataset.orient); };
    });
    document.getElementById('reset').onclick = function () { api.reset(); };
    var s = document.getElementById('search');
    s.addEventListener('input', function () { api.search(s.value); });
    syncButtons();
  }
  function syncButtons() {
    document.querySelectorAll('#weights button').forEach(function (b) { b.setAttribute('aria-checked', b.dataset.weight === st.weight); });
    document.querySelectorAll('#orient button').forEach(function (b) {
      b.setAttribute('aria-checked', (b.dataset.orient === 'icicle') === st.icicle);
    });
  }
  function legend() {
    var lg = document.getElementById('legend');
    function item(cls, bg, label) {
      var s = el('span'), i = el('i', cls); i.style.background = bg; s.appendChild(i); s.appendChild(document.createTextNode(label)); lg.appendChild(s);
    }
    if (diff) {
      item('grad', 'linear-gradient(90deg,hsl(214,85%,50%),hsl(220,10%,90%),hsl(0,85%,50%))', 'share shrank … grew (new against base)');
    } else {
      var present = {};
      for (var f = 1; f < D.funcs.length / 3; f++) present[D.kinds[D.funcs[3 * f + 2]]] = true;
      ['program', 'library', 'kernel', 'jit', 'unknown', 'broken', 'narrow'].forEach(function (k) {
        if (!present[k]) return;
        var c = HUES[k], mid = (c[0] + c[1]) / 2;
        item('', 'hsl(' + mid + ',' + c[2] + '%,' + c[3] + '%)', LABEL[k]);
      });
    }
    if (offPage && !diff) {
      item('', 'hsl(' + (OFF[0] + OFF[1]) / 2 + ',' + OFF[2] + '%,' + OFF[3] + '%)', 'off the CPU (every frame of Off-CPU; in Wall, frames never on the CPU)');
      item('', PREEMPTED, '[preempted]: runnable, waiting for a CPU');
      if (W.wall) item('', OFFBAR, 'in Wall, a bar atop a frame also on the CPU: its share off it');
    }
    item('', 'hsl(291,64%,52%)', 'search match');
  }
  function crumbs() {
    var nav = document.getElementById('crumbs');
    nav.textContent = '';
    var path = [], n = st.zoom;
    while (n >= 0) { path.unshift(n); n = parent[n]; }
    path.forEach(function (p, i) {
      if (i > 0) nav.appendChild(el('span', 'sep', '›'));
      var a = el('a', p === st.zoom ? 'here' : '', p === 0 ? 'all' : fname(p));
      a.title = p === 0 ? 'whole profile' : fname(p);
      if (p !== st.zoom) a.onclick = function () { api.zoom(p); };
      nav.appendChild(a);
    });
  }

  // ---- search -----------------------------------------------------------------
  // The matched share counts each stack once: a matching frame's total is
  // added and its subtree skipped, so nested matches are not counted twice.
  function runSearch() {
    var m = document.getElementById('match');
    m.className = ''; m.textContent = '';
    st.match = null; st.matchShare = 0; st.matchCount = 0;
    if (!st.re) return;
    var tot = W[st.weight].total, hit = new Uint8Array(N), sum = 0, count = 0, n;
    for (n = 1; n < N; n++) if (st.re.test(fname(n))) { hit[n] = 1; count++; }
    // Merged narrow frames have no names to match: say how much they hold.
    var unsearched = 0;
    for (n = 1; n < N;) {
      if (hit[n]) { sum += tot[n]; n = end[n]; } else { if (fkind(n) === 'narrow') unsearched += tot[n]; n++; }
    }
    st.match = hit; st.matchCount = count; st.matchShare = tot[0] > 0 ? sum / tot[0] : 0;
    m.appendChild(document.createTextNode('Matched '));
    m.appendChild(el('b', '', pct(st.matchShare)));
    m.appendChild(document.createTextNode(' of all (' + amount(st.weight, sum) + ') in ' + int(count) + ' frame' + (count === 1 ? '' : 's')));
    if (unsearched > 0 && tot[0] > 0) m.appendChild(document.createTextNode('; merged narrow frames, ' + pct(unsearched / tot[0]) + ', not searched'));
  }

  // ---- pointer ------------------------------------------------------------------
  function frameAt(px, py) {
    var r = st.icicle ? Math.floor(py / ROW) : rowsShown - 1 - Math.floor(py / ROW), row = rows[r];
    if (!row) return null;
    var lo = 0, hi = row.length - 1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1, f = row[mid];
      if (px < f.x) hi = mid - 1; else if (px >= f.x + f.w) lo = mid + 1; else return f;
    }
    return null;
  }
  var helpHTML = document.getElementById('details').innerHTML; // the page's own markup
  function hideHover() {
    hoverBox.style.display = 'none'; tip.style.display = 'none';
    if (hovered >= 0) document.getElementById('details').innerHTML = helpHTML;
    hovered = -1;
  }
  function tipRow(t, k, v, cls) { var tr = el('tr'); tr.appendChild(el('td', '', k)); tr.appendChild(el('td', cls || '', v)); t.appendChild(tr); }
  function describe(n) {
    var w = st.weight, tot = W[w].total, self = W[w].self, root = tot[0] || 1;
    tip.textContent = '';
    tip.appendChild(el('div', 'name', n === 0 ? 'all' : fname(n)));
    var o = fobj(n), k = fkind(n);
    tip.appendChild(el('div', 'obj', (o ? o + ' · ' : '') + (LABEL[k] || k)));
    var t = el('table');
    tipRow(t, 'total', pct(tot[n] / root) + '  (' + amount(w, tot[n]) + ')');
    tipRow(t, 'self', pct(self[n] / root) + '  (' + amount(w, self[n]) + ')');
    // An ancestor of the zoomed frame holds it: say how much of the
    // ancestor the zoomed frame is, not a share of the zoom above 100%.
    if (st.zoom !== 0 && depth[n] < depth[st.zoom] && tot[n] > 0) tipRow(t, 'zoomed frame', pct(tot[st.zoom] / tot[n]) + ' of this frame');
    else if (st.zoom !== 0 && tot[st.zoom] > 0) tipRow(t, 'of zoomed', pct(tot[n] / tot[st.zoom]));
    // Sampled stacks have samples; a profile of calls alone (exact) none.
    if (D.meta.hasTime || w === 'samples') tipRow(t, 'samples', int(W.samples.total[n]) + ' total, ' + int(W.samples.self[n]) + ' self');
    if (w !== 'time' && W.time) tipRow(t, offPage ? 'on-CPU' : 'time', dur(W.time.total[n]) + ' total, ' + dur(W.time.self[n]) + ' self');
    if (w !== 'off-cpu' && W['off-cpu']) tipRow(t, 'off-CPU', dur(W['off-cpu'].total[n]) + ' total, ' + dur(W['off-cpu'].self[n]) + ' self');
    if (w !== 'wall' && W.wall) tipRow(t, 'wall', dur(W.wall.total[n]) + ' total, ' + dur(W.wall.self[n]) + ' self');
    if (W.calls) tipRow(t, 'calls', num(W.calls.self[n]) + ' into this context, ' + num(W.calls.total[n]) + ' at or below it');
    if (diff) {
      var dd = deltaOf(n);
      tipRow(t, 'base share', pct(dd.was));
      tipRow(t, 'new share', pct(dd.now));
      tipRow(t, 'change', (dd.d >= 0 ? '+' : '−') + (Math.abs(dd.d) * 100).toFixed(2) + ' points', dd.d > 0 ? 'up' : dd.d < 0 ? 'down' : '');
    }
    tip.appendChild(t);
    document.getElementById('details').textContent = (n === 0 ? 'all' : fname(n)) + (o ? '  —  ' + o : '') +
      '  —  total ' + pct(tot[n] / root) + ', self ' + pct(self[n] / root);
  }
  canvas.addEventListener('mousemove', function (ev) {
    var r = canvas.getBoundingClientRect(), f = frameAt(ev.clientX - r.left, ev.clientY - r.top);
    if (!f) { hideHover(); return; }
    if (f.n !== hovered) {
      hovered = f.n; describe(f.n);
      hoverBox.style.display = 'block';
      hoverBox.style.left = (canvas.offsetLeft + f.x) + 'px'; hoverBox.style.top = (canvas.offsetTop + rowY(f.d) + 1) + 'px';
      hoverBox.style.width = Math.max(f.w, 2) + 'px'; hoverBox.style.height = (ROW - 1) + 'px';
      tip.style.display = 'block';
    }
    var tx = ev.clientX + 14, ty = ev.clientY + 16, tw = tip.offsetWidth, th = tip.offsetHeight;
    if (tx + tw > window.innerWidth - 4) tx = Math.max(4, ev.clientX - tw - 14);
    if (ty + th > window.innerHeight - 4) ty = Math.max(4, ev.clientY - th - 12);
    tip.style.left = tx + 'px'; tip.style.top = ty + 'px';
  });
  canvas.addEventListener('mouseleave', hideHover);
  canvas.addEventListener('click', function (ev) {
    var r = canvas.getBoundingClientRect(), f = frameAt(ev.clientX - r.left, ev.clientY - r.top);
    if (f) api.zoom(f.n);
  });

  // ---- history and keys ---------------------------------------------------------
  function setZoom(n, push) {
    if (n < 0 || n >= N || n === st.zoom) return;
    st.zoom = n;
    if (push) history.pushState({ hwprofZoom: n }, '', n ? '#frame=' + n : location.pathname + location.search);
    crumbs(); draw(); showRoot();
  }
  window.addEventListener('popstate', function (ev) {
    var n = ev.state && typeof ev.state.hwprofZoom === 'number' ? ev.state.hwprofZoom : 0;
    setZoom(n, false);
  });
  document.addEventListener('keydown', function (ev) {
    var s = document.getElementById('search');
    if ((ev.key === '/' && document.activeElement !== s) || ((ev.ctrlKey || ev.metaKey) && ev.key === 'f')) {
      ev.preventDefault(); s.focus(); s.select();
    } else if (ev.key === 'Escape') {
      ev.preventDefault(); s.value = ''; api.search(''); api.reset(); s.blur();
    }
  });
  var resizeTimer = 0;
  window.addEventListener('resize', function () { clearTimeout(resizeTimer); resizeTimer = setTimeout(draw, 50); });

  // ---- the scripting API --------------------------------------------------------
  function pathOf(n) { var p = []; while (n > 0) { p.unshift(fname(n)); n = parent[n]; } return p.join(';'); }
  var api = {
    // frames returns every frame drawn: x and width in CSS pixels from the
    // canvas's left edge, depth from the root (0).
    frames: function () {
      return laid.map(function (f) {
        return { id: f.n, name: f.n === 0 ? 'all' : fname(f.n), object: fobj(f.n), kind: fkind(f.n), path: pathOf(f.n),
                 x: f.x, width: f.w, depth: f.d, y: rowY(f.d), delta: diff ? deltaOf(f.n).d : 0, offcpu: offFrame(f.n) };
      });
    },
    state: function () {
      return { zoom: st.zoom, zoomPath: pathOf(st.zoom), weight: st.weight, weights: weights.slice(), icicle: st.icicle,
               width: cssWidth, rowHeight: ROW, rows: rowsShown, query: st.query, matchShare: st.matchShare,
               matchCount: st.matchCount, diff: diff, nodes: N };
    },
    zoom: function (n) { setZoom(n, true); },
    reset: function () { setZoom(0, true); },
    search: function (q) {
      st.query = q; st.re = null;
      var s = document.getElementById('search');
      s.classList.remove('invalid');
      if (q) {
        try { st.re = new RegExp(q); } catch (e) {
          s.classList.add('invalid');
          var m = document.getElementById('match'); m.className = 'invalid'; m.textContent = 'invalid regular expression';
          st.match = null; draw(); return st.matchShare = 0;
        }
      }
      runSearch(); draw();
      return st.matchShare;
    },
    setWeight: function (w) {
      if (weights.indexOf(w) < 0 || w === st.weight) return;
      st.weight = w; syncButtons(); factsRefresh(); runSearch(); draw();
    },
    setOrientation: function (o) { st.icicle = o === 'icicle'; syncButtons(); draw(); showRoot(); },
    ready: false
  };
  window.hwprofFlame = api;

  header(); toolbar(); legend(); crumbs();
  if (history.state && typeof history.state.hwprofZoom === 'number' && history.state.hwprofZoom < N) st.zoom = history.state.hwprofZoom;
  else history.replaceState({ hwprofZoom: 0 }, '');
  crumbs(); draw(); showRoot();
  canvas.parentNode.addEventListener('scroll', hideHover);
  api.ready = true;
  performance.mark('hwprof-ready');
})();
