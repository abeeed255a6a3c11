// Timed passes in rounds (src/runner/timed-rounds.ts) against fake engines whose passes take a
// known time: a point that needs few passes takes them spread over the whole timing, not in its
// first rounds; several engines' groups take turns, each engine warmed up when its turn follows
// another's; busy rounds are retaken later.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Participant } from '../../src/contracts.ts';
import { settingsFileSchema, type LoadedParticipant } from '../../src/runner/participants.ts';
import type { AskedGroup } from '../../src/runner/points.ts';
import type { HostRequest } from '../../src/runner/protocol.ts';
import type { PointReply } from '../../src/runner/point-reply.ts';
import { qpsHalfWidth } from '../../src/metrics/intervals.ts';
import { leadCounterparts, pairedHalfWidth, roundPairs } from '../../src/runner/lead-precision.ts';
import { mulberry32 } from '../../src/metrics/stats.ts';
import { GroupTiming, timeInRounds, type Item, type TimedEngine, type Timing } from '../../src/runner/timed-rounds.ts';
import { thinToFit, TIMING_OVERHEAD } from '../../src/runner/thin-to-fit.ts';
import { planText, timingPlan } from '../../src/runner/timing-plan.ts';

const QUERIES = Array.from({ length: 400 }, (_, i) => i);
const group = { key: 'none/10', filter: 'none', k: 10, filters: QUERIES.map(() => null) } as unknown as AskedGroup;

function participant(name: string): LoadedParticipant {
  const settings = settingsFileSchema.parse({ index: {}, ladders: [{ knobs: { ef: [1] } }] });
  const adapter = { engine: name, concurrentSearch: false, filters: null, filterStrategy: 'none' } as unknown as Participant<unknown>;
  return { name, dir: '/nonexistent', adapter, settings, index: {}, settingsPath: '/nonexistent/settings.json' };
}

/** An engine whose pass at knob ef takes ef x 10 ms (reported, not slept), times `jitter()`;
 * every request is logged as `name:ef:queries`. */
function fakeEngine(name: string, log: string[], jitter: () => number = () => 1): TimedEngine {
  return {
    loadPids: () => ({ engine: undefined, engineTree: false, host: undefined }),
    async request(req: HostRequest) {
      if (req.type !== 'point') throw new Error(`unexpected request ${req.type}`);
      const ef = req.knobs.ef as number;
      log.push(`${name}:${ef}:${req.queries.length}`);
      const n = req.queries.length;
      const reply: PointReply = {
        ids: new Int32Array(0),
        offsets: new Int32Array(n + 1),
        latenciesMs: new Float64Array(n).fill((ef * 10) / n),
        wallS: ef * 0.01 * jitter(),
        errors: new Array(n).fill(null),
      };
      return { type: 'point', reply } as never;
    },
  };
}

const item = (ef: number): Item => ({
  li: ef,
  knobs: { ef },
  recall: {
    digests: undefined,
    summary: {} as never,
    perQuery: [],
    // The recall pass took what the fake engine's passes take.
    wallS: ef * 0.01,
  },
});

function timingOf(
  engine: TimedEngine,
  name: string,
  efs: number[],
  timing: Timing,
  busyRounds = new Set<number>(),
  views: ('latency' | 'throughput')[] = ['latency'],
  cellEfs = new Set<number>(),
) {
  let round = 0;
  const meter = {
    start() {},
    stop: () => ({ otherCores: busyRounds.has(round++) ? 1.5 : 0, steal: 0 }),
  };
  return new GroupTiming(
    {
      engine,
      p: participant(name),
      g: group,
      queries: QUERIES,
      clients: 1,
      threads: 1,
      timing,
      pointTimeoutS: 60,
      busyCores: 0.25,
      loadMeter: meter,
      onProgress: () => {},
    },
    efs.map((ef) => ({ ...item(ef), ...(cellEfs.has(ef) ? { readsCell: true, cellTargets: [0.9] } : {}) })),
    views,
  );
}

/** Indices in the log of the timed passes (all queries) of `name` at ef. */
const passesAt = (log: string[], name: string, ef: number) => log.flatMap((l, i) => (l === `${name}:${ef}:${QUERIES.length}` ? [i] : []));

