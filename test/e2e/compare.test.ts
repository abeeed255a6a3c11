// vecbench compare: the pairing and verdict rules of compareCells on hand-built cells, the text,
// and the command end to end on two result directories written to disk.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import type { DerivedCell } from '../../src/report/cells.ts';
import type { Series } from '../../src/metrics/paired.ts';
import { compareCells, hostSpeedNote, hostSpeedRatio, isShown, renderCompare, type CellPair } from '../../src/report/compare.ts';
import { resultSchema, type ResultPoint } from '../../src/results/schema.ts';
import { writeResult } from '../../src/results/store.ts';

function cell(over: Partial<DerivedCell> = {}): DerivedCell {
  return {
    dataset: 'ds',
    participant: 'alpha',
    origin: 'measured',
    group: 'none/10',
    filter: 'none',
    k: 10,
    target: 0.9,
    view: 'throughput',
    search: 'ann',
    status: 'calibrated',
    value: 1000,
    ci_low: 980,
    ci_high: 1020,
    short_share: 0,
    low_recall_share: 0,
    empty_share: 0,
    read_bytes_per_query: null,
    lead: 1,
    lead_ci: null,
    lead_method: null,
    tie: false,
    max_recall: 0.99,
    read_recall: [0.9],
    driven: '4 in flight',
    excluded: {},
    ...over,
  };
}

const noValue = (status: DerivedCell['status'], over: Partial<DerivedCell> = {}) =>
  cell({ status, value: null, ci_low: null, ci_high: null, lead: null, read_recall: [], ...over });

function only(a: DerivedCell[], b: DerivedCell[]): CellPair {
  const { pairs } = compareCells(a, b);
  assert.equal(pairs.length, 1);
  return pairs[0];
}

const close = (x: number, y: number) => assert.ok(Math.abs(x - y) <= 1e-12 * Math.max(1, Math.abs(y)), `${x} != ${y}`);

