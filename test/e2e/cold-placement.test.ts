// The cold protocol's point placement (src/runner/cold-placement.ts): recall-only probes on a
// slice of their own put timed points at and around each table target, so the disk tier's cells
// read a value where a fixed ladder read "too wide"; a resumed group places the same points
// without probing again.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Knobs, Participant } from '../../src/contracts.ts';
import type { Dataset } from '../../src/datasets/layout.ts';
import { TARGETS, throughputCurve } from '../../src/metrics/curve.ts';
import { readCell } from '../../src/metrics/frontier.ts';
import { prepareDataset } from '../../src/prepare/registry.ts';
import type { ResultGroup } from '../../src/results/schema.ts';
import { NEAR, placeColdPoints, placedPoints } from '../../src/runner/cold-placement.ts';
import type { GroupEngine } from '../../src/runner/group-run.ts';
import { measureColdGroup } from '../../src/runner/measure-group.ts';
import { settingsFileSchema, type LoadedParticipant } from '../../src/runner/participants.ts';
import { prepareGroups, type AskedGroup } from '../../src/runner/points.ts';
import type { HostRequest } from '../../src/runner/protocol.ts';
import type { PointReply } from '../../src/runner/point-reply.ts';
import { emptyGroup, onePassRun } from '../helpers/fake-result.ts';

/** A recall curve that rises with the knob and saturates at `top`, like a graph's ef. */
const curve = (top: number, scale: number) => (ef: number) => top * (1 - Math.exp(-ef / scale));
const spec = { knob: ['ef'], min: 1, max: 4096 };

describe('placeColdPoints', () => {
  test('each target gets a point within the tolerance and a neighbour on either side, NEAR to 0.015 beyond it, at most 9 points', async () => {
    const r = curve(1, 30);
    const records = await placeColdPoints([{ ef: 16 }, { ef: 64 }, { ef: 256 }], spec, async (k) => r(Number(k.ef)));
    assert.ok(records);
    const points = placedPoints(records);
    assert.ok(points.length <= 9, `${points.length} points`);
    for (const t of TARGETS) {
      const at = points.find((p) => p.calibratedFor === t);
      assert.ok(at && Math.abs(at.recall - t) <= 0.0025, `a point calibrated for ${t}: ${JSON.stringify(points)}`);
      // Neighbours: one below and one above, past the timed slices' noise, within the cell rule's 0.02.
      assert.ok(
        points.some((p) => p.recall <= t - NEAR && p.recall >= t - 0.015),
        `below ${t}: ${points.map((p) => p.recall.toFixed(4))}`,
      );
      assert.ok(
        points.some((p) => p.recall >= t + NEAR && p.recall <= t + 0.015),
        `above ${t}: ${points.map((p) => p.recall.toFixed(4))}`,
      );
    }
    // Only the table's targets' own records mark a point calibrated.
    assert.deepEqual([...new Set(points.map((p) => p.calibratedFor).filter((x) => x !== undefined))].sort(), [...TARGETS]);
  });

  test('on a curve that saturates, the neighbour above is the value nearest the target past NEAR, not the far end of the knob', async () => {
    const r = curve(1, 30);
    // The ladder's top (4096) reads 1.000: within 0.015 of 0.99, but 25 times the knob of 0.99's.
    const records = await placeColdPoints([{ ef: 16 }, { ef: 4096 }], spec, async (k) => r(Number(k.ef)));
    const points = placedPoints(records!);
    const above = points.filter((p) => p.recall >= 0.99 + NEAR).map((p) => Number(p.knobs.ef));
    // The first ef past 0.994 is 30 ln(1 / 0.006) = 153.5; the search stops within 15 % of it.
    assert.ok(above.length > 0 && Math.min(...above) >= 153 && Math.min(...above) <= 154 * 1.15, `above 0.99: ${above}`);
    assert.ok(!points.some((p) => p.knobs.ef === 4096), 'the far end is not timed');
  });

  test('a knob that starts above a target times its lowest value; one that tops out below times the lowest value of its best recall, once', async () => {
    const r = curve(0.93, 2);
    const records = await placeColdPoints([{ ef: 40 }, { ef: 80 }], { knob: ['ef'], min: 20, max: 200 }, async (k) => r(Number(k.ef)));
    assert.ok(records);
    const byTarget = (t: number) => records.find((x) => Math.abs(x.target - t) < 1e-12)!;
    assert.equal(byTarget(0.9).status, 'below_range');
    assert.deepEqual(byTarget(0.9).knobs, [{ ef: 20 }]);
    assert.equal(byTarget(0.99).status, 'not_reached');
    // 80 and 200 both read 0.93: the cheaper is timed.
    assert.deepEqual(byTarget(0.99).knobs, [{ ef: 80 }]);
    const points = placedPoints(records);
    assert.deepEqual(
      points.map((p) => p.knobs.ef),
      [20, 80],
    );
  });

  test('a knob whose recall stops rising below the targets times its best probe, not the end of its range', async () => {
    // Recall peaks at 16 and falls a little after, as an IVF-PQ's bounded by its refine step.
    const r = (v: number) => 0.45 - 0.0001 * Math.abs(v - 16);
    const records = await placeColdPoints([{ ef: 16 }, { ef: 64 }], { knob: ['ef'], min: 1, max: 256 }, async (k) => r(Number(k.ef)));
    assert.deepEqual(
      placedPoints(records!).map((p) => p.knobs.ef),
      [16],
    );
  });

  test('no numeric main knob: null (the caller times the ladder)', async () => {
    assert.equal(await placeColdPoints([{ mode: 'a' }], spec, async () => 1), null);
  });
});