test('a point needing few passes takes them spread over the timing, not in its first rounds', async () => {
  const log: string[] = [];
  // ef 1: 10 ms a pass, 30 passes for 0.3 s; ef 10: 100 ms, 3 passes.
  const t = timingOf(fakeEngine('a', log), 'a', [1, 10], { minPasses: 3, minSeconds: 0.3, maxPasses: 60 });
  await timeInRounds([t]);
  const fast = passesAt(log, 'a', 1);
  const slow = passesAt(log, 'a', 10);
  assert.equal(fast.length, 30);
  assert.equal(slow.length, 3);
  // The slow point's passes fall near the start, a third and two thirds of the way: fast passes
  // lie between each of its passes.
  const fastBefore = (i: number) => fast.filter((f) => f < i).length;
  assert.ok(fastBefore(slow[1]) >= 8 && fastBefore(slow[1]) <= 12, `second slow pass after ${fastBefore(slow[1])} fast passes`);
  assert.ok(fastBefore(slow[2]) >= 18 && fastBefore(slow[2]) <= 22, `third slow pass after ${fastBefore(slow[2])} fast passes`);
  for (const e of t.entries) {
    assert.equal(e.done, true);
    assert.equal(e.pass.at_unix_s.length, e.pass.qps.length);
    assert.ok(e.pass.at_unix_s.every((s, i) => i === 0 || s >= e.pass.at_unix_s[i - 1]));
  }
});

test('two engines take turns; an engine whose turn follows the other one is warmed up first', async () => {
  const log: string[] = [];
  const a = timingOf(fakeEngine('a', log), 'a', [1, 2], { minPasses: 4, minSeconds: 0, maxPasses: 8 });
  const b = timingOf(fakeEngine('b', log), 'b', [1], { minPasses: 4, minSeconds: 0, maxPasses: 8 });
  const rounds: number[] = [];
  await timeInRounds([a, b], (p) => rounds.push(p.done));
  assert.equal(passesAt(log, 'a', 1).length, 4);
  assert.equal(passesAt(log, 'a', 2).length, 4);
  assert.equal(passesAt(log, 'b', 1).length, 4);
  // Each engine's turn is a run of requests; a turn after the other engine's starts with a
  // warm-up of 100 queries, the first turn of the timing with none.
  const turns: string[][] = [];
  for (const l of log) {
    const name = l.split(':')[0];
    if (turns.length === 0 || turns[turns.length - 1][0].split(':')[0] !== name) turns.push([l]);
    else turns[turns.length - 1].push(l);
  }
  assert.ok(turns.length >= 4, `the engines alternate (${turns.length} turns)`);
  assert.ok(!turns[0][0].endsWith(':100'), 'no warm-up before the first pass of the timing');
  for (const turn of turns.slice(1)) assert.ok(turn[0].endsWith(':100') && !turn[1].endsWith(':100'), `turn ${turn.join(' ')} starts with one warm-up`);
  assert.equal(rounds[rounds.length - 1], 3);
});

test('a busy round is retaken in a later round, and the point keeps only its quiet passes', async () => {
  const log: string[] = [];
  const t = timingOf(fakeEngine('a', log), 'a', [1], { minPasses: 3, minSeconds: 0, maxPasses: 10 }, new Set([1]));
  await timeInRounds([t]);
  const e = t.entries[0];
  assert.deepEqual(e.busy, [false, true, false, false]);
  assert.equal(passesAt(log, 'a', 1).length, 4);
});

/** Pass times that vary by up to ±spread around their mean, seeded. */
const noisy = (spread: number, seed = 7) => {
  const rand = mulberry32(seed);
  return () => 1 + spread * (2 * rand() - 1);
};

test("the points a cell reads are timed until their QPS interval is within cell_half_width; the curve's other points keep the base timing", async () => {
  const log: string[] = [];
  const timing: Timing = { minPasses: 3, minSeconds: 0, maxPasses: 8, cellHalfWidth: 0.03, cellSeconds: 100, cellMaxPasses: 300 };
  const t = timingOf(fakeEngine('a', log, noisy(0.3)), 'a', [1, 2], timing, new Set(), ['latency', 'throughput'], new Set([1]));
  await timeInRounds([t]);
  const entry = (ef: number, view: string) => t.entries.find((e) => e.item.knobs.ef === ef && e.view === view)!;
  const cell = entry(1, 'throughput');
  // The cell's point: beyond max_passes, at least 10 passes, and its interval (the one stored)
  // within ±3 %; one pass fewer was not.
  assert.ok(cell.pass.qps.length > timing.maxPasses, `${cell.pass.qps.length} passes`);
  assert.ok(qpsHalfWidth(cell.pass.qps) <= 0.03, `half-width ${qpsHalfWidth(cell.pass.qps)}`);
  assert.ok(qpsHalfWidth(cell.pass.qps.slice(0, -1)) > 0.03 || cell.pass.qps.length === 10);
  // The same point's latency view, and the other point in both views: min_passes.
  assert.equal(entry(1, 'latency').pass.qps.length, 3);
  assert.equal(entry(2, 'throughput').pass.qps.length, 3);
  assert.equal(entry(2, 'latency').pass.qps.length, 3);
  // The short points' passes were spread over the cell point's rounds, not taken first.
  const cellPasses = passesAt(log, 'a', 1);
  const other = passesAt(log, 'a', 2);
  assert.ok(other[other.length - 1] > cellPasses[Math.floor(cellPasses.length / 2)], 'the last pass of ef 2 comes late in the timing');
});