describe('compareCells', () => {
  test('overlapping intervals are the same; the ratio interval is [B low / A high, B high / A low]', () => {
    const p = only([cell()], [cell({ value: 1010, ci_low: 1000, ci_high: 1030 })]);
    assert.equal(p.change, 'same');
    assert.equal(p.overlap, true);
    close(p.ratio!, 1.01);
    close(p.ratio_ci![0], 1000 / 1020);
    close(p.ratio_ci![1], 1030 / 980);
  });

  test('touching intervals still overlap (no difference)', () => {
    assert.equal(only([cell()], [cell({ value: 1030, ci_low: 1020, ci_high: 1040 })]).change, 'same');
  });

  test('a disjoint lower interval is worse, a disjoint higher one better', () => {
    const worse = only([cell()], [cell({ value: 900, ci_low: 890, ci_high: 910 })]);
    assert.equal(worse.change, 'worse');
    assert.equal(worse.overlap, false);
    assert.ok(worse.ratio_ci![1] < 1, 'the whole ratio interval lies below 1');
    const better = only([cell()], [cell({ value: 1100, ci_low: 1090, ci_high: 1110 })]);
    assert.equal(better.change, 'better');
    assert.ok(better.ratio_ci![0] > 1);
  });

  test('a side without an interval stands at its value: [v, v]', () => {
    const bare = { ci_low: null, ci_high: null };
    assert.equal(only([cell(bare)], [cell(bare)]).change, 'same');
    const p = only([cell(bare)], [cell({ ...bare, value: 1001 })]);
    assert.equal(p.change, 'better');
    assert.deepEqual(p.ratio_ci, [1001 / 1000, 1001 / 1000]);
    // One side bare: the other side's interval still counts.
    const q = only([cell()], [cell({ ...bare, value: 1015 })]);
    assert.equal(q.change, 'same');
    close(q.ratio_ci![0], 1015 / 1020);
    close(q.ratio_ci![1], 1015 / 980);
    assert.equal(compareCells([cell()], [cell({ ...bare, value: 1015 })]).summary.without_interval, 1);
  });

  test('cells only in one directory, matched by dataset, participant, group, target and view', () => {
    const a = [cell()];
    const b = [cell(), cell({ target: 0.95 }), cell({ participant: 'beta' }), cell({ dataset: 'other' }), cell({ group: 'cat10/10', filter: 'cat10' })];
    const { pairs, summary } = compareCells(a, b);
    assert.equal(pairs.length, 5);
    assert.equal(pairs.filter((p) => p.change === 'only_b').length, 4);
    for (const p of pairs.filter((x) => x.change === 'only_b')) {
      assert.equal(p.a, null);
      assert.equal(p.ratio, null);
    }
    assert.equal(summary.both_read, 1);
    assert.equal(summary.counts.only_b, 4);
    const back = compareCells(b, a);
    assert.equal(back.summary.counts.only_a, 4);
  });

  test('status changes: a value lost or gained, a different status without value, the same status', () => {
    assert.equal(only([cell()], [noValue('not_reached', { max_recall: 0.88 })]).change, 'lost');
    assert.equal(only([noValue('not_reached')], [cell()]).change, 'gained');
    const st = only([noValue('not_reached')], [noValue('bracket_too_wide')]);
    assert.equal(st.change, 'status');
    assert.equal(isShown(st), true);
    const same = only([noValue('not_asked')], [noValue('not_asked')]);
    assert.equal(same.change, 'no_value');
    assert.equal(isShown(same), false);
    assert.equal(same.overlap, null);
  });

  test('summary: overlap share and median half-width over cells both read only', () => {
    const t = (target: number, group = 'none/10') => ({ target, group });
    const a = [
      cell({ ...t(0.9), value: 1000, ci_low: 990, ci_high: 1010 }), // 1 %
      cell({ ...t(0.95), value: 1000, ci_low: 980, ci_high: 1020 }), // 2 %
      cell({ ...t(0.99), value: 1000, ci_low: 950, ci_high: 1050 }), // 5 %
      cell({ ...t(0.9, 'none/100'), value: 1000, ci_low: 500, ci_high: 1500 }), // 50 %, lost in B: not counted
    ];
    const b = [
      cell({ ...t(0.9), value: 1000, ci_low: 990, ci_high: 1010 }), // 1 %, overlaps
      cell({ ...t(0.95), value: 2000, ci_low: 1880, ci_high: 2120 }), // 6 %, better
      cell({ ...t(0.99), value: 1000, ci_low: null, ci_high: null }), // no interval: not in B's median
      noValue('not_reached', t(0.9, 'none/100')),
    ];
    const { summary } = compareCells(a, b);
    assert.equal(summary.both_read, 3);
    assert.equal(summary.overlap, 2);
    close(summary.overlap_share!, 2 / 3);
    close(summary.median_half_width.a!, 0.02);
    close(summary.median_half_width.b!, (0.01 + 0.06) / 2);
    assert.equal(summary.without_interval, 1);
    assert.equal(summary.counts.better, 1);
    assert.equal(summary.counts.lost, 1);
  });

  test('nothing read on both sides: no share, no median', () => {
    const { summary } = compareCells([noValue('not_reached')], [cell({ target: 0.95 })]);
    assert.equal(summary.both_read, 0);
    assert.equal(summary.overlap_share, null);
    assert.deepEqual(summary.median_half_width, { a: null, b: null });
    assert.deepEqual(summary.worst, []);
  });

  test('worst: largest |log ratio| first, --worst N of them', () => {
    const targets = [0.9, 0.95, 0.99];
    const groups = ['none/10', 'none/100'];
    const keys = groups.flatMap((group) => targets.map((target) => ({ group, target })));
    const ratios = [0.5, 1.1, 3.0, 0.9, 1.0, 0.3];
    const a = keys.map((k) => cell({ ...k, value: 1000, ci_low: null, ci_high: null }));
    const b = keys.map((k, i) => cell({ ...k, value: 1000 * ratios[i], ci_low: null, ci_high: null }));
    const byRatio = (w: CellPair[]) => w.map((p) => Number(p.ratio!.toFixed(6)));
    assert.deepEqual(byRatio(compareCells(a, b).summary.worst), [0.3, 3.0, 0.5, 0.9, 1.1]);
    assert.deepEqual(byRatio(compareCells(a, b, { worst: 2 }).summary.worst), [0.3, 3.0]);
    assert.deepEqual(compareCells(a, b, { worst: 0 }).summary.worst, []);
  });

  test('pairs come in the table order: dataset, group by k then filter, target, participant', () => {
    const a = [
      cell({ group: 'none/100', k: 100 }),
      cell({ participant: 'beta', target: 0.95 }),
      cell({ target: 0.95 }),
      cell({ group: 'cat10/10', filter: 'cat10' }),
    ];
    const { pairs } = compareCells(a, a);
    assert.deepEqual(
      pairs.map((p) => `${p.group} ${p.target} ${p.participant}`),
      ['none/10 0.95 alpha', 'none/10 0.95 beta', 'cat10/10 0.9 alpha', 'none/100 0.9 alpha'],
    );
  });
});