// ---- a cold group through the real runner code ----

let root: string;
let ds: Dataset;
let g: AskedGroup;
before(async () => {
  root = mkdtempSync(join(tmpdir(), 'vecbench-cold-placement-'));
  // 20,000 queries: a first, a probe slice of 1,000 and up to 9 points x 2 views x 1,000.
  ds = await prepareDataset(join(root, 'data'), 'synthetic-2000-16-q20k');
  [g] = prepareGroups(ds, [{ filter: 'none', k: 10 }]);
});
after(() => rmSync(root, { recursive: true, force: true }));

/** Recall 1 - exp(-ef / 30) in expectation: each true neighbour is returned when a hash of
 * (query, rank) falls below it, else a row from beyond the top k takes its place; each query
 * takes ef x `msPerEf` milliseconds (by default a microsecond per ef). */
function recallEngine(asked: HostRequest[], msPerEf = 1e-3): GroupEngine {
  const hash = (q: number, j: number) => (((q * 2654435761) ^ (j * 40503)) >>> 0) / 2 ** 32;
  return {
    async beforeGroup() {},
    loadPids: () => ({ engine: undefined, engineTree: false, host: undefined }),
    async request(req: HostRequest) {
      asked.push(req);
      if (req.type === 'explain') return { type: 'explained', plan: null, planError: null } as never;
      if (req.type !== 'point') throw new Error(`unexpected ${req.type}`);
      const p = 1 - Math.exp(-Number(req.knobs.ef) / 30);
      const n = req.queries.length;
      const offsets = new Int32Array(n + 1);
      const ids: number[] = [];
      req.queries.forEach((q, i) => {
        for (let j = 0; j < req.k; j++) ids.push(g.gt.ids[q * g.gt.depth + (hash(q, j) < p ? j : req.k + j)]);
        offsets[i + 1] = ids.length;
      });
      // Time grows with the knob, as a search's does: the frontier holds every point.
      const ms = Number(req.knobs.ef) * msPerEf;
      const reply: PointReply = {
        ids: Int32Array.from(ids),
        offsets,
        latenciesMs: new Float64Array(n).fill(ms),
        wallS: (n * ms) / 1000,
        errors: new Array(n).fill(null),
      };
      return { type: 'point', reply } as never;
    },
  };
}

function participant(efs: number[], calibrated: boolean): LoadedParticipant {
  const settings = settingsFileSchema.parse({ index: {}, ladders: [{ knobs: { ef: efs } }], ...(calibrated ? { calibration: spec } : {}) });
  const adapter = { engine: 'fake', concurrentSearch: false, filters: null, filterStrategy: 'none' } as unknown as Participant<unknown>;
  return { name: 'fake', dir: root, adapter, settings, index: {}, settingsPath: join(root, 'settings.json') };
}

