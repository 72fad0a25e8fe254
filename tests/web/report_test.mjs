// tests/web/report_test.mjs — opens nexttok's bench reports in headless Chromium (puppeteer-core,
// pinned in package-lock.json) with every request but the page itself refused, and checks: no
// console error, every chart the document calls for is drawn, and each chart's drawn points
// (data-series, data-x, data-y) equal the numbers of the bench document, derived here on their own
// from its fields. The reports come from real runs saved in fixtures/ (bench -o json), rendered by
// `nexttok bench --report-from`; a screenshot of each is written to a temporary directory.
//   node report_test.mjs                     the test (scripts/browser_test.sh)
//   node report_test.mjs --picture OUT.png [RUN.json]   also the README's picture: the top of the
//                                                       report of RUN.json (default: the comparison fixture)
// Env: NEXTTOK_BIN (the binary), CHROMIUM_BIN (default /usr/bin/chromium).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import puppeteer from 'puppeteer-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = process.env.NEXTTOK_BIN || path.join(here, '../../build/nexttok');
const chromium = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
const pictureAt = process.argv.indexOf('--picture');
const picture = pictureAt > 0 ? process.argv[pictureAt + 1] : null;
const pictureFrom = (pictureAt > 0 && process.argv[pictureAt + 2]) || path.join(here, 'fixtures/compare.json');

// ---- What each chart must show, from the bench document's fields ----

const finite = (v) => typeof v === 'number' && Number.isFinite(v);

function runsOf(doc) {
  if (doc.servers) return doc.servers.map((s) => ({ label: s.label, doc: s.result }));
  return [{ label: doc.model || 'run', doc }];
}

function severalLengths(run) {
  return new Set(run.doc.levels.map((l) => l.n_prompt + '/' + l.n_gen)).size > 1;
}

const lengths = (l) => ' p=' + l.n_prompt + ' n=' + l.n_gen;
const group = (run, l) => run.label + (severalLengths(run) ? lengths(l) : '');

function levelKey(run, scenario, l) {
  if (scenario === 'prompt-length') return 'p=' + l.n_prompt;
  const k = scenario === 'rate' ? 'rate=' + l.rate : 'c=' + l.concurrency;
  return k + (severalLengths(run) ? lengths(l) : '');
}

// The empirical CDF as charts.js must draw it: sorted values, at most 200 points at evenly spaced
// ranks (rounded), each (value, rank / n).
function cdfPoints(values) {
  const v = values.filter(finite).sort((a, b) => a - b);
  const n = v.length;
  const ranks = n <= 200 ? v.map((_, i) => i) : Array.from({ length: 200 }, (_, k) => Math.round((k * (n - 1)) / 199));
  return ranks.map((i) => [v[i], (i + 1) / n]);
}

// Output tokens/s over time as the report must bin it: each chunk with text (one token) at its
// request's start_s + TTFT + the gaps so far; bins of the first width with at most 40 of them up to
// the last token; a point per bin at its end.
const TIME_BINS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];
function tokensOverTime(samples) {
  const times = [];
  for (const s of samples) {
    if (s.error !== null || !finite(s.start_s) || !finite(s.ttft_ms)) continue;
    let t = s.start_s + s.ttft_ms / 1000;
    times.push(t);
    for (const g of s.itl_ms) if (finite(g)) times.push((t += g / 1000));
  }
  if (times.length === 0) return [];
  const last = Math.max(...times);
  const bin = TIME_BINS.find((b) => b * 40 >= last) ?? TIME_BINS[TIME_BINS.length - 1];
  const counts = new Array(Math.floor(last / bin) + 1).fill(0);
  for (const t of times) counts[Math.min(counts.length - 1, Math.max(0, Math.floor(t / bin)))]++;
  return counts.map((c, i) => [(i + 1) * bin, c / bin]);
}