describe('renderCompare', () => {
  test('rows for cells read or changed, a participant in one directory folded, the summary', () => {
    const a = [
      cell(),
      cell({ target: 0.95, value: 500, ci_low: 490, ci_high: 510 }),
      noValue('not_asked', { group: 'cat1000/10', filter: 'cat1000' }),
      noValue('not_reached', { target: 0.99 }),
    ];
    const b = [
      cell({ value: 1010, ci_low: 1000, ci_high: 1030 }),
      cell({ target: 0.95, value: 250, ci_low: 245, ci_high: 255 }),
      noValue('not_asked', { group: 'cat1000/10', filter: 'cat1000' }),
      cell({ target: 0.99, value: 100, ci_low: 99, ci_high: 101 }),
      cell({ participant: 'gamma' }),
      cell({ participant: 'gamma', target: 0.95 }),
    ];
    const text = renderCompare(compareCells(a, b), { a: '/runs/a', b: '/runs/b', notes: new Map([['ds', ['alpha: e 1.0 in A, e 1.1 in B']]]) });
    const lines = text.split('\n');
    assert.equal(lines[0], 'A = /runs/a');
    assert.ok(lines.includes('alpha: e 1.0 in A, e 1.1 in B'));
    assert.match(text, /^none\/10\s+0\.90\s+alpha\s+1,000 ±2\.0%\s+1,010 ±1\.5%\s+x1\.01 \[0\.98, 1\.05\]\s+same$/m);
    assert.match(text, /^none\/10\s+0\.95\s+alpha\s+500 ±2\.0%\s+250 ±2\.0%\s+x0\.50 \[0\.48, 0\.52\]\s+WORSE$/m);
    assert.match(text, /^none\/10\s+0\.99\s+alpha\s+max 0\.990\s+100 ±1\.0%\s+-\s+value only in B$/m);
    // The same status twice is not a row; gamma is one line.
    assert.doesNotMatch(text, /cat1000/);
    assert.doesNotMatch(text, /gamma\s+-/);
    assert.ok(lines.includes('gamma: only in B'));
    assert.ok(lines.includes('2 cells both read; 1 (50%) intervals overlap; median CI half-width A 2.0%, B 1.7%'), text);
    assert.ok(lines.includes('better 0, worse 1; value only in A 0, only in B 1; status changed 0; cells only in A 0, only in B 2'), text);
    const worst = lines.slice(lines.findIndex((l) => l.startsWith('largest changes')));
    assert.match(worst[3], /^ds\s+none\/10\s+0\.95\s+alpha\s+x0\.50/);
    assert.match(worst[4], /^ds\s+none\/10\s+0\.90\s+alpha\s+x1\.01/);
  });
});

// ---- End to end: two result directories on disk and the real command line ----

type ResultInput = z.input<typeof resultSchema>;
const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vecbench-compare-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function vecbench(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, VECBENCH_QUIET: '1' }, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A throughput point calibrated for `target`, read there, with a QPS interval of ±spread. */
function throughputPoint(i: number, target: number, recall: number, qps: number, spread: number): ResultPoint {
  const mean = 4000 / qps;
  const lat = { mean, p50: mean * 0.9, p95: mean * 1.5, p99: mean * 2, p999: mean * 3 };
  const latCi = Object.fromEntries(Object.entries(lat).map(([k, v]) => [k, [v * 0.95, v * 1.05]])) as NonNullable<ResultPoint['ci']>['latency_ms'];
  return {
    ladder_index: 10 + i,
    knobs: { ef: 20 + 10 * i },
    view: 'throughput',
    clients: 4,
    queries: 200,
    query_slice: [0, 199],
    recall,
    recall_strict: recall,
    recall_threshold: recall,
    short_results: 0,
    low_recall_share: 0,
    unknown_ids: 0,
    duplicate_ids: 0,
    filter_violations: 0,
    qps,
    duration_s: 200 / qps,
    latency_ms: { ...lat, max: mean * 4 },
    flags: [],
    passes: 5,
    ci: { qps: [qps * (1 - spread), qps * (1 + spread)], recall: [recall, recall], latency_ms: latCi },
    calibrated_for: target,
    driven: '4 in flight',
  };
}

type Curve = [target: number, recall: number, qps: number][];

