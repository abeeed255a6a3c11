// The results page in a real browser: Debian's chromium, driven headless by playwright-core.
// Results come from the real command line (`vecbench run`, then `vecbench import` of a
// VectorBench JSON and ann-benchmarks HDF5 files written here), the page from
// `vecbench report --html`. Checked: it loads with no console error, no request leaves the
// page and no dialog opens (hostile strings sit in engine-controlled fields); every table
// number equals `vecbench report --json`; switching a selector changes the curves; a point
// can be hovered; it fits a phone's width. A page written from stable-point fixtures (intervals,
// calibrated and flagged points, two builds) draws the interval bars and marks, leaves flagged
// points off the frontier, and switches the recall axis to nines. A page of twelve participants
// keeps every table within its section at 1,400 px. A page of grid groups shows the filters view:
// per participant recall and QPS against selectivity, scattered and clustered, each mark titled
// with its strategy. Screenshots go to test-artifacts/.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
// playwright-core is pinned (1.65.1): it drives the system chromium over CDP and never
// downloads a browser; a newer one may expect protocol features Debian's chromium lacks.
import { chromium, type Browser, type Page } from 'playwright-core';
import { loadDataset } from '../../src/datasets/layout.ts';
import { fmtMaxRecall, fmtQps, type DerivedCell } from '../../src/report/cells.ts';
import type { ChurnRow } from '../../src/report/churn.ts';
import { renderPage } from '../../src/report/html.ts';
import { HOSTILE, naiveTopK, vectorBenchFixture, writeAnnBenchmarksFixtures, writeJson } from '../helpers/import-fixtures.ts';
import { SetupNeeded } from '../../src/util/errors.ts';
import {
  DISK_DATASET,
  DISK_GROUPS,
  diskFixtureResults,
  GRID_DATASET,
  GRID_SELS,
  MANY_NAMES,
  STABLE_DATASET,
  gridFixtureResults,
  manyParticipantsFixture,
  stableFixtureResults,
} from '../helpers/report-fixtures.ts';

/** Debian's chromium (npm run setup installs it); VECBENCH_CHROMIUM points elsewhere. */
const CHROMIUM = process.env.VECBENCH_CHROMIUM ?? '/usr/bin/chromium';
/** As root and on a closed network: no sandbox, and no background connections to refuse. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const DS = 'synthetic-3000';

const dir = mkdtempSync(join(tmpdir(), 'vecbench-browser-'));
const data = join(dir, 'data');
const out = join(dir, 'results');
const files = join(dir, 'files');
after(() => rmSync(dir, { recursive: true, force: true }));

function vecbench(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: data },
    timeout: 900_000,
  });
  assert.equal(r.status, 0, `vecbench ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

interface PageCell {
  dataset: string;
  participant: string;
  search: string;
  group: string;
  target: number;
  status: string;
  value: string;
  lead: string;
  ciLow: string;
  tie: string;
  text: string;
}

let browser: Browser | undefined;
let page: Page;
let pagePath = '';
let cells: DerivedCell[] = [];
let churnRows: ChurnRow[] = [];
const consoleErrors: string[] = [];
const dialogs: string[] = [];
const requests: string[] = [];

before(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new SetupNeeded(`chromium not found at ${CHROMIUM}: the browser test needs Debian's chromium`);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
});

after(async () => {
  await browser?.close();
});

/** Our own results and imported ones through the real command line, and their page opened. */
async function openRunPage(): Promise<void> {
  // Our own results, through the real command line; `run` ends by writing the page.
  const ran = vecbench('run', '--dataset', DS, '--participants', 'exact,hnswlib', '--out', out, '--clients', '4');
  const printed = /^page: (.+index\.html)$/m.exec(ran);
  assert.ok(printed, `run printed no page path:\n${ran}`);
  assert.ok(existsSync(printed[1]), printed[1]);
  assert.equal(printed[1], join(out, 'report', 'index.html'));

  // Published results of other harnesses, imported beside them.
  mkdirSync(files, { recursive: true });
  const ds = await loadDataset(data, DS, { verify: false });
  const ab = await writeAnnBenchmarksFixtures(files, ds, naiveTopK(ds, 10));
  const vb = writeJson(join(files, 'qdrant.json'), vectorBenchFixture(DS));
  vecbench('import', vb, ...ab, '--out', out, '--dataset', DS);

  // Live churn of both measured participants (a short runbook), added to their result files.
  const runbook = join(files, 'churn.json');
  writeFileSync(
    runbook,
    JSON.stringify({
      name: 'page-churn',
      steps: [
        { op: 'load' },
        { op: 'disk', label: 'before' },
        { op: 'freshness', writes: 20 },
        { op: 'mixed', duration_s: 3, write_rate: 100, readers: 2, window_s: 1, queries: 50, recall_samples: 20 },
        { op: 'delete', share: 0.2 },
        { op: 'insert', new_share: 0.2 },
        { op: 'search', group: 'none/10', queries: 50, label: 'after cycle' },
        { op: 'wait' },
        { op: 'disk', label: 'after' },
      ],
    }),
  );
  vecbench('churn', '--dataset', DS, '--participants', 'exact,hnswlib', '--runbook', runbook, '--out', out);

  const reported = vecbench('report', '--out', out, '--html', join(dir, 'page'));
  pagePath = /^page: (.+)$/m.exec(reported)![1];
  const json = JSON.parse(vecbench('report', '--out', out, '--json')) as { cells: DerivedCell[]; churn: ChurnRow[] };
  // The page's tables print the throughput view; --json also has the latency view's cells.
  cells = json.cells.filter((c) => c.view === 'throughput');
  assert.ok(
    json.cells.some((c) => c.view === 'latency'),
    'report --json has latency-view cells',
  );
  churnRows = json.churn;

  page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(pathToFileURL(pagePath).href);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30_000 });
}