// {chart id: {series name: [[x, y], ...]}}, points with a y that is not a number left out (not drawn).
function expectedCharts(doc) {
  const charts = {};
  const add = (id, name, x, y) => {
    const c = (charts[id] = charts[id] || {});
    if (!finite(x) || !finite(y)) return;
    (c[name] = c[name] || []).push([x, y]);
  };
  if (Array.isArray(doc)) return expectedOffline(doc, charts, add);
  const runs = runsOf(doc);
  const scenario = runs[0].doc.scenario;
  for (const run of runs) {
    for (const l of run.doc.levels) {
      if (scenario === 'concurrency') {
        add('chart-tps-concurrency', group(run, l), l.concurrency, l.output_tokens_per_s);
        add('chart-ttft-concurrency', group(run, l), l.concurrency, l.ttft_ms.p99);
      } else if (scenario === 'prompt-length') {
        add('chart-ttft-prompt', run.label, l.n_prompt, l.ttft_ms.p50);
      } else if (scenario === 'rate') {
        add('chart-goodput-rate', group(run, l) + ' goodput', l.rate, l.goodput_req_s);
        add('chart-goodput-rate', group(run, l) + ' offered', l.rate, l.offered_req_s);
      } else if (scenario === 'multi-turn') {
        const name = run.doc.levels.length > 1 ? run.label + ' ' + levelKey(run, scenario, l) : run.label;
        for (const t of l.turns) {
          add('chart-turn-tokens', name + ' cached', t.turn, t.cached_tokens_mean);
          add('chart-turn-tokens', name + ' prefilled', t.turn, t.prefilled_tokens_mean);
          add('chart-turn-ttft', name, t.turn, t.ttft_ms.p50);
        }
      }
      const key = run.label + ' ' + levelKey(run, scenario, l);
      const ok = l.samples.filter((s) => s.error === null);
      charts['chart-cdf-ttft'] = charts['chart-cdf-ttft'] || {};
      charts['chart-cdf-itl'] = charts['chart-cdf-itl'] || {};
      for (const [x, y] of cdfPoints(ok.map((s) => s.ttft_ms))) add('chart-cdf-ttft', key, x, y);
      for (const [x, y] of cdfPoints(ok.flatMap((s) => s.itl_ms))) add('chart-cdf-itl', key, x, y);
      for (const s of (l.kv_cache_usage && l.kv_cache_usage.samples) || []) add('chart-kv-time', key, s.t_s, 100 * s.usage);
      for (const [x, y] of tokensOverTime(l.samples)) add('chart-tps-time', key, x, y);
    }
  }
  return charts;
}

function expectedOffline(rows, charts, add) {
  const kind = (r) => (r.n_parallel > 0 ? 'par' : r.n_prompt > 0 ? 'pp' : 'tg');
  const severalThreads = new Set(rows.map((r) => r.n_threads)).size > 1;
  const severalDepths = new Set(rows.filter((r) => kind(r) !== 'par').map((r) => r.n_depth)).size > 1;
  const who = (r) => path.basename(r.model_filename) + (severalThreads ? ' t=' + r.n_threads : '');
  const bandwidth = rows.some((r) => finite(r.bandwidth_pct));
  for (const r of rows) {
    if (kind(r) === 'pp') {
      add('chart-pp-prompt', who(r) + (severalDepths ? ' d=' + r.n_depth : ''), r.n_prompt, r.avg_ts);
      if (severalDepths) add('chart-pp-depth', who(r) + ' pp' + r.n_prompt, r.n_depth, r.avg_ts);
    } else if (kind(r) === 'tg') {
      const name = severalDepths ? who(r) + ' tg' + r.n_gen : who(r);
      const x = severalDepths ? r.n_depth : r.n_gen;
      add('chart-tg', name, x, r.avg_ts);
      if (bandwidth) add('chart-tg-bandwidth', name, x, r.bandwidth_pct);
    } else {
      add('chart-tg-parallel', who(r) + ' tg' + r.n_gen, r.n_parallel, r.avg_ts);
    }
  }
  return charts;
}

// ---- The browser ----

