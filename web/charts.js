// web/charts.js — nexttok's charts: line and scatter charts drawn as SVG with no dependencies, for
// the bench reports (embedded in the nexttok binary) and the project's web page. Several series on
// the same axes, ticks, a legend, an optional log x axis, and a CDF helper. Every drawn data point is
// an SVG element with data-series, data-x and data-y holding the exact numbers plotted, so a test can
// compare a chart with the data it came from.
(function (root) {
  'use strict';

  const SVG_NS = 'http://www.w3.org/2000/svg';
  const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf',
    '#7f7f7f', '#bcbd22'];
  const CDF_MAX_POINTS = 200;

  function el(name, attrs, parent) {
    const e = root.document.createElementNS(SVG_NS, name);
    for (const k in attrs) e.setAttribute(k, String(attrs[k]));
    if (parent) parent.appendChild(e);
    return e;
  }

  function text(parent, x, y, s, attrs) {
    const t = el('text', Object.assign({ x: x, y: y }, attrs || {}), parent);
    t.textContent = s;
    return t;
  }

  // A short label for a number: 1.5k, 2048, 0.25, 1.2e-5.
  function formatNumber(v) {
    if (!Number.isFinite(v)) return String(v);
    const a = Math.abs(v);
    if (a === 0) return '0';
    if (a >= 1e6) return trim((v / 1e6).toPrecision(3)) + 'M';
    if (a >= 1e4) return trim((v / 1e3).toPrecision(3)) + 'k';
    if (Number.isInteger(v)) return String(v);
    if (a >= 0.001) return trim(v.toPrecision(3));
    return v.toExponential(1);
  }

  function trim(s) {
    return s.indexOf('.') >= 0 && s.indexOf('e') < 0 ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
  }

  // About `count` evenly spaced round ticks (1, 2 or 5 times a power of ten) covering [lo, hi];
  // whole numbers only when `integers`.
  function linearTicks(lo, hi, count, integers) {
    count = count || 5;
    if (!(hi > lo)) hi = lo + 1;
    const raw = (hi - lo) / count;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const f = raw / mag;
    let step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
    if (integers) step = Math.max(1, Math.round(step));
    const ticks = [];
    for (let v = Math.floor(lo / step) * step; v <= hi + step * 1e-9; v += step)
      if (v >= lo - step * 1e-9) ticks.push(Math.abs(v) < step * 1e-9 ? 0 : Number(v.toPrecision(12)));
    return ticks;
  }

  // Ticks of a log axis over [lo, hi] (both > 0): powers of two for counts of at least 1 on short
  // ranges (prompt lengths, concurrency), else 1, 2 and 5 times powers of ten; at most 10.
  function logTicks(lo, hi) {
    const ticks = [];
    const within = (v) => v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9);
    if (lo >= 1 && hi / lo <= 4096) {
      for (let v = Math.pow(2, Math.floor(Math.log2(lo))); v <= hi * (1 + 1e-9); v *= 2) if (within(v)) ticks.push(v);
    } else {
      for (let e = Math.floor(Math.log10(lo)); Math.pow(10, e) <= hi * (1 + 1e-9); ++e)
        for (const k of hi / lo > 1000 ? [1] : [1, 2, 5]) {
          const v = Number((k * Math.pow(10, e)).toPrecision(12));
          if (within(v)) ticks.push(v);
        }
    }
    let step = 1;
    while (ticks.length / step > 10) ++step;
    return ticks.filter((_, i) => i % step === 0);
  }

  // The empirical CDF of values as points (value, share of values <= it), at most maxPoints of them
  // (evenly spaced ranks, the first and last kept).
  function cdf(values, maxPoints) {
    maxPoints = maxPoints || CDF_MAX_POINTS;
    const v = values.filter(Number.isFinite).slice().sort((a, b) => a - b);
    const n = v.length;
    const pts = [];
    if (n <= maxPoints) {
      for (let i = 0; i < n; ++i) pts.push([v[i], (i + 1) / n]);
    } else {
      for (let k = 0; k < maxPoints; ++k) {
        const i = Math.round(k * (n - 1) / (maxPoints - 1));
        pts.push([v[i], (i + 1) / n]);
      }
    }
    return pts;
  }

  // The points of a series: given, or the CDF of its values.
  function seriesPoints(s) {
    const pts = s.cdf ? cdf(s.cdf) : (s.points || []);
    return pts.filter((p) => p && Number.isFinite(p[0]) && Number.isFinite(p[1]));
  }

  // Draws one chart into container and returns its <svg>. spec: {id, title, xLabel, yLabel, logX,
  // drawTitle (default true: the title above the plot), line (default true: join the points),
  // series: [{name, points: [[x, y], ...]} or {name, cdf: [values]}], yMax (a fixed top, e.g. 1 for
  // a CDF), width, height}. Points that are not finite numbers, or not above 0 on a log axis, are
  // not drawn.
  function chart(container, spec) {
    const W = spec.width || 640, H = spec.height || 340;
    const drawTitle = spec.drawTitle !== false && spec.title;
    const m = { left: 64, right: 20, top: drawTitle ? 34 : 12, bottom: 46 };
    const series = (spec.series || []).map((s, i) => {
      let pts = seriesPoints(s);
      if (spec.logX) pts = pts.filter((p) => p[0] > 0);
      return { name: String(s.name), points: pts, color: PALETTE[i % PALETTE.length] };
    });
    // The legend below the plot: items flow left to right in rows.
    const legend = [];
    let lx = m.left, rows = series.length > 0 ? 1 : 0;
    for (const s of series) {
      const w = 26 + 7 * s.name.length;
      if (lx + w > W - m.right && lx > m.left) { lx = m.left; ++rows; }
      legend.push({ s: s, x: lx, row: rows - 1 });
      lx += w + 12;
    }
    const legendH = rows * 18;
    const svg = el('svg', {
      xmlns: SVG_NS, width: W, height: H + legendH, viewBox: '0 0 ' + W + ' ' + (H + legendH),
      class: 'nt-chart', role: 'img', 'aria-label': spec.title || '', 'data-chart-id': spec.id || '',
    });
    const pw = W - m.left - m.right, ph = H - m.top - m.bottom;
    const all = [];
    for (const s of series) for (const p of s.points) all.push(p);
    if (drawTitle) text(svg, W / 2, 18, spec.title, { 'text-anchor': 'middle', class: 'nt-title' });
    if (all.length === 0) {
      text(svg, W / 2, m.top + ph / 2, 'no data', { 'text-anchor': 'middle', class: 'nt-empty' });
      container.appendChild(svg);
      return svg;
    }

    // Scales.
    let xlo = Math.min.apply(null, all.map((p) => p[0])), xhi = Math.max.apply(null, all.map((p) => p[0]));
    let ylo = Math.min(0, Math.min.apply(null, all.map((p) => p[1])));
    let yhi = spec.yMax !== undefined ? spec.yMax : Math.max.apply(null, all.map((p) => p[1]));
    if (!(yhi > ylo)) yhi = ylo + 1;
    let xTicks, xs;
    if (spec.logX) {
      if (xhi === xlo) { xlo /= 2; xhi *= 2; }
      const l0 = Math.log(xlo), l1 = Math.log(xhi), pad = (l1 - l0) * 0.04;
      xTicks = logTicks(xlo, xhi);
      xs = (x) => m.left + (Math.log(x) - l0 + pad) / (l1 - l0 + 2 * pad) * pw;
    } else {
      if (xhi === xlo) { xlo -= 1; xhi += 1; }
      const pad = (xhi - xlo) * 0.04;
      xTicks = linearTicks(xlo, xhi, 6, all.every((p) => Number.isInteger(p[0])));
      const a = Math.min(xlo - pad, xTicks[0]), b = Math.max(xhi + pad, xTicks[xTicks.length - 1]);
      xs = (x) => m.left + (x - a) / (b - a) * pw;
    }
    const yTicks = linearTicks(ylo, yhi * (spec.yMax !== undefined ? 1 : 1.05), 5);
    const y0 = Math.min(ylo, yTicks[0]), y1 = Math.max(yhi, yTicks[yTicks.length - 1]);
    const ys = (y) => m.top + ph - (y - y0) / (y1 - y0) * ph;

    // Grid, axes, ticks, labels.
    const grid = el('g', { class: 'nt-grid' }, svg);
    for (const t of yTicks) {
      el('line', { x1: m.left, x2: m.left + pw, y1: ys(t), y2: ys(t) }, grid);
      text(svg, m.left - 6, ys(t) + 4, formatNumber(t), { 'text-anchor': 'end', class: 'nt-tick' });
    }
    for (const t of xTicks) {
      el('line', { x1: xs(t), x2: xs(t), y1: m.top, y2: m.top + ph }, grid);
      text(svg, xs(t), m.top + ph + 16, formatNumber(t), { 'text-anchor': 'middle', class: 'nt-tick' });
    }
    el('rect', { x: m.left, y: m.top, width: pw, height: ph, class: 'nt-frame', fill: 'none' }, svg);
    text(svg, m.left + pw / 2, H - 8, (spec.xLabel || '') + (spec.logX ? ' (log scale)' : ''),
      { 'text-anchor': 'middle', class: 'nt-axis-label' });
    text(svg, 14, m.top + ph / 2, spec.yLabel || '',
      { 'text-anchor': 'middle', class: 'nt-axis-label', transform: 'rotate(-90 14 ' + (m.top + ph / 2) + ')' });

    // Series: a line through the points (in the given order), then the points themselves.
    const cdfLike = (spec.series || []).some((s) => s.cdf);
    for (const s of series) {
      const g = el('g', { class: 'nt-series', 'data-series-name': s.name }, svg);
      if (spec.line !== false && s.points.length > 1) {
        const d = s.points.map((p, i) => (i ? 'L' : 'M') + xs(p[0]).toFixed(2) + ' ' + ys(p[1]).toFixed(2)).join(' ');
        el('path', { d: d, fill: 'none', stroke: s.color, 'stroke-width': 2 }, g);
      }
      for (const p of s.points) {
        const c = el('circle', {
          cx: xs(p[0]).toFixed(2), cy: ys(p[1]).toFixed(2), r: cdfLike ? 2 : 4, fill: s.color,
          class: 'nt-point', 'data-series': s.name, 'data-x': p[0], 'data-y': p[1],
        }, g);
        el('title', {}, c).textContent = s.name + ': ' + formatNumber(p[0]) + ', ' + formatNumber(p[1]);
      }
    }

    // Legend.
    for (const it of legend) {
      const y = H + it.row * 18 + 4;
      el('rect', { x: it.x, y: y, width: 18, height: 10, fill: it.s.color }, svg);
      text(svg, it.x + 24, y + 9, it.s.name, { class: 'nt-legend' });
    }
    container.appendChild(svg);
    return svg;
  }

  // Draws every chart of a list of specs into the element whose id is the spec's id.
  function renderAll(specs) {
    for (const spec of specs) {
      const container = root.document.getElementById(spec.id);
      if (!container) throw new Error('charts: no element with id "' + spec.id + '"');
      chart(container, spec);
    }
  }

  const api = { chart: chart, renderAll: renderAll, cdf: cdf, linearTicks: linearTicks, logTicks: logTicks,
    formatNumber: formatNumber, seriesPoints: seriesPoints, CDF_MAX_POINTS: CDF_MAX_POINTS };
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.NtCharts = api;
})(typeof window !== 'undefined' ? window : globalThis);