/** A page written from fixture results into dir/NAME and opened at 1,400 px, its console errors
 * and page errors collected into `errors`. */
async function openFixturePage(name: string, results: Parameters<typeof renderPage>[0], errors: string[]): Promise<Page> {
  const path = join(dir, name, 'index.html');
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(path, await renderPage(results));
  const p = await browser!.newPage({ viewport: { width: 1400, height: 1000 } });
  p.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  p.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await p.goto(pathToFileURL(path).href);
  await p.waitForSelector('body[data-ready="1"]', { timeout: 30_000 });
  return p;
}

const captions = () => page.$$eval('#charts figure.chart-card figcaption', (els) => els.map((e) => e.textContent ?? ''));

describe('the results page in chromium', () => {
  before(openRunPage);

  test('loads with no console error, no dialog and no request leaving the page; curves drawn', async () => {
    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(
      requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:')),
      [],
    );
    const drawn = await page.$$eval('#charts figure.chart-card svg', (els) => els.length);
    assert.ok(drawn >= 3, `${drawn} charts`);
    // Every participant has dots on the none/10 chart; imported ones are hollow.
    const none10 = page.locator('#charts figure.chart-card[data-group="none/10"]');
    assert.ok((await none10.locator('circle').count()) >= 4 + 5 + 2);
    assert.match((await page.locator('.legend').textContent()) ?? '', /fakeann@ann-benchmarks \(imported\).*qdrant-default@vectorbench \(imported\)/);
  });

  test('engine-provided strings are shown as text, never run', async () => {
    const scripts = await page.$$eval('script', (els) => els.map((e) => ({ type: e.getAttribute('type'), text: e.textContent ?? '' })));
    assert.equal(scripts.length, 2);
    assert.ok(!scripts.some((s) => s.text.trim() === 'alert(1)'));
    const version = await page.locator('dd', { hasText: '1.12.0' }).first().textContent();
    assert.equal(version, `1.12.0 ${HOSTILE}`);
  });

  test('every table number equals vecbench report --json', async () => {
    const shown: PageCell[] = await page.$$eval('td.cell', (els) =>
      els.map((e) => ({
        dataset: e.closest('table')?.getAttribute('data-dataset') ?? '',
        participant: e.getAttribute('data-participant') ?? '',
        search: e.getAttribute('data-search') ?? '',
        group: e.getAttribute('data-group') ?? '',
        target: Number(e.getAttribute('data-target')),
        status: e.getAttribute('data-status') ?? '',
        value: e.getAttribute('data-value') ?? '',
        lead: e.getAttribute('data-lead') ?? '',
        ciLow: e.getAttribute('data-ci-low') ?? '',
        tie: e.getAttribute('data-tie') ?? '',
        text: (e.textContent ?? '').replace(/\s+/g, ' ').trim(),
      })),
    );
    const real = shown.filter((c) => c.status !== 'missing');
    assert.equal(real.length, cells.length, 'one table cell per derived cell');
    for (const c of cells) {
      const s = real.find(
        (x) => x.dataset === c.dataset && x.participant === c.participant && x.search === c.search && x.group === c.group && x.target === c.target,
      );
      assert.ok(s, `no table cell for ${c.participant} ${c.group} ${c.target}`);
      assert.equal(s.status, c.status, `${c.participant} ${c.group} ${c.target}`);
      assert.equal(s.value === '' ? null : Number(s.value), c.value, `${c.participant} ${c.group} ${c.target} value`);
      assert.equal(s.lead === '' ? null : Number(s.lead), c.lead, `${c.participant} ${c.group} ${c.target} lead`);
      assert.equal(s.ciLow === '' ? null : Number(s.ciLow), c.ci_low ?? null, `${c.participant} ${c.group} ${c.target} interval`);
      assert.equal(s.tie, c.tie ? '1' : '0', `${c.participant} ${c.group} ${c.target} tie`);
      // The value first; then the lead, or ≈ where the intervals overlap the best's.
      if (c.value !== null) assert.ok(s.text.startsWith(fmtQps(c.value)) && s.text.includes(c.tie ? '≈' : `×${c.lead!.toFixed(2)}`), s.text);
      if (c.status === 'not_reached') assert.equal(s.text, fmtMaxRecall(c.max_recall!));
    }
    // The imported files are in the table with cells the rule derived.
    assert.ok(cells.some((c) => c.participant === 'fakeann@ann-benchmarks' && c.status === 'interpolated'));
    assert.ok(cells.some((c) => c.participant === 'qdrant-default@vectorbench' && c.status === 'unsupported'));
    // Its exact-search run is a column of its own.
    assert.ok(real.some((x) => x.participant === 'qdrant-default@vectorbench' && x.search === 'exact' && x.group === 'none/10'));
  });

  test('a point can be hovered: its knobs, recall readings, latency and flags', async () => {
    const dot = page.locator('#charts figure.chart-card[data-group="none/10"] circle').last();
    const box = (await dot.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const tip = page.locator('#charts [aria-label="tip"]').first();
    await tip.waitFor({ timeout: 5000 });
    const text = (await tip.textContent()) ?? '';
    for (const label of ['knobs', 'recall (tie-aware)', 'recall strict', 'QPS', 'latency p50/p95/p99 ms', 'flags'])
      assert.ok(text.includes(label), `tip lacks ${label}: ${text}`);
    await page.mouse.move(5, 5);
  });

  test('the --dataset run asked the grid: the filters view has a card per measured participant, each mark the cell at 0.95 with its strategy', async () => {
    await page.selectOption('#sel-dataset', DS);
    await page.selectOption('#sel-k', '10');
    const cardsOf = (k: number) => page.locator(`#filters [data-ds="${DS}"] [data-k="${k}"] figure.filters-card`);
    assert.deepEqual((await cardsOf(10).evaluateAll((fs) => fs.map((f) => f.getAttribute('data-participant')))).sort(), ['exact', 'hnswlib']);
    for (const participant of ['exact', 'hnswlib']) {
      const marks = await page
        .locator(`#filters [data-ds="${DS}"] [data-k="10"] figure.filters-card[data-participant="${participant}"] svg.vb-filters.qps circle.vb-mark`)
        .evaluateAll((cs) =>
          cs.map((c) => ({
            sel: c.getAttribute('data-sel'),
            corr: c.getAttribute('data-corr'),
            strategy: c.getAttribute('data-strategy'),
            title: c.querySelector('title')?.textContent ?? '',
          })),
        );
      const read = cells.filter(
        (c) => c.participant === participant && c.search === 'ann' && c.target === 0.95 && c.k === 10 && /^sel\d+-/.test(c.filter) && c.value !== null,
      );
      assert.ok(read.length > 0, `${participant} has grid cells at 0.95`);
      assert.equal(marks.length, read.length, JSON.stringify(marks));
      for (const c of read) {
        const m = marks.find((x) => `sel${x.sel}-${x.corr}` === c.filter);
        assert.ok(m, `${participant} ${c.group} has a QPS mark`);
        assert.equal(m.strategy, c.strategy, `${participant} ${c.group}`);
        assert.ok(typeof c.strategy === 'string' && m.title.endsWith(`strategy: ${c.strategy}`), m.title);
      }
    }
    assert.deepEqual(consoleErrors, []);
  });

  test('switching a selector changes the curves and the table rows', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true });

    const k10 = await captions();
    assert.ok(k10.every((c) => c.endsWith('k=10')) && k10.includes('none · k=10'), String(k10));
    await page.selectOption('#sel-k', '100');
    // A --dataset run asks the grid and tenants too: at k 100 those the not-asked rule keeps.
    const k100 = await captions();
    assert.ok(k100.includes('none · k=100') && k100.every((c) => c.endsWith('k=100')), String(k100));
    const rowsK = await page.$$eval('table.cells tbody tr', (rows) => [
      ...new Set(rows.filter((r) => !(r as HTMLElement).hidden).map((r) => r.getAttribute('data-k'))),
    ]);
    assert.deepEqual(rowsK, ['100']);

    await page.selectOption('#sel-k', '10');
    await page.selectOption('#sel-filter', 'cat10');
    assert.deepEqual(await captions(), ['cat10 · k=10']);

    const before = await page.locator('#charts svg').first().innerHTML();
    await page.selectOption('#sel-curve', 'p99');
    const after = await page.locator('#charts svg').first().innerHTML();
    assert.notEqual(after, before);
    assert.match((await page.locator('#charts svg').first().textContent()) ?? '', /p99 latency/);
    await page.selectOption('#sel-curve', 'qps');
    await page.selectOption('#sel-filter', 'all');
    assert.deepEqual(consoleErrors, []);
  });

  test('the live churn section: every figure equals report --json, the curves over time are drawn per participant', async () => {
    assert.deepEqual(churnRows.map((r) => r.participant).sort(), ['exact', 'hnswlib']);
    const shown = await page.$$eval('#churn table.churn tr[data-churn-participant]', (trs) =>
      trs.map((tr) => ({
        participant: tr.getAttribute('data-churn-participant') ?? '',
        fields: Object.fromEntries(
          Array.from(tr.querySelectorAll('td[data-churn-field]')).map((td) => [
            td.getAttribute('data-churn-field'),
            { value: td.getAttribute('data-value') ?? '', text: (td.textContent ?? '').trim() },
          ]),
        ) as Record<string, { value: string; text: string }>,
      })),
    );
    assert.deepEqual(shown.map((r) => r.participant).sort(), ['exact', 'hnswlib']);
    for (const row of churnRows) {
      const s = shown.find((x) => x.participant === row.participant)!;
      assert.ok(Object.keys(s.fields).length >= 15, `${row.participant}: ${Object.keys(s.fields)}`);
      for (const [field, { value, text }] of Object.entries(s.fields)) {
        const want = row[field as keyof ChurnRow];
        assert.equal(value === '' ? null : Number(value), typeof want === 'number' ? want : null, `${row.participant} ${field}`);
        if (want === null && field !== 'compaction_s') assert.equal(text, 'not measured', `${row.participant} ${field}`);
      }
      // Real figures: every write became visible, the writer wrote, reads were scored, nothing leaked.
      assert.ok(row.freshness_p50_ms !== null && row.freshness_p50_ms >= 0);
      assert.equal(s.fields.never_visible.text, `0 / 20`);
      assert.ok(row.mixed_write_rate! > 0 && row.mixed_min_recall! > 0.5);
      assert.equal(s.fields.tombstone_leak.text, '0');
      assert.ok(row.recall_after_cycle! > 0.5);
      assert.ok(row.disk_before_bytes! > 0 && row.disk_after_bytes! > 0);
    }
    assert.equal(await page.locator('#churn [data-no-leaks]').count(), 1);
    assert.match((await page.locator('#churn .churn-legend').textContent()) ?? '', /exact.*hnswlib/);
    // Three curves over the mixed step (recall, read p95, write rate), a line per participant,
    // one dot per 1 s window.
    const charts = await page.$$eval('#churn [data-churn-chart]', (els) =>
      els.map((e) => ({
        metric: e.getAttribute('data-metric'),
        drawn: e.getAttribute('data-drawn'),
        lines: e.querySelectorAll('g[aria-label="line"] path').length,
        dots: e.querySelectorAll('g[aria-label="dot"] circle').length,
      })),
    );
    assert.deepEqual(
      charts.map((c) => c.metric),
      ['recall', 'latency_p95_ms', 'write_rate'],
    );
    for (const c of charts) {
      assert.equal(c.drawn, '2', c.metric!);
      assert.equal(c.lines, 2, c.metric!);
      assert.ok(c.dots >= 2 * 2 && c.dots <= 2 * 3, `${c.metric}: ${c.dots} dots`);
    }
    const dot = page.locator('#churn [data-metric="recall"] g[aria-label="dot"] circle').first();
    await dot.scrollIntoViewIfNeeded();
    const box = (await dot.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const tip = page.locator('#churn [aria-label="tip"]').first();
    await tip.waitFor({ timeout: 5000 });
    assert.match((await tip.textContent()) ?? '', /t = \d+\.\d s.*recall = 0\.\d+|t = \d+\.\d s.*recall = 1/);
    await page.mouse.move(5, 5);
    await (await page.$('#churn'))!.screenshot({ path: join(ARTIFACTS, 'report-churn.png') });
    assert.deepEqual(consoleErrors, []);
  });

  test('readable on a narrow screen: nothing wider than the viewport', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(400);
    const { scroll, inner } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
    assert.ok(scroll <= inner + 1, `page is ${scroll}px wide in a ${inner}px viewport`);
    await page.screenshot({ path: join(ARTIFACTS, 'report-narrow.png'), fullPage: true });
    assert.deepEqual(consoleErrors, []);
  });
});