function writeRun(out: string, version: string, curves: Record<string, Curve>, hash = 'c'.repeat(64)): void {
  const groups = Object.entries(curves).map(([key, curve]) => {
    const [filter, k] = key.split('/');
    return {
      key,
      filter,
      k: Number(k),
      status: 'measured' as const,
      median_matches: 3000,
      points: curve.map(([t, r, q], i) => throughputPoint(i, t, r, q, 0.02)),
      skipped: [],
    };
  });
  const input: ResultInput = {
    format: 'vecbench-result/1',
    participant: 'alpha',
    engine: 'alpha-engine',
    engine_version: version,
    origin: 'measured',
    dataset: { name: 'synthetic-compare', n: 3000, d: 64, nq: 200, metric: 'ip', hash },
    settings: { index: { M: 16 }, ladders: [{ knobs: { ef: [20, 40, 80] } }] },
    filter_strategy: 'filtered during the graph walk',
    hardware: { cpu: 'Test CPU', cores: 2, memory_bytes: 8 * 2 ** 30, os: 'Linux 6', node: process.version },
    run: { vecbench_version: '0.1.0', started: '2025-12-01T00:00:00.000Z', updated: '2025-12-01T00:01:00.000Z', query_seed: 1, clients: 4, complete: true },
    load: { rows: 3000, ingest_s: 0.5, index_s: 1.5, disk_bytes: null },
    groups,
    extra: {},
  };
  writeResult(out, resultSchema.parse(input));
}

const A = join(dir, 'a');
const SAME = join(dir, 'same');
const WORSE = join(dir, 'worse');
const EMPTY = join(dir, 'empty');
const OTHER_DATA = join(dir, 'other-data');
// cat10/10 does not reach 0.99 in A: not_reached on both sides of SAME (not a row), gained in WORSE.
writeRun(A, '1.0.0', {
  'none/10': [
    [0.9, 0.9, 5000],
    [0.95, 0.95, 3000],
    [0.99, 0.99, 1000],
  ],
  'cat10/10': [
    [0.9, 0.9, 2000],
    [0.95, 0.95, 1200],
  ],
});
writeRun(SAME, '1.0.0', {
  'none/10': [
    [0.9, 0.9, 5050],
    [0.95, 0.95, 2980],
    [0.99, 0.99, 1010],
  ],
  'cat10/10': [
    [0.9, 0.9, 1990],
    [0.95, 0.95, 1210],
  ],
});
writeRun(WORSE, '1.1.0', {
  'none/10': [
    [0.9, 0.9, 5050],
    [0.95, 0.95, 2980],
    [0.99, 0.99, 700],
  ],
  'cat10/10': [
    [0.9, 0.9, 1990],
    [0.95, 0.95, 1210],
    [0.99, 0.99, 400],
  ],
});
writeRun(OTHER_DATA, '1.0.0', { 'none/10': [[0.9, 0.9, 5000]] }, 'd'.repeat(64));
mkdirSync(EMPTY);

