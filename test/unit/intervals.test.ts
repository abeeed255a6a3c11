// Intervals of a point's figures and of the cells read from them: coverage on known
// distributions, trimming, the calibrated reading, the tie rule, flagged points, builds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readCell, type CurvePoint } from '../../src/metrics/frontier.ts';
import { recallInterval, singlePassIntervals, summarizePasses } from '../../src/metrics/intervals.ts';
import { mulberry32 } from '../../src/metrics/stats.ts';
import { cellText, deriveCells, markLeads } from '../../src/report/cells.ts';
import { cell } from '../helpers/derived-cell.ts';
import { oneGroupResult as result, timedPoint as point } from '../helpers/one-group-result.ts';

/** Normal samples (Box-Muller) of a given mean and sd. */
function normal(rand: () => number, n: number, mu: number, sd: number): number[] {
  return Array.from({ length: n }, () => mu + sd * Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand()));
}

const passesOf = (qps: number[]) => ({
  qps,
  wall_s: qps.map((q) => 1000 / q),
  latency_ms: {
    mean: qps.map((q) => 1000 / q),
    p50: qps.map((q) => 900 / q),
    p95: qps.map((q) => 1500 / q),
    p99: qps.map((q) => 2000 / q),
    p999: qps.map((q) => 3000 / q),
  },
});

test('the QPS interval of passes covers the true mean about 95 % of the time', () => {
  const rand = mulberry32(7);
  let covered = 0;
  const trials = 300;
  for (let t = 0; t < trials; t++) {
    const s = summarizePasses(passesOf(normal(rand, 20, 10_000, 500)), 1);
    if (s.ci.qps[0] <= 10_000 && 10_000 <= s.ci.qps[1]) covered++;
  }
  // The percentile bootstrap of a mean of 20 runs a little narrow: 88-97 % coverage.
  assert.ok(covered / trials > 0.87 && covered / trials < 0.98, `coverage ${covered / trials}`);
});

test('the interval narrows with more passes and is seeded (the same passes, the same interval)', () => {
  const rand = mulberry32(11);
  const few = summarizePasses(passesOf(normal(rand, 5, 1000, 50)), 1);
  const many = summarizePasses(passesOf(normal(rand, 80, 1000, 50)), 1);
  assert.ok(many.ci.qps[1] - many.ci.qps[0] < few.ci.qps[1] - few.ci.qps[0]);
  const xs = normal(mulberry32(3), 10, 500, 20);
  assert.deepEqual(summarizePasses(passesOf(xs), 1).ci, summarizePasses(passesOf(xs), 1).ci);
});

test('passes beyond 3 x IQR are trimmed, with all their figures', () => {
  const s = summarizePasses(passesOf([1000, 1010, 990, 1005, 995, 1002, 998, 1001, 40_000]), 9);
  // A handful of passes is never trimmed.
  assert.equal(summarizePasses(passesOf([1000, 1001, 1002, 1003, 2000]), 1).trimmed, 0);
  assert.equal(s.trimmed, 1);
  assert.ok(Math.abs(s.qps - 1000.1) < 1);
  assert.ok(s.ci.qps[1] < 1100);
  assert.ok(s.latency_ms.mean > 0.9 && s.latency_ms.mean < 1.1);
  assert.equal(s.latency_ms.max, 9);
});

test('one pass (cold protocol): intervals over its queries; recall over the queries', () => {
  const lat = normal(mulberry32(5), 1000, 2, 0.5).map((x) => Math.max(0.1, x));
  const ci = singlePassIntervals(lat, 500);
  assert.ok(ci.qps[0] < 500 && 500 < ci.qps[1]);
  assert.ok(ci.latency_ms.p99[0] <= ci.latency_ms.p99[1]);
  const r = recallInterval(Array.from({ length: 1000 }, (_, i) => (i % 10 === 0 ? 0 : 1)));
  assert.ok(r[0] < 0.9 && 0.9 < r[1] && r[1] - r[0] < 0.05);
  assert.deepEqual(recallInterval(new Array(50).fill(1)), [1, 1]);
});

const cp = (recall: number, value: number, low: number, high: number, extra: Partial<CurvePoint> = {}): CurvePoint => ({
  recall,
  value,
  low,
  high,
  knobs: { ef: Math.round(recall * 1000) },
  ladderIndex: 0,
  ...extra,
});

