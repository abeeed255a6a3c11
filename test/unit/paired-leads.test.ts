// Paired leads (src/metrics/paired.ts) on synthetic passes whose truth is known: a strong drift
// both participants share, independent noise alone, and rounds that do not line up; then through
// deriveCells on result files, so `report --json` carries lead_method.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIN_PAIRS, pairedLead, pairSamples, pairWindow, interpolateSamples, t975, type Sample } from '../../src/metrics/paired.ts';
import { bootstrapCI, mean, mulberry32 } from '../../src/metrics/stats.ts';
import { deriveCells, markLeads } from '../../src/report/cells.ts';
import { cell } from '../helpers/derived-cell.ts';
import { oneGroupResult } from '../helpers/one-group-result.ts';
import type { ResultPoint } from '../../src/results/schema.ts';

/** A standard normal draw (Box-Muller) from a seeded uniform. */
function normal(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

interface Trial {
  a: Sample[];
  b: Sample[];
  truth: number;
}

/** Two participants timed in shared rounds, 3 s apart, B half a second after A. Each pass is the
 * participant's true speed x the machine's speed at that moment x its own noise (sd `noise`,
 * log scale). The machine's speed drifts by `drift` (log scale) as a slow random walk plus a
 * swing over a minute, as on the shared 2-core host (docs/method.md, "How wide, and why"). */
function trial(seed: number, rounds: number, drift: number, noise: number): Trial {
  const rand = mulberry32(seed);
  const truth = 0.6;
  const phase = rand() * 2 * Math.PI;
  let walk = 0;
  const a: Sample[] = [];
  const b: Sample[] = [];
  for (let r = 0; r < rounds; r++) {
    walk += normal(rand) * drift * 0.3;
    const t = 1_000_000 + r * 3;
    const speed = (dt: number) => Math.exp(walk + drift * Math.sin((t + dt) / 10 + phase));
    a.push({ t, v: 3000 * truth * speed(0) * Math.exp(normal(rand) * noise) });
    b.push({ t: t + 0.5, v: 3000 * speed(0.5) * Math.exp(normal(rand) * noise) });
  }
  return { a, b, truth };
}

/** Today's unpaired bound: each cell's own interval (the bootstrap of its passes' mean, as a
 * point's is), divided one by the other. */
function unpairedBound(a: Sample[], b: Sample[]): [number, number] {
  const ca = bootstrapCI(
    a.map((s) => s.v),
    mean,
  );
  const cb = bootstrapCI(
    b.map((s) => s.v),
    mean,
  );
  return [ca.low / cb.high, ca.high / cb.low];
}

const halfWidth = ([lo, hi]: [number, number], at: number) => (hi - lo) / 2 / at;

test('a strong common drift: the paired interval is narrow and covers the true ratio in at least 93 of 100 seeded trials', () => {
  let covered = 0;
  const paired: number[] = [];
  const unpaired: number[] = [];
  for (let seed = 1; seed <= 100; seed++) {
    const { a, b, truth } = trial(seed, 30, 0.2, 0.05);
    const r = pairedLead([a], [b]);
    assert.ok('lead' in r, JSON.stringify(r));
    if (r.ci[0] <= truth && truth <= r.ci[1]) covered++;
    paired.push(halfWidth(r.ci, r.lead));
    unpaired.push(halfWidth(unpairedBound(a, b), truth));
  }
  const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  assert.ok(covered >= 93, `covered in ${covered} of 100`);
  // The pairs' noise alone: 0.05 x sqrt(2) / sqrt(30) x 2 ~ 2.6 %; the drift (0.2) is gone.
  assert.ok(med(paired) < 0.04, `median paired half-width ${(med(paired) * 100).toFixed(1)} %`);
  assert.ok(med(unpaired) > 3 * med(paired), `unpaired ${(med(unpaired) * 100).toFixed(1)} % vs paired ${(med(paired) * 100).toFixed(1)} %`);
});

test('independent noise alone: the paired interval is the independent two-sample one, within its sampling error, and inside the unpaired bound', () => {
  const ratios: number[] = [];
  for (let seed = 1; seed <= 40; seed++) {
    const { a, b } = trial(1000 + seed, 30, 0, 0.1);
    const r = pairedLead([a], [b]);
    assert.ok('lead' in r);
    // With nothing shared, pairing neither helps nor hurts: the interval of log(mean a / mean b)
    // from resampling each side on its own is the yardstick.
    const rand = mulberry32(seed);
    const draws: number[] = [];
    for (let i = 0; i < 1000; i++) {
      const pick = (xs: Sample[]) => mean(Array.from({ length: xs.length }, () => Math.log(xs[Math.floor(rand() * xs.length)].v)));
      draws.push(pick(a) - pick(b));
    }
    draws.sort((x, y) => x - y);
    const independent = (draws[974] - draws[25]) / 2;
    const pairedHalf = (Math.log(r.ci[1]) - Math.log(r.ci[0])) / 2;
    ratios.push(pairedHalf / independent);
    const bound = unpairedBound(a, b);
    assert.ok(r.ci[0] >= bound[0] * 0.97 && r.ci[1] <= bound[1] * 1.03, `paired ${r.ci} vs the bound ${bound}`);
  }
  // Each width is estimated from 30 pairs: about +-13 % sampling error; the small-sample widening
  // (t over z) adds about 4 %.
  const m = mean(ratios);
  assert.ok(m > 0.85 && m < 1.2, `paired / independent half-width: mean ${m.toFixed(3)}`);
});

test('rounds that do not line up, too few passes, different builds: no paired lead, and the reason', () => {
  const { a, b } = trial(7, 20, 0.2, 0.05);
  const apart = b.map((s) => ({ t: s.t + 3600, v: s.v }));
  const r = pairedLead([a], [apart]);
  assert.ok('reason' in r && /rounds do not line up \(0 of 20 passes paired within 10 s\)/.test(r.reason), JSON.stringify(r));
  const few = pairedLead([a.slice(0, MIN_PAIRS - 1)], [b]);
  assert.ok('reason' in few && few.reason === `too few passes to pair (${MIN_PAIRS - 1}; at least ${MIN_PAIRS})`, JSON.stringify(few));
  // Only the last few rounds overlap (a run measured after the other, back to back): not paired.
  const tail = b.map((s, i) => ({ t: s.t + (i < 14 ? -3600 : 0), v: s.v }));
  assert.ok('reason' in pairedLead([a], [tail]));
  assert.ok('reason' in pairedLead([a, a], [b]), 'a different number of builds');
});

/** In how many of 100 seeded trials the paired lead of a slow point over two builds of 3 shared
 * rounds each (a point whose passes take a second gets 3 within the cell's 2 s), each build with
 * its own 5 % difference between the engines, covers the truth; `lose` drops the best's pass of
 * build 1's second round (judged busy), so one of the slow point's passes has no pair. */
function twoBuildCoverage(seeds: { effects: number; builds: number }, lose: boolean): number {
  let covered = 0;
  for (let seed = 1; seed <= 100; seed++) {
    const rand = mulberry32(seed * seeds.effects);
    const effect = () => Math.exp(normal(rand) * 0.05);
    const [e0, e1] = [effect(), effect()];
    const [x, y] = [trial(seed + seeds.builds, 3, 0.2, 0.05), trial(seed + seeds.builds + 1000, 3, 0.2, 0.05)];
    const best = lose ? [y.b[0], y.b[2]] : y.b;
    const r = pairedLead([x.a.map((p) => ({ t: p.t, v: p.v * e0 })), y.a.map((p) => ({ t: p.t, v: p.v * e1 }))], [x.b, best]);
    assert.ok('lead' in r, JSON.stringify(r));
    assert.equal(r.pairs, lose ? 5 : 6);
    const truth = 0.6 * Math.sqrt(e0 * e1);
    if (r.ci[0] <= truth && truth <= r.ci[1]) covered++;
  }
  return covered;
}

test('a slow point with a few passes in each of two builds: their pairs together make the lead, which covers the truth in at least 93 of 100 seeded trials', () => {
  const covered = twoBuildCoverage({ effects: 7919, builds: 0 }, false);
  assert.ok(covered >= 93, `covered in ${covered} of 100`);
  // Fewer than MIN_BUILD_PAIRS in a build, or fewer than MIN_PAIRS over the builds: not paired.
  const { a, b } = trial(5, 3, 0.2, 0.05);
  const five = trial(5, 5, 0.2, 0.05);
  const one = pairedLead([five.a, five.a.slice(0, 1)], [five.b, five.b.slice(0, 1)]);
  assert.ok('reason' in one && one.reason === 'too few passes to pair (1; at least 2, build 1)', JSON.stringify(one));
  const tiny = pairedLead([a.slice(0, 2), a.slice(0, 2)], [b.slice(0, 2), b.slice(0, 2)]);
  assert.ok('reason' in tiny && tiny.reason === `too few passes to pair (4; at least ${MIN_PAIRS} over the builds)`, JSON.stringify(tiny));
});

test('a slow point whose pass in one build lost its pair (a busy round): 3 pairs in one build and 2 in the other make the lead, which covers the truth in at least 93 of 100 seeded trials', () => {
  const covered = twoBuildCoverage({ effects: 104729, builds: 2000 }, true);
  assert.ok(covered >= 93, `covered in ${covered} of 100`);
});

test('rounds longer than 10 s (a slow machine, slow passes): the passes of one round still pair', () => {
  const { a, b } = trial(21, 30, 0.2, 0.05);
  // Rounds 40 s apart, B 12 s after A within each: beyond 10 s, within a round.
  const slow = (xs: Sample[], at: number) => xs.map((s, r) => ({ t: 1e6 + r * 40 + at, v: s.v }));
  assert.equal(pairWindow(slow(a, 0), slow(b, 12)), 40);
  const r = pairedLead([slow(a, 0)], [slow(b, 12)]);
  // The same pairs as at their own times: the same lead and interval.
  assert.deepEqual(r, pairedLead([a], [b]));
  assert.ok('lead' in r && r.pairs === 30);
  // Apart by more than a round (another run): still not paired.
  assert.ok('reason' in pairedLead([slow(a, 0)], [slow(b, 3600)]));
});

test('passes of one shared round pair however far apart the round put them; by time alone they would pair across rounds', () => {
  const { a, b } = trial(31, 8, 0.2, 0.05);
  // Rounds a minute apart (slow participants' groups run between); A's pass opens each round, B's
  // comes 40 s later: nearer in time to A's pass of the next round than to its own round's.
  const at = (xs: Sample[], dt: number, withRound: boolean) => xs.map((s, i) => ({ t: 1e6 + i * 60 + dt, v: s.v, r: withRound ? 1e6 + i * 60 : null }));
  const [ra, rb] = [at(a, 0, true), at(b, 40, true)];
  assert.deepEqual(
    pairSamples(ra, rb, pairWindow(ra, rb)),
    a.map((s, i) => [s.v, b[i].v]),
  );
  const byTime = pairSamples(at(a, 0, false), at(b, 40, false), 60);
  assert.notDeepEqual(
    byTime,
    a.map((s, i) => [s.v, b[i].v]),
  );
  const r = pairedLead([ra], [rb]);
  assert.ok('lead' in r && r.pairs === 8);
  assert.deepEqual(r, pairedLead([a], [b]), 'the same pairs as at their own times');
  // A pass kept by an earlier run (no round) pairs by time only; rounds of another run match none.
  const other = rb.map((s) => ({ ...s, t: s.t + 3600, r: (s.r ?? 0) + 3600 }));
  const none = pairedLead([ra], [other]);
  assert.ok('reason' in none && /paired in a shared round or within/.test(none.reason), JSON.stringify(none));
});

test('several builds: each build is one paired estimate, and resampling builds widens the interval', () => {
  const [x, y] = [trial(11, 20, 0.2, 0.05), trial(12, 20, 0.2, 0.05)];
  // The second build of A runs 10 % faster relative to B: a build-to-build difference.
  const fast = y.a.map((s) => ({ t: s.t, v: s.v * 1.1 }));
  const one = pairedLead([x.a], [x.b]);
  const two = pairedLead([x.a, fast], [x.b, y.b]);
  assert.ok('lead' in one && 'lead' in two);
  assert.ok(Math.abs(two.lead / (0.6 * Math.sqrt(1.1)) - 1) < 0.03, `lead ${two.lead}`);
  assert.ok(two.ci[1] / two.ci[0] > one.ci[1] / one.ci[0], `${two.ci} vs ${one.ci}`);
});

test('pairSamples: one-to-one, nearest first, within the window; interpolateSamples weighs like the cell', () => {
  const s = (t: number, v: number) => ({ t, v });
  assert.deepEqual(pairSamples([s(0, 1), s(10, 2), s(20, 3)], [s(1, 10), s(2, 20), s(19, 30)], 5), [
    [1, 10],
    [3, 30],
  ]);
  assert.deepEqual(pairSamples([s(1, 10), s(2, 20), s(19, 30)], [s(0, 1), s(10, 2), s(20, 3)], 5), [
    [10, 1],
    [30, 3],
  ]);
  const lo = [s(0, 100), s(5, 200)];
  const hi = [s(1, 400), s(6, 800)];
  assert.deepEqual(
    interpolateSamples(lo, hi, 0).map((x) => Math.round(x.v * 1e6) / 1e6),
    [100, 200],
  );
  assert.deepEqual(
    interpolateSamples(lo, hi, 0.5).map((x) => Math.round(x.v)),
    [200, 400],
  );
  for (const [df, table] of [
    [4, 2.776],
    [10, 2.228],
    [29, 2.045],
    [200, 1.972],
  ])
    assert.ok(Math.abs(t975(df) - table) < 0.01, `t975(${df}) = ${t975(df)}`);
});

test('markLeads: a row whose intervals overlap is separated by its paired passes; the best is the reference', () => {
  const { a, b } = trial(3, 30, 0.2, 0.03);
  // Scale A to 95 % of B: the cells' own intervals (spanning the drift) overlap.
  const a95 = a.map((s) => ({ t: s.t, v: (s.v / 0.6) * 0.95 }));
  const ca = bootstrapCI(
    a95.map((s) => s.v),
    mean,
  );
  const cb = bootstrapCI(
    b.map((s) => s.v),
    mean,
  );
  const row = [cell('a', ca.estimate, ca.low, ca.high), cell('b', cb.estimate, cb.low, cb.high)];
  markLeads(row);
  assert.deepEqual(
    row.map((c) => [c.tie, c.lead_method]),
    [
      [true, 'unpaired'],
      [true, null],
    ],
  );
  const series = new Map([
    [row[0], [a95]],
    [row[1], [b]],
  ]);
  markLeads(row, 'higher', (c) => series.get(c) ?? null);
  assert.equal(row[0].lead_method, 'paired');
  assert.ok(row[0].lead_ci![1] < 1 && Math.abs(row[0].lead! - 0.95) < 0.02, `lead ${row[0].lead} ${row[0].lead_ci}`);
  assert.deepEqual(
    row.map((c) => c.tie),
    [false, false],
  );
  assert.equal(row[1].lead, 1);
  assert.equal(row[1].lead_ci, null);
  assert.equal(row[1].lead_method, null);
});

function point(participant: number, times: number[], qps: number[], busy?: boolean[]): ResultPoint {
  const m = 1000 / mean(qps);
  const lat = { mean: m, p50: m, p95: m, p99: m, p999: m };
  return {
    ladder_index: 0,
    knobs: { ef: 10 + participant },
    view: 'throughput',
    clients: 2,
    queries: 1000,
    query_slice: [0, 999],
    recall: 0.95,
    recall_strict: 0.95,
    recall_threshold: 0.95,
    short_results: 0,
    low_recall_share: 0,
    unknown_ids: 0,
    duplicate_ids: 0,
    filter_violations: 0,
    qps: mean(qps),
    duration_s: 1,
    latency_ms: { ...lat, max: m },
    flags: [],
    calibrated_for: 0.95,
    pass: {
      qps,
      wall_s: qps.map((q) => 1000 / q),
      latency_ms: { mean: qps.map((q) => 1000 / q), p50: qps.map((q) => 1000 / q), p95: qps.map(() => m), p99: qps.map(() => m), p999: qps.map(() => m) },
      at_unix_s: times,
      ...(busy ? { busy } : {}),
    },
    ci: { qps: [mean(qps) * 0.9, mean(qps) * 1.1], recall: [0.95, 0.95], latency_ms: { mean: [m, m], p50: [m, m], p95: [m, m], p99: [m, m], p999: [m, m] } },
  } as ResultPoint;
}

const resultOf = (participant: string, p: ResultPoint) => oneGroupResult([p], 'warm', participant);

test('deriveCells: stored passes in shared rounds give a paired lead; busy passes are lined up by the mask; a run measured apart is unpaired and says why', () => {
  const { a, b } = trial(5, 24, 0.2, 0.03);
  const at = (xs: Sample[]) => xs.map((s) => s.t);
  const val = (xs: Sample[]) => xs.map((s) => s.v);
  // A's third pass was busy: its figures are left out, its time and mask kept.
  const busy = a.map((_, i) => i === 2);
  const pa = point(
    1,
    at(a),
    val(a).filter((_, i) => !busy[i]),
    busy,
  );
  const pb = point(2, at(b), val(b));
  const cells = deriveCells([resultOf('a', pa), resultOf('b', pb)]);
  const ca = cells.find((c) => c.participant === 'a' && c.target === 0.95)!;
  assert.equal(ca.lead_method, 'paired', JSON.stringify(ca));
  // Exactly the lead of the quiet passes at their own times: the mask lined them up.
  const direct = pairedLead([a.filter((_, i) => !busy[i])], [b]);
  assert.ok('lead' in direct);
  assert.equal(ca.lead, direct.lead);
  assert.deepEqual(ca.lead_ci, direct.ci);
  assert.ok(Math.abs(ca.lead! - 0.6) < 0.03, `${ca.lead} ${ca.lead_ci}`);
  // The same B measured an hour later (another run): nothing pairs.
  const later = point(
    2,
    at(b).map((t) => t + 3600),
    val(b),
  );
  const apart = deriveCells([resultOf('a', pa), resultOf('b', later)]).find((c) => c.participant === 'a' && c.target === 0.95)!;
  assert.equal(apart.lead_method, 'unpaired');
  assert.match(apart.lead_note!, /rounds do not line up/);
  // Passes without times (an imported or older result): unpaired too.
  const old = point(2, at(b), val(b));
  delete old.pass!.at_unix_s;
  assert.match(
    deriveCells([resultOf('a', pa), resultOf('b', old)]).find((c) => c.participant === 'a' && c.target === 0.95)!.lead_note!,
    /no passes laid out in time/,
  );
});