async function coldGroup(calibrated: boolean, group: ResultGroup = emptyGroup(g), stopAfter = Infinity, msPerEf = 1e-3) {
  const asked: HostRequest[] = [];
  let points = 0;
  const run = onePassRun({
    engine: recallEngine(asked, msPerEf),
    p: participant([16, 64, 256], calibrated),
    ds,
    g,
    group,
    onProgress: (what) => {
      if (/^none\/10 point/.test(what) && ++points >= stopAfter) throw new Error('killed');
    },
    save: () => {},
  });
  await measureColdGroup(run).catch((e: Error) => {
    if (e.message !== 'killed') throw e;
  });
  return { group, asked };
}

const cellsOf = (group: ResultGroup) => TARGETS.map((t) => readCell(throughputCurve(group), t, 'higher').status);

test('a cold group with a calibration spec reads every target where its ladder alone read too wide; no query is asked twice', async () => {
  const ladderOnly = await coldGroup(false);
  assert.ok(cellsOf(ladderOnly.group).includes('bracket_too_wide'), `the ladder alone: ${cellsOf(ladderOnly.group)}`);

  const { group, asked } = await coldGroup(true);
  for (const [i, status] of cellsOf(group).entries()) assert.ok(status === 'calibrated' || status === 'interpolated', `${TARGETS[i]}: ${status}`);
  assert.ok(group.calibration && group.calibration.length === 9, 'the placement is kept in the group');
  assert.ok(!group.points.some((p) => p.flags.includes('queries-reused')), 'no point rereads a query');
  // The probes' queries (1..1000) and every timed slice are disjoint; the first query is the group's own.
  const timed = asked.filter((r) => r.type === 'point').slice(1);
  const probes = timed.filter((r) => r.type === 'point' && r.queries[0] === 1);
  assert.ok(probes.length >= 3, `${probes.length} probes`);
  const used = new Set<number>();
  for (const r of timed) {
    if (r.type !== 'point' || r.queries[0] === 1) continue;
    for (const q of r.queries) {
      assert.ok(q > 1000 && !used.has(q), `query ${q} asked twice or from the probe slice`);
      used.add(q);
    }
  }
  assert.equal(used.size, group.points.length * 1000);
});

test('a cold group stopped after 3 points resumes with the same placement, without probing again', async () => {
  const first = await coldGroup(true, emptyGroup(g), 3);
  assert.equal(first.group.points.length, 3);
  const placement = JSON.stringify(first.group.calibration);
  const resumed = await coldGroup(true, first.group);
  assert.equal(JSON.stringify(resumed.group.calibration), placement);
  const probes = resumed.asked.filter((r) => r.type === 'point' && r.queries[0] === 1);
  assert.equal(probes.length, 0, 'no probe on resume');
  const whole = await coldGroup(true);
  const key = (p: { ladder_index: number; view: string; knobs: Knobs; recall: number }) => `${p.ladder_index}/${p.view}/${JSON.stringify(p.knobs)}/${p.recall}`;
  assert.deepEqual(resumed.group.points.map(key).sort(), whole.group.points.map(key).sort());
});

test('a slow engine answers only what it can in about a minute a point (never under 200 queries), flagged few-queries; its probes after the first about 20 s', async () => {
  // 10 ms per ef: ef 16 answers 6 queries a second, ef 64 1.6.
  const { group, asked } = await coldGroup(true, emptyGroup(g), Infinity, 10);
  const probes = asked.filter((r) => r.type === 'point' && r.queries[0] === 1);
  assert.equal(probes[0].type === 'point' && probes[0].queries.length, 1000, 'the first probe asks the whole probe slice');
  for (const r of probes.slice(1))
    assert.ok(r.type === 'point' && r.queries.length >= 200 && r.queries.length < 1000, `a later probe asked ${r.type === 'point' && r.queries.length}`);
  const [first, ...rest] = group.points;
  assert.ok(rest.length > 0);
  for (const pt of [first, ...rest]) {
    // At the speed of the point before (or of the last probe): 60 s of it, at least 200.
    assert.ok(pt.queries >= 200 && pt.queries < 1000, `${pt.queries} queries`);
    assert.ok(pt.flags.includes('few-queries'), `flags ${pt.flags}`);
    assert.equal((pt.query_slice[1] - pt.query_slice[0] + 1 + 20_000) % 20_000, pt.queries);
  }
  // Each point keeps its slot of 1,000 (a resumed run finds the same), using its first queries.
  const starts = group.points.map((pt) => pt.query_slice[0]);
  assert.equal(new Set(starts).size, starts.length);
  for (const s of starts) assert.equal((s - 1001) % 1000, 0, `a slot starts at ${s}`);
});