test("a cell's point stops at cell_seconds (or cell_max_passes) when its interval stays wide", async () => {
  const log: string[] = [];
  // ±90 % noise: ±3 % would take hundreds of passes; 10 ms passes, at most 0.2 s of them.
  const bySeconds = timingOf(
    fakeEngine('a', log, noisy(0.9)),
    'a',
    [1],
    { minPasses: 3, minSeconds: 0, maxPasses: 8, cellHalfWidth: 0.03, cellSeconds: 0.2, cellMaxPasses: 300 },
    new Set(),
    ['throughput'],
    new Set([1]),
  );
  await timeInRounds([bySeconds]);
  const e = bySeconds.entries[0];
  const seconds = e.pass.wall_s.reduce((a, b) => a + b, 0);
  assert.ok(seconds >= 0.2 && seconds < 0.2 + 0.02, `${seconds} s of passes`);
  assert.ok(qpsHalfWidth(e.pass.qps) > 0.03);
  const byPasses = timingOf(
    fakeEngine('b', [], noisy(0.9)),
    'b',
    [1],
    { minPasses: 3, minSeconds: 0, maxPasses: 8, cellHalfWidth: 0.03, cellSeconds: 100, cellMaxPasses: 25 },
    new Set(),
    ['throughput'],
    new Set([1]),
  );
  await timeInRounds([byPasses]);
  assert.equal(byPasses.entries[0].pass.qps.length, 25);
  // cell_half_width 0: no cell timing at all.
  const off = timingOf(
    fakeEngine('c', [], noisy(0.9)),
    'c',
    [1],
    { minPasses: 3, minSeconds: 0, maxPasses: 8, cellHalfWidth: 0 },
    new Set(),
    ['throughput'],
    new Set([1]),
  );
  await timeInRounds([off]);
  assert.equal(off.entries[0].pass.qps.length, 3);
});

/** A machine whose speed drifts by ±40 % over a few hundred requests, the same for every engine
 * that asks (as on a shared VM), each engine with its own ±1 % noise on top. */
function driftingMachine() {
  let requests = 0;
  return (seed: number) => {
    const rand = mulberry32(seed);
    return () => (1 + 0.4 * Math.sin(requests++ / 40)) * (1 + 0.01 * (2 * rand() - 1));
  };
}

test("a row's cell points timed together stop when their lead's paired interval is within lead_half_width, long before their own", async () => {
  const timing: Timing = { minPasses: 3, minSeconds: 0, maxPasses: 8, cellHalfWidth: 0.03, cellSeconds: 100, cellMaxPasses: 120, leadHalfWidth: 0.03 };
  const run = async (t: Timing) => {
    const jitter = driftingMachine();
    // a's point at ef 1 (10 ms a pass), b's at ef 2 (20 ms): b's QPS is half a's.
    const a = timingOf(fakeEngine('a', [], jitter(1)), 'a', [1], t, new Set(), ['throughput'], new Set([1]));
    const b = timingOf(fakeEngine('b', [], jitter(2)), 'b', [2], t, new Set(), ['throughput'], new Set([2]));
    await timeInRounds([a, b]);
    return [a.entries[0], b.entries[0]];
  };
  const [a, b] = await run(timing);
  // The drift keeps each point's own interval wide, the lead's is narrow: each stopped near the
  // fewest passes a cell takes, not at the cap.
  for (const e of [a, b]) {
    assert.ok(e.pass.qps.length >= 10 && e.pass.qps.length <= 20, `${e.pass.qps.length} passes`);
    assert.ok(qpsHalfWidth(e.pass.qps) > 0.03, `own half-width ${qpsHalfWidth(e.pass.qps)}`);
  }
  const logs = roundPairs(b, a);
  assert.ok(logs.length >= 10, `${logs.length} pairs`);
  const hw = pairedHalfWidth(logs);
  assert.ok(hw <= 0.03, `lead half-width ${hw}`);
  // The lead read from the pairs covers the true ratio (b / a = 0.5).
  const lead = Math.exp(logs.reduce((x, y) => x + y, 0) / logs.length);
  assert.ok(lead / (1 + hw) <= 0.5 && 0.5 <= lead * (1 + hw), `lead ${lead} ±${hw}`);
  // lead_half_width 0: the own interval is the rule, and the drift makes it cost several times
  // the passes (the machine is seeded: the same counts every run).
  const [a0, b0] = await run({ ...timing, leadHalfWidth: 0 });
  for (const [own, lead] of [
    [a0, a],
    [b0, b],
  ])
    assert.ok(own.pass.qps.length >= 2 * lead.pass.qps.length, `${own.pass.qps.length} passes by the own interval, ${lead.pass.qps.length} by the lead's`);
});