function render(fixture, outDir) {
  const html = path.join(outDir, path.basename(fixture, '.json') + '.html');
  const r = spawnSync(bin, ['bench', '--report-from', fixture, '--report', html], { encoding: 'utf8' });
  assert.equal(r.status, 0, `nexttok bench --report-from ${fixture} failed: ${r.stderr}`);
  return html;
}

async function openReport(browser, html) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1000, height: 800 });
  const errors = [], refused = [];
  const pageUrl = pathToFileURL(html).href;
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    if (req.url() === pageUrl) return req.continue();
    refused.push(req.url());
    return req.abort();
  });
  await page.goto(pageUrl, { waitUntil: 'load' });
  return { page, errors, refused };
}

async function checkReport(browser, fixture, outDir) {
  const doc = JSON.parse(fs.readFileSync(fixture, 'utf8'));
  const html = render(fixture, outDir);
  const { page, errors, refused } = await openReport(browser, html);
  const name = path.basename(fixture);
  assert.deepEqual(errors, [], `${name}: console errors`);
  assert.deepEqual(refused, [], `${name}: the page asked for something beyond itself`);
  const drawn = await page.$$eval('svg[data-chart-id]', (svgs) => svgs.map((svg) => ({
    id: svg.dataset.chartId,
    tableRows: svg.closest('section').querySelectorAll('table tbody tr').length,
    points: [...svg.querySelectorAll('[data-series]')].map((e) => [e.dataset.series, Number(e.dataset.x), Number(e.dataset.y)]),
  })));
  const want = expectedCharts(doc);
  const wantIds = Object.keys(want).filter((id) => Object.keys(want[id]).length > 0);
  const drawnIds = drawn.map((c) => c.id);
  for (const id of wantIds) assert.ok(drawnIds.includes(id), `${name}: chart ${id} is not drawn (drawn: ${drawnIds})`);
  let points = 0;
  for (const c of drawn) {
    assert.ok(c.id in want, `${name}: unexpected chart ${c.id}`);
    const got = {};
    for (const [series, x, y] of c.points) (got[series] = got[series] || []).push([x, y]);
    assert.deepEqual(got, want[c.id], `${name}: ${c.id}: drawn points differ from the document`);
    assert.ok(c.tableRows > 0, `${name}: ${c.id} has no table of its numbers`);
    points += c.points.length;
  }
  const shot = path.join(outDir, path.basename(fixture, '.json') + '.png');
  await page.screenshot({ path: shot, fullPage: true });
  console.log(`report_test: ${name}: ${drawn.length} charts, ${points} points equal the document's; screenshot ${shot}`);
  await page.close();
  return drawn.length;
}

// The README's picture: the top of a report (its title and first two charts).
async function takePicture(browser, outDir, from, to) {
  const html = render(from, outDir);
  const { page, errors } = await openReport(browser, html);
  assert.deepEqual(errors, []);
  await page.setViewport({ width: 760, height: 800 });
  const bottom = await page.$eval('section.chart-block:nth-of-type(2) .chart',
    (e) => e.getBoundingClientRect().bottom + window.scrollY);
  await page.screenshot({ path: to, clip: { x: 0, y: 0, width: 760, height: Math.ceil(bottom) + 8 } });
  console.log(`report_test: picture ${to} (${fs.statSync(to).size} bytes)`);
  await page.close();
}

const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nexttok-report-test-'));
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'],
});
try {
  console.log(`report_test: ${await browser.version()}, puppeteer-core ${JSON.parse(fs.readFileSync(path.join(here, 'node_modules/puppeteer-core/package.json'))).version}`);
  const fixtures = fs.readdirSync(path.join(here, 'fixtures')).filter((f) => f.endsWith('.json')).sort();
  assert.ok(fixtures.length >= 6, 'the fixtures are missing');
  let charts = 0;
  for (const f of fixtures) charts += await checkReport(browser, path.join(here, 'fixtures', f), outDir);
  if (picture) await takePicture(browser, outDir, pictureFrom, picture);
  console.log(`report_test: PASS: ${fixtures.length} reports, ${charts} charts; screenshots in ${outDir}`);
} finally {
  await browser.close();
}