test('a calibrated point is the cell unless a better point is better beyond the intervals', () => {
  const cal = cp(0.951, 1000, 950, 1050, { calibratedFor: 0.95 });
  // A neighbour at higher recall and a higher point value within the noise: the calibrated point.
  const noisy = cp(0.96, 1040, 990, 1090);
  const c1 = readCell([cp(0.9, 2000, 1900, 2100), cal, noisy], 0.95, 'higher');
  assert.equal(c1.status, 'calibrated');
  assert.equal(c1.value, 1000);
  assert.deepEqual([c1.low, c1.high], [950, 1050]);
  // Beyond the intervals: the better point is the reading.
  const better = cp(0.96, 1300, 1200, 1400);
  assert.equal(readCell([cal, better], 0.95, 'higher').value, 1300);
  // Read at a recall outside the tolerance, the cell is not called calibrated: it reads above.
  assert.equal(readCell([cal, better], 0.95, 'higher').status, 'above');
  assert.equal(readCell([cal, cp(0.953, 1300, 1200, 1400)], 0.95, 'higher').status, 'calibrated');
  // Outside ±0.005 of the target it is not a calibrated reading.
  const far = readCell([cp(0.944, 1000, 950, 1050, { calibratedFor: 0.95 }), cp(0.97, 800, 780, 820)], 0.95, 'higher');
  assert.notEqual(far.status, 'calibrated');
  // Interpolated cells interpolate the bounds too.
  const interp = readCell([cp(0.945, 1000, 900, 1100), cp(0.955, 800, 700, 900)], 0.95, 'higher');
  assert.equal(interp.status, 'interpolated');
  assert.ok(interp.low! < interp.value! && interp.value! < interp.high!);
});

test('ties: overlapping intervals show no lead; disjoint ones do', () => {
  const row = [cell('a', 1000, 950, 1050), cell('b', 980, 940, 1010), cell('c', 500, 480, 520), cell('d', null, null, null)];
  markLeads(row);
  assert.deepEqual(
    row.map((c) => c.tie),
    [true, true, false, false],
  );
  assert.equal(row[1].lead, 0.98);
  assert.match(cellText(row[1]), /≈x1\.00/);
  assert.match(cellText(row[2]), /x0\.50/);
  assert.deepEqual(row[2].lead_ci, [480 / 1050, 520 / 950]);
  const alone = [cell('a', 1000, 990, 1010), cell('b', 900, 880, 920)];
  markLeads(alone);
  assert.deepEqual(
    alone.map((c) => c.tie),
    [false, false],
  );
  assert.match(cellText(alone[0]), /x1\.00/);
});

test('flagged points never set a cell: the cell reads the others and counts them', () => {
  const r = result([
    point(0, 'throughput', 0.9, 5000, { flags: ['client-limited'] }),
    point(1, 'throughput', 0.95, 3000, { calibrated_for: 0.95 }),
    point(2, 'throughput', 0.952, 9000, { flags: ['invalid-results'] }),
  ]);
  const c = deriveCells([r]).find((x) => x.target === 0.95)!;
  assert.equal(c.value, 3000);
  assert.deepEqual(c.excluded, { 'client-limited': 1, 'invalid-results': 1 });
});

test('several builds: the median of the builds and an interval that spans them', () => {
  const pts = [0, 1, 2].map((b) => point(b, 'throughput', 0.951, [1000, 1200, 1100][b], { build: b, calibrated_for: 0.95 }));
  const c = deriveCells([result(pts)]).find((x) => x.target === 0.95)!;
  assert.equal(c.value, 1100);
  assert.equal(c.builds?.length, 3);
  assert.ok(Math.abs(c.ci_low! - 970) < 1e-9 && Math.abs(c.ci_high! - 1236) < 1e-9);
});

test("a participant's declared grain reaches the table: values one grain apart read across a gap wider than 0.02", () => {
  const at = (li: number, kf: number, recall: number, qps: number) => point(li, 'throughput', recall, qps, { knobs: { k_factor: kf } });
  const r = result([at(0, 6.3, 0.93, 100), at(1, 6.4, 0.96, 90)]);
  const cell = () => deriveCells([r]).find((x) => x.target === 0.95 && x.view === 'throughput')!;
  assert.equal(cell().status, 'bracket_too_wide');
  r.settings.calibration = { knob: ['k_factor'], min: 1, step: 0.1 };
  assert.equal(cell().status, 'interpolated');
  assert.ok(cell().value! > 90 && cell().value! < 100);
});