test("a slow cell point's few passes fall in the rounds where the row's best takes its own, so its lead pairs", async () => {
  // a: 10 ms passes (the best); b: 500 ms passes, 3 of them within its 1.5 s (cell_seconds).
  // Curve points at ef 2 and 4 want passes spread over the timing, which make it many rounds.
  const timing: Timing = { minPasses: 3, minSeconds: 0.3, maxPasses: 60, cellHalfWidth: 0.03, cellSeconds: 1.5, cellMaxPasses: 300, leadHalfWidth: 0.03 };
  const a = timingOf(fakeEngine('a', [], noisy(0.2, 3)), 'a', [1, 2, 4], timing, new Set(), ['throughput'], new Set([1]));
  const b = timingOf(fakeEngine('b', [], noisy(0.2, 4)), 'b', [50], timing, new Set(), ['throughput'], new Set([50]));
  await timeInRounds([a, b]);
  const best = a.entries.find((e) => e.item.knobs.ef === 1)!;
  const slow = b.entries[0];
  const n = slow.pass.qps.length;
  assert.ok(n >= 3 && n <= 4, `${n} passes of the slow point`);
  assert.ok(a.entries.find((e) => e.item.knobs.ef === 2)!.pass.qps.length >= 10, 'the curve point wants its passes over many rounds');
  // Both cell points took a pass every round from the first: all of the slow point's passes pair.
  const first = Array.from({ length: n }, (_, i) => i);
  assert.deepEqual(slow.rounds, first);
  assert.deepEqual(best.rounds!.slice(0, n), first);
  assert.equal(roundPairs(slow, best).length, n);
});

test("the leads a cell point waits for: the row's best waits for every other's lead over it; another waits for its own lead over the best", () => {
  const entry = (qps: number, targets: number[]) =>
    ({ view: 'throughput', item: { li: 0, knobs: {}, readsCell: true, cellTargets: targets }, pass: { qps: [qps] }, busy: [false] }) as never;
  const best = entry(300, [0.9]);
  const second = entry(200, [0.9, 0.95]);
  const third = entry(100, [0.9]);
  const alone = entry(50, [0.99]);
  const side = (owner: string, entries: unknown[]) => ({ owner, entries: entries as never[] });
  const sidesAt = (target: number) =>
    [side('A', [best]), side('B', [second]), side('C', [third, alone])].map((s) => ({
      ...s,
      entries: s.entries.filter((e) => (e as { item: { cellTargets: number[] } }).item.cellTargets.includes(target)),
    }));
  assert.deepEqual(leadCounterparts(best, 'A', sidesAt), [second, third]);
  assert.deepEqual(leadCounterparts(third, 'C', sidesAt), [best]);
  // At 0.95 B is read alone, so it waits only for its 0.90 lead; at 0.99 nobody shares C's row.
  assert.deepEqual(leadCounterparts(second, 'B', sidesAt), [best]);
  assert.equal(leadCounterparts(alone, 'C', sidesAt), null);
});

test('a group whose points are done is handed on (stored) at once, while the others go on timing', async () => {
  const log: string[] = [];
  // a: 2 passes at most; b: 6 passes, so b is still timing rounds after a is done.
  const a = timingOf(fakeEngine('a', log), 'a', [1], { minPasses: 2, minSeconds: 0, maxPasses: 2 });
  const b = timingOf(fakeEngine('b', log), 'b', [1], { minPasses: 6, minSeconds: 0, maxPasses: 6 });
  const handed: { name: string; bPassesSoFar: number; done: boolean }[] = [];
  await timeInRounds([a, b], undefined, async (t) => {
    handed.push({ name: t === a ? 'a' : 'b', bPassesSoFar: passesAt(log, 'b', 1).length, done: t.done });
  });
  assert.deepEqual(
    handed.map((h) => h.name),
    ['a', 'b'],
    'each group handed on once, a first',
  );
  assert.ok(handed.every((h) => h.done));
  assert.ok(handed[0].bPassesSoFar < 6, `a was handed on after ${handed[0].bPassesSoFar} of b's 6 passes, not at the end`);
  assert.equal(handed[1].bPassesSoFar, 6);
});