describe('vecbench compare end to end', () => {
  test('a run that reproduces: every cell the same, exit 0', () => {
    const r = vecbench('compare', A, SAME);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^synthetic-compare: throughput \(QPS\) at target recall/m);
    assert.match(r.stdout, /^none\/10\s+0\.99\s+alpha\s+1,000 ±2\.0%\s+1,010 ±2\.0%\s+x1\.01 \[0\.97, 1\.05\]\s+same$/m);
    assert.equal(r.stdout.match(/^\S+\s+0\.\d\d\s+alpha\s.*\ssame$/gm)?.length, 5, r.stdout);
    assert.doesNotMatch(r.stdout, /cat10\/10\s+0\.99/, 'not reached on both sides: no row');
    assert.match(r.stdout, /^5 cells both read; 5 \(100%\) intervals overlap; median CI half-width A 2\.0%, B 2\.0%$/m);
    assert.doesNotMatch(r.stdout, /alpha-engine/, 'same engine version: no note');
  });

  test('a significantly worse cell: WORSE, exit 0 plainly, exit 1 with --fail-on-regression', () => {
    const plain = vecbench('compare', A, WORSE);
    assert.equal(plain.code, 0, plain.stderr);
    // 700 [686, 714] against 1000 [980, 1020]: 686 / 1020 = 0.67, 714 / 980 = 0.73.
    assert.match(plain.stdout, /^none\/10\s+0\.99\s+alpha\s+1,000 ±2\.0%\s+700 ±2\.0%\s+x0\.70 \[0\.67, 0\.73\]\s+WORSE$/m);
    assert.match(plain.stdout, /^cat10\/10\s+0\.99\s+alpha\s+max 0\.950\s+400 ±2\.0%\s+-\s+value only in B$/m);
    assert.match(plain.stdout, /^alpha: alpha-engine 1\.0\.0 in A, alpha-engine 1\.1\.0 in B$/m);
    assert.match(plain.stdout, /^better 0, worse 1; value only in A 0, only in B 1;/m);
    const fail = vecbench('compare', A, WORSE, '--fail-on-regression');
    assert.equal(fail.code, 1, fail.stderr);
    assert.match(fail.stderr, /1 cell significantly worse in B/);
    assert.equal(vecbench('compare', A, SAME, '--fail-on-regression').code, 0);
  });

  test('--json parses, with the pairs and the summary', () => {
    const r = vecbench('compare', A, WORSE, '--json', '--worst', '2');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.a, A);
    assert.equal(out.summary.both_read, 5);
    assert.equal(out.summary.counts.worse, 1);
    assert.equal(out.summary.worst.length, 2);
    assert.equal(out.summary.worst[0].group, 'none/10');
    assert.equal(out.summary.worst[0].target, 0.99);
    const p = out.pairs.find((x: CellPair) => x.group === 'none/10' && x.target === 0.99);
    assert.equal(p.change, 'worse');
    assert.equal(p.a.status, 'calibrated');
    assert.deepEqual(p.a.ci_low, 980);
  });

  test('a dataset whose contents differ is a warning under its heading', () => {
    const r = vecbench('compare', A, OTHER_DATA);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^warning: the dataset's contents differ \(hash cccccccccccc in A, dddddddddddd in B\)/m);
    assert.doesNotMatch(vecbench('compare', A, SAME).stdout, /^warning:/m);
  });

  test('an empty or missing directory is one line naming it, exit 2', () => {
    const empty = vecbench('compare', A, EMPTY);
    assert.equal(empty.code, 2);
    assert.equal(empty.stderr.trim().split('\n').length, 1);
    assert.ok(empty.stderr.includes(`no result files in ${EMPTY}`), empty.stderr);
    const missing = vecbench('compare', join(dir, 'nope'), A);
    assert.equal(missing.code, 2);
    assert.ok(missing.stderr.includes(`directory ${join(dir, 'nope')} (A) does not exist`), missing.stderr);
    assert.equal(missing.stdout, '');
  });
});

describe('hostSpeedNote', () => {
  test('a host slower in B is named with its interval; equal hosts read as no difference; no probes, no line', () => {
    const a = Array.from({ length: 40 }, (_, i) => 20 + (i % 5) * 0.1);
    const slower = a.map((x) => x * 1.3);
    const note = hostSpeedNote(a, slower)!;
    assert.match(note, /B's host ran x0\.77 \[0\.7\d, 0\.7\d\] of A's speed; the verdicts judge each cell against it/);
    assert.match(hostSpeedNote(a, [...a].reverse())!, /x1\.00 .*\(no difference\)/);
    assert.equal(hostSpeedNote([], a), null);
  });
});