describe('stable points in chromium: intervals, calibrated and flagged points, the nines axis', () => {
  let sp: Page;
  const errors: string[] = [];
  const stable = stableFixtureResults();
  const none10 = () => sp.locator('#charts figure.chart-card[data-group="none/10"]');
  const tickLabels = () => none10().locator('g[aria-label="x-axis tick label"] text').allTextContents();

  before(async () => {
    sp = await openFixturePage('stable', stable, errors);
  });

  test('every point with an interval gets a QPS bar and a recall bar; calibrated points are diamonds, flagged ones red rings', async () => {
    assert.equal(await sp.locator('#sel-dataset').inputValue(), STABLE_DATASET);
    const throughput = stable.flatMap((r) => r.groups.filter((g) => g.key === 'none/10').flatMap((g) => g.points.filter((p) => p.view === 'throughput')));
    assert.equal(throughput.length, 21);
    assert.equal(await none10().locator('g.vb-ci-y line').count(), throughput.length);
    assert.equal(await none10().locator('g.vb-ci-x line').count(), throughput.length);
    assert.equal(await none10().locator('g.vb-calibrated path').count(), throughput.filter((p) => p.calibrated_for !== undefined).length);
    assert.equal(await none10().locator('g.vb-excluded circle').count(), 2);
    // A bar spans the stored interval: its length on the log axis matches the point's ±3 % or ±2 %.
    const bars = await none10()
      .locator('g.vb-ci-y line')
      .evaluateAll((ls) => ls.map((l) => Math.abs(Number(l.getAttribute('y2')) - Number(l.getAttribute('y1')))));
    assert.ok(
      bars.every((h) => h > 0.5),
      String(bars),
    );
    // The p99 curve draws the latency intervals instead.
    await sp.selectOption('#sel-curve', 'p99');
    assert.equal(await none10().locator('g.vb-ci-y line').count(), 21);
    assert.match((await none10().locator('svg').textContent()) ?? '', /p99 latency, ms \(1 at a time, log\)/);
    await sp.selectOption('#sel-curve', 'qps');
    assert.deepEqual(errors, []);
  });

  test('flagged points are not on the drawn frontier; one frontier per participant and build', async () => {
    const lines = await none10()
      .locator('g[aria-label="line"] path')
      .evaluateAll((ps) => ps.map((p) => p.getAttribute('d') ?? ''));
    assert.equal(lines.length, 3, 'gamma builds 0 and 1, delta');
    const vertices = lines.flatMap((d) => [...d.matchAll(/(-?[\d.]+),(-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]));
    const rings = await none10()
      .locator('g.vb-excluded circle')
      .evaluateAll((cs) => cs.map((c) => [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))]));
    assert.equal(rings.length, 2);
    for (const [cx, cy] of rings)
      assert.ok(!vertices.some(([x, y]) => Math.hypot(x - cx, y - cy) < 0.5), `a frontier passes through the flagged point at ${cx},${cy}`);
    // Every other point of build 0 that beats its neighbours is a vertex: the frontier is drawn at all.
    assert.ok(vertices.length >= 3 * 2);
  });

  test('the tooltip names the calibration target, why a point is left off, and the build', async () => {
    const tipOf = async (selector: string) => {
      const mark = none10().locator(selector).first();
      const box = (await mark.boundingBox())!;
      await sp.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      const tip = sp.locator('#charts [aria-label="tip"]').first();
      await tip.waitFor({ timeout: 5000 });
      const text = (await tip.textContent()) ?? '';
      await sp.mouse.move(5, 5);
      return text;
    };
    const calibrated = await tipOf('g.vb-calibrated path');
    assert.match(calibrated, /calibrated for 0\.9\b/);
    assert.match(calibrated, /index build\s*0 \(of 2\)/);
    assert.match(calibrated, /QPS\s*7,400\s+\(95 %: 7,178 – 7,622\)/);
    const flagged = await tipOf('g.vb-excluded circle');
    assert.match(flagged, /left off the frontier: (busy-machine|client-limited)/);
    assert.deepEqual(errors, []);
  });

  test('the nines axis: ticks at 0.9, 0.99, 0.999; back to linear', async () => {
    const linear = await tickLabels();
    assert.ok(linear.includes('0.95') && !linear.includes('0.999'), String(linear));
    const before = await none10().locator('g.vb-point circle').first().getAttribute('cx');
    await sp.selectOption('#sel-xaxis', 'nines');
    const nines = await tickLabels();
    assert.ok(nines.includes('0.9') && nines.includes('0.99') && nines.includes('0.999'), String(nines));
    assert.ok(!nines.includes('0.95'), String(nines));
    assert.match((await none10().locator('svg').textContent()) ?? '', /nines: −log10\(1 − recall\)/);
    assert.notEqual(await none10().locator('g.vb-point circle').first().getAttribute('cx'), before, 'the points moved');
    // The bars and marks are still all there.
    assert.equal(await none10().locator('g.vb-ci-x line').count(), 21);
    mkdirSync(ARTIFACTS, { recursive: true });
    await sp.screenshot({ path: join(ARTIFACTS, 'report-intervals-nines.png'), fullPage: true });
    await sp.selectOption('#sel-xaxis', 'linear');
    assert.deepEqual(await tickLabels(), linear);
    await sp.screenshot({ path: join(ARTIFACTS, 'report-intervals.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });
});

describe('the filters view in chromium: recall and QPS against selectivity, scattered and clustered', () => {
  let fp: Page;
  const errors: string[] = [];
  const results = gridFixtureResults();
  const card = (participant: string, k: number) => fp.locator(`#filters [data-k="${k}"] figure.filters-card[data-participant="${participant}"]`);

  before(async () => {
    fp = await openFixturePage('grid', results, errors);
  });

  test('a card per participant with both series in each chart, a mark per cell, strategy labels in the titles', async () => {
    assert.equal(await fp.locator('#sel-dataset').inputValue(), GRID_DATASET);
    assert.ok(await fp.locator('#filters').isVisible());
    assert.equal(await fp.locator('nav a[href="#filters"]').count(), 1);
    // The k selector starts at 10: the k = 100 row is hidden until asked.
    assert.ok(await fp.locator('#filters [data-k="10"]').isVisible());
    assert.ok(!(await fp.locator('#filters [data-k="100"]').isVisible()));
    assert.equal(await fp.locator('#filters [data-k="10"] figure.filters-card').count(), 2);
    for (const participant of ['gridA', 'gridB']) {
      for (const metric of ['recall', 'qps']) {
        const svg = card(participant, 10).locator(`svg.vb-filters.${metric}`);
        for (const corr of ['scattered', 'clustered'])
          assert.equal(await svg.locator(`g.vb-series[data-corr="${corr}"]`).count(), 1, `${participant} ${metric} ${corr}`);
        const marks = await svg.locator('circle.vb-mark').evaluateAll((cs) =>
          cs.map((c) => ({
            sel: c.getAttribute('data-sel'),
            corr: c.getAttribute('data-corr'),
            strategy: c.getAttribute('data-strategy'),
            fallback: c.getAttribute('data-fallback'),
            title: c.querySelector('title')?.textContent ?? '',
          })),
        );
        // gridB never reaches 0.95 on sel1-clustered/10: the recall chart shows its max recall, the QPS chart nothing.
        const missing = participant === 'gridB' && metric === 'qps' ? 1 : 0;
        assert.equal(marks.length, 2 * GRID_SELS.length - missing, `${participant} ${metric}: ${JSON.stringify(marks)}`);
        for (const m of marks) {
          const sel = Number(m.sel);
          const label = participant === 'gridA' ? (sel < 20 ? 'pre-filter' : 'graph walk') : 'post-filter (declared)';
          assert.equal(m.strategy, label, JSON.stringify(m));
          assert.ok(m.title.includes(`sel${sel}-${m.corr}/10`) && m.title.endsWith(`strategy: ${label}`), m.title);
        }
        const fallback = marks.filter((m) => m.fallback === 'max-recall');
        assert.deepEqual(
          fallback.map((m) => `${m.sel}-${m.corr}`),
          participant === 'gridB' && metric === 'recall' ? ['1-clustered'] : [],
        );
        if (fallback.length > 0) assert.match(fallback[0].title, /not reached at recall 0\.95: max 0\.800 shown instead/);
      }
    }
    assert.match(
      (await card('gridB', 10).locator('ul.filters-missing').textContent()) ?? '',
      /sel1-clustered: not reached at 0\.95, max 0\.800 drawn hollow, no QPS/,
    );
    // QPS marks are the table's cells at 0.95: clustered is drawn above scattered (faster) at each selectivity.
    const cy = (corr: string) =>
      card('gridA', 10)
        .locator(`svg.vb-filters.qps circle.vb-mark[data-corr="${corr}"]`)
        .evaluateAll((cs) => cs.map((c) => Number(c.getAttribute('cy'))));
    const [scattered, clustered] = [await cy('scattered'), await cy('clustered')];
    assert.ok(
      scattered.every((y, i) => clustered[i] < y),
      `${scattered} / ${clustered}`,
    );
    // k = 100: sel20 and sel50 for both; gridA's sel1-scattered/100 is named as not asked.
    await fp.selectOption('#sel-k', '100');
    assert.ok(await fp.locator('#filters [data-k="100"]').isVisible());
    assert.equal(await card('gridA', 100).locator('svg.vb-filters.recall circle.vb-mark').count(), 4);
    assert.match((await card('gridA', 100).locator('ul.filters-missing').textContent()) ?? '', /sel1-scattered: not asked/);
    mkdirSync(ARTIFACTS, { recursive: true });
    await fp.screenshot({ path: join(ARTIFACTS, 'report-filters.png'), fullPage: true });
    await fp.selectOption('#sel-k', '10');
    assert.deepEqual(errors, []);
  });
});

describe('many participants in chromium: every table fits its section at 1,400 px', () => {
  let mp: Page;
  const errors: string[] = [];
  const many = manyParticipantsFixture();

  before(async () => {
    mp = await openFixturePage('many', many, errors);
  });

  test('no table is wider than its section, folded ones opened too', async () => {
    assert.ok(many.length >= 10, 'at least ten participants');
    await mp.$$eval('details', (ds) => ds.forEach((d) => ((d as HTMLDetailsElement).open = true)));
    const tables = await mp.$$eval('main table', (ts) =>
      ts.map((t) => {
        const section = t.closest('section')!;
        return { section: section.id, cls: t.className, width: t.getBoundingClientRect().width, room: section.clientWidth };
      }),
    );
    // The cell table (with pgvector-pglite's exact column), load, memory, disk and cold start, --cold evictions.
    assert.ok(tables.filter((t) => t.section === 'tables').length >= 1);
    assert.ok(tables.filter((t) => t.section === 'general').length >= 4, JSON.stringify(tables));
    for (const t of tables) assert.ok(t.width <= t.room + 1, `a ${t.cls || 'plain'} table in #${t.section} is ${Math.round(t.width)} px wide in ${t.room} px`);
    mkdirSync(ARTIFACTS, { recursive: true });
    await mp.screenshot({ path: join(ARTIFACTS, 'report-many.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });

  test('the memory and cold-start tables: a row per participant, human labels and units, no field names', async () => {
    const memoryRows = await mp.$$eval('#general table.resources.memory tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-participant')));
    assert.deepEqual(
      memoryRows,
      [...MANY_NAMES].sort((a, b) => (a.includes('@') === b.includes('@') ? a.localeCompare(b) : a.includes('@') ? 1 : -1)),
    );
    const general = (await mp.locator('#general').textContent()) ?? '';
    for (const raw of [
      'mem_baseline_anon_bytes',
      'mem_serving',
      'cold_eviction',
      'probe.knobs',
      'cold_accept_s',
      'disk_stopped_bytes',
      'resident_before_bytes',
    ])
      assert.ok(!general.includes(raw), `raw field name ${raw} on the page`);
    const headers = await mp.$$eval('#general table.resources.memory thead th', (ths) => ths.map((th) => th.textContent ?? ''));
    assert.deepEqual(headers.slice(0, 5), ['participant', 'Before any row', 'Ingest and index build, highest', 'While serving, median', 'Samples']);
    // A figure with its unit; a missing one with the numbered reason below its table.
    const chroma = await mp.$$eval('#general table.resources.cold tr[data-participant="chroma"] td', (tds) => tds.map((td) => td.textContent ?? ''));
    assert.equal(chroma[2], '210 ms');
    const usearch = mp.locator('#general table.resources.cold tr[data-participant="usearch"] td').nth(2);
    assert.match((await usearch.textContent()) ?? '', /^not measured\d$/);
    assert.match((await mp.locator('#general div.scroll:has(table.resources.cold) + ol.notes').textContent()) ?? '', /vmtouch is not installed/);
    assert.deepEqual(errors, []);
  });
});

describe('the disk tier in chromium: a tier selector, and MiB read per query against recall with the k side by side', () => {
  let dp: Page;
  const errors: string[] = [];
  const results = diskFixtureResults();

  before(async () => {
    dp = await openFixturePage('disk', results, errors);
  });

  test('the tier selector offers each tier its own datasets; the disk view draws every stored figure', async () => {
    const tiers = await dp.$$eval('#sel-tier option', (os) => os.map((o) => (o as HTMLOptionElement).value));
    assert.deepEqual(tiers.sort(), ['disk', 'in RAM']);
    // In RAM first: its dataset, and no disk chart of the other tier shown.
    await dp.selectOption('#sel-tier', 'in RAM');
    assert.notEqual(await dp.locator('#sel-dataset').inputValue(), DISK_DATASET);
    assert.ok(!(await dp.locator(`#disk [data-ds="${DISK_DATASET}"]`).isVisible()));
    await dp.selectOption('#sel-tier', 'disk');
    assert.equal(await dp.locator('#sel-dataset').inputValue(), DISK_DATASET);
    assert.equal(await dp.locator('#sel-dataset option:not([hidden])').count(), 1, 'the disk tier offers its dataset only');
    const block = dp.locator(`#disk [data-ds="${DISK_DATASET}"]`);
    assert.ok(await block.isVisible());
    const cards = block.locator('figure.disk-card');
    assert.deepEqual(await cards.evaluateAll((fs) => fs.map((f) => f.getAttribute('data-group'))), ['none/10', 'none/100', 'none/1000', 'cat10/10']);
    // The k of one filter side by side: one row, left to right by k.
    const boxes = await block.locator('.disk-row[data-filter="none"] figure.disk-card').evaluateAll((fs) => fs.map((f) => f.getBoundingClientRect().toJSON()));
    assert.equal(boxes.length, 3);
    assert.ok(boxes.every((b) => Math.abs(b.top - boxes[0].top) < 1) && boxes[0].left < boxes[1].left && boxes[1].left < boxes[2].left, JSON.stringify(boxes));
    // Every stored throughput point's figure is drawn, with its value in its tooltip.
    const fmt = (v: number) => (Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toPrecision(3));
    for (const key of DISK_GROUPS) {
      const drawn = (await block.locator(`figure.disk-card[data-group="${key}"] circle title`).allTextContents()).sort();
      const stored = results
        .filter((r) => r.dataset.name === DISK_DATASET)
        .flatMap((r) =>
          r.groups
            .find((g) => g.key === key)!
            .points.filter((p) => p.view === 'throughput')
            .map((p) => `${r.participant}\nrecall = ${p.recall}\nMiB read per query = ${fmt(p.io!.read_bytes_per_query / 2 ** 20)}`),
        )
        .sort();
      assert.deepEqual(drawn, stored, key);
    }
    mkdirSync(ARTIFACTS, { recursive: true });
    await dp.screenshot({ path: join(ARTIFACTS, 'report-disk.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });
});