test('the timing plan, said before timing starts, holds the passes and time the timing then takes', async () => {
  const log: string[] = [];
  // ef 1: 10 ms a pass, so 0.3 s asks 30 passes; ef 10: 100 ms, 3 passes (minPasses). Both views.
  const base = timingOf(fakeEngine('a', log), 'a', [1, 10], { minPasses: 3, minSeconds: 0.3, maxPasses: 60 }, new Set(), ['latency', 'throughput']);
  const plan = timingPlan([base]);
  assert.deepEqual(
    { points: plan.points, cells: plan.cellPoints, groups: plan.groups, passes: plan.passes },
    { points: 4, cells: 0, groups: 1, passes: [66, 66] },
  );
  // The views' passes: 2 x (30 x 0.01 s + 3 x 0.1 s).
  assert.ok(Math.abs(plan.seconds[0] - 1.2) < 1e-9 && plan.seconds[1] === plan.seconds[0], JSON.stringify(plan));
  await timeInRounds([base]);
  assert.equal(log.filter((l) => l.endsWith(`:${QUERIES.length}`)).length, 66, 'the timing took the planned passes');
  assert.equal(timingPlan([base]).points, 0, 'nothing is left to plan once timed');

  // A point a cell reads goes on to the cells' precision: a range, from 10 passes to its caps.
  const cell = timingOf(
    fakeEngine('b', []),
    'b',
    [1, 10],
    { minPasses: 3, minSeconds: 0, maxPasses: 8, cellHalfWidth: 0.01, cellSeconds: 2, cellMaxPasses: 40 },
    new Set(),
    ['throughput'],
    new Set([10]),
  );
  const ranged = timingPlan([cell]);
  assert.equal(ranged.cellPoints, 1);
  // ef 1: 3 passes; ef 10 (0.1 s a pass): 10 passes at least, min(40, 2 s / 0.1 s) = 20 at most.
  assert.deepEqual(ranged.passes, [13, 23]);
  assert.match(planText(ranged), /^timing plan: 2 points \(1 read by table cells\) in 1 group, 13-23 passes, about /);
});

test('--max-time: curve points no cell reads leave the timing, every other one first and the ladder ends last; the cells keep theirs', async () => {
  const timing = { minPasses: 3, minSeconds: 0, maxPasses: 3 };
  // Passes of ef x 10 ms, 3 each: 0.93 s planned, ef 8 read by a cell.
  const make = () => timingOf(fakeEngine('a', []), 'a', [1, 2, 4, 8, 16], timing, new Set(), ['throughput'], new Set([8]));
  const kept = (t: GroupTiming) => t.entries.filter((e) => !e.skipped).map((e) => e.item.li);
  const fits = make();
  assert.equal(thinToFit([fits], 10, '--max-time 10s').thinned, 0);
  assert.deepEqual(kept(fits), [1, 2, 4, 8, 16]);
  // 1.1 s with the overhead (x1.35): ef 2 (0.06 s) and ef 4 (0.12 s) go, in that order.
  const tight = make();
  const r = thinToFit([tight], 1.1, '--max-time 1.1s');
  assert.equal(r.thinned, 2);
  assert.deepEqual(kept(tight), [1, 8, 16]);
  assert.ok(r.plan.seconds[1] * TIMING_OVERHEAD <= 1.1, JSON.stringify(r.plan));
  assert.match(tight.entries.find((e) => e.item.li === 2)!.skipped!, /^left out of the timing by --max-time 1\.1s: a curve point no table cell reads$/);
  const log: string[] = [];
  const timed = timingOf(fakeEngine('b', log), 'b', [1, 2, 4, 8, 16], timing, new Set(), ['throughput'], new Set([8]));
  thinToFit([timed], 1.1, '--max-time 1.1s');
  await timeInRounds([timed]);
  assert.deepEqual(
    [1, 2, 4, 8, 16].map((ef) => passesAt(log, 'b', ef).length),
    [3, 0, 0, 3, 3],
  );
  // A bound nothing fits: every curve point goes, the cell's point stays whole.
  const none = make();
  assert.equal(thinToFit([none], 0.01, '--max-time 0.01s').thinned, 4);
  assert.deepEqual(kept(none), [8]);
});