describe("judged against the hosts' speed, and leads", () => {
  // Run B's host ran x0.86 as fast (its probes say so): every cell of the same code reads x0.86.
  const slowerHost = { ratio: 0.86, low: 0.82, high: 0.9 };
  const names = ['alpha', 'beta', 'gamma', 'delta'];
  const row = (scale: (name: string) => number, view: DerivedCell['view'] = 'throughput') =>
    names.map((participant, i) => {
      const v = (1000 + 300 * i) * scale(participant);
      return cell({ participant, view, value: v, ci_low: v * 0.97, ci_high: v * 1.03, lead: null });
    });

  test('a slower host does not turn the same code into regressions; a participant that slowed itself is still caught', () => {
    const a = row(() => 1);
    const b = row((n) => 0.86 * (n === 'gamma' ? 0.6 : 1));
    const raw = compareCells(a, b);
    assert.equal(raw.summary.counts.worse, 4, 'as measured, every cell reads worse');
    assert.ok(raw.pairs.every((p) => p.judged === 'raw'));
    const judged = compareCells(a, b, { hostSpeed: new Map([['ds', slowerHost]]) });
    assert.deepEqual(
      judged.pairs.map((p) => [p.participant, p.change]),
      [
        ['alpha', 'same'],
        ['beta', 'same'],
        ['delta', 'same'],
        ['gamma', 'worse'],
      ],
    );
    const alpha = judged.pairs.find((p) => p.participant === 'alpha')!;
    assert.equal(alpha.judged, 'host-speed');
    close(alpha.judged_ci![0], alpha.ratio_ci![0] / slowerHost.high);
    close(alpha.judged_ci![1], alpha.ratio_ci![1] / slowerHost.low);
    assert.equal(judged.summary.judged_host_speed, 4);
    assert.match(renderCompare(judged, { a: 'A', b: 'B' }), /4 of them judged against the hosts' measured speed/);
  });

  test('latency cells: lower is better, and a slower host raises them', () => {
    const a = row(() => 1, 'latency');
    const b = row((n) => (1 / 0.86) * (n === 'beta' ? 2 : n === 'delta' ? 0.5 : 1), 'latency');
    const judged = compareCells(a, b, { hostSpeed: new Map([['ds', slowerHost]]) });
    assert.deepEqual(
      judged.pairs.map((p) => [p.participant, p.change]),
      [
        ['alpha', 'same'],
        ['beta', 'worse'],
        ['delta', 'better'],
        ['gamma', 'same'],
      ],
    );
    assert.match(renderCompare(judged, { a: 'A', b: 'B' }), /latency \(p50 ms, one request at a time\)/);
  });

  test('leads across runs: read over one reference within each run (paired where passes allow), held unless B/A of the leads excludes 1', () => {
    // Passes in shared rounds: each participant's speed x the run's drift x small noise.
    const series = new Map<DerivedCell, Series>();
    const withPasses = (cells: DerivedCell[], drift: number, start: number) => {
      for (const c of cells) {
        const samples = Array.from({ length: 20 }, (_, r) => ({
          t: start + r * 2 + names.indexOf(c.participant) * 0.2,
          v: c.value! * (1 + drift * Math.sin(r)) * (1 + 0.01 * Math.cos(7 * r + c.value!)),
        }));
        series.set(c, [samples]);
        c.ci_low = c.value! * 0.75;
        c.ci_high = c.value! * 1.25;
      }
      return cells;
    };
    const a = withPasses(
      row(() => 1),
      0.15,
      1e6,
    );
    const b = withPasses(
      row((n) => 0.86 * (n === 'gamma' ? 0.8 : 1)),
      0.15,
      2e6,
    );
    // Best of each row: delta, the fastest.
    for (const cells of [a, b]) cells.forEach((c) => (c.lead = c.participant === 'delta' ? 1 : 0.5));
    const cmp = compareCells(a, b, { seriesOf: (c) => series.get(c) ?? null });
    assert.equal(cmp.leads.length, 3);
    assert.ok(cmp.leads.every((l) => l.reference === 'delta' && l.a.method === 'paired' && l.b.method === 'paired' && !l.best_changed));
    const by = Object.fromEntries(cmp.leads.map((l) => [l.participant, l]));
    assert.equal(by.alpha.change, 'held');
    assert.equal(by.beta.change, 'held');
    assert.equal(by.gamma.change, 'shrank');
    assert.ok(Math.abs(by.gamma.ratio - 0.8) < 0.02, `gamma's lead moved x${by.gamma.ratio}`);
    // The cells' own intervals (+-25 %, the drift) could not tell gamma's 20 % apart.
    assert.equal(compareCells(a, b).pairs.find((p) => p.participant === 'gamma')!.change, 'same');
    assert.deepEqual(cmp.summary.leads, { compared: 3, paired_both: 3, held: 2, grew: 0, shrank: 1, reference_changed: 0 });
    const text = renderCompare(cmp, { a: 'A', b: 'B' });
    assert.match(text, /gamma \/ delta .* shrank/);
    assert.match(text, /2 of 3 leads held/);
    // Without passes the leads are the cells' bound, marked u.
    const unpaired = compareCells(a, b);
    assert.ok(unpaired.leads.every((l) => l.a.method === 'unpaired'));
    assert.match(renderCompare(unpaired, { a: 'A', b: 'B' }), /leads: 3 compared \(0 paired in both runs\)/);
  });

  test("hostSpeedRatio: B's speed relative to A's from the probes' medians", () => {
    const a = Array.from({ length: 40 }, (_, i) => 20 + (i % 5) * 0.1);
    const h = hostSpeedRatio(
      a,
      a.map((x) => x / 0.86),
    )!;
    assert.ok(Math.abs(h.ratio - 0.86) < 1e-9 && h.low <= 0.86 && 0.86 <= h.high, JSON.stringify(h));
    assert.equal(hostSpeedRatio(a, []), null);
  });
});
