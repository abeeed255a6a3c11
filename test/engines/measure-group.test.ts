// The warm protocol of one group against a fake engine whose answers are the real exact ground
// truth degraded by a known recall curve of its knob: the order of requests (the first query
// before anything else), the same query set for every point and view, calibration reading the
// table's cells at measured points within ±0.005, intervals on every point, and busy passes
// retaken then flagged.
// vecbench-test: alone (busy passes: it reads the machine's load).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Knobs, Participant } from '../../src/contracts.ts';
import { prepareDataset } from '../../src/prepare/registry.ts';
import type { Dataset } from '../../src/datasets/layout.ts';
import { CALIBRATION_TOLERANCE } from '../../src/metrics/frontier.ts';
import { deriveCells } from '../../src/report/cells.ts';
import type { ResultGroup } from '../../src/results/schema.ts';
import { emptyGroup, fakeResultOf } from '../helpers/fake-result.ts';
import type { GroupEngine, GroupRun } from '../../src/runner/group-run.ts';
import { markCellPoints, measureWarmGroup } from '../../src/runner/measure-group.ts';
import { BUSY_RETAKES } from '../../src/runner/timed-rounds.ts';
import { settingsFileSchema, type LoadedParticipant } from '../../src/runner/participants.ts';
import { prepareGroups, type AskedGroup } from '../../src/runner/points.ts';
import type { HostRequest } from '../../src/runner/protocol.ts';
import type { PointReply } from '../../src/runner/point-reply.ts';

let dir: string;
let ds: Dataset;
let g: AskedGroup;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vb-measure-'));
  ds = await prepareDataset(dir, 'synthetic-2000');
  [g] = prepareGroups(ds, [{ filter: 'none', k: 10 }]);
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Share of queries answered exactly at knob ef (the rest get ranks 11-20: recall 0). */
const curve = (ef: number) => Math.min(1, 0.5 + ef / 80);

/** `failEf`: the plan at this ef contradicts the settings (the plan check fails there). */
function fakeEngine(log: string[], busyPasses = 0, failEf?: number) {
  let busyLeft = busyPasses;
  const answer = (req: Extract<HostRequest, { type: 'point' }>): PointReply => {
    const n = req.queries.length;
    const ef = req.knobs.ef as number;
    const offsets = new Int32Array(n + 1);
    const ids: number[] = [];
    req.queries.forEach((q, i) => {
      const good = (q % 1000) / 1000 < curve(ef);
      const from = good ? 0 : 10;
      for (let j = 0; j < req.k; j++) ids.push(g.gt.ids[q * g.gt.depth + from + j]);
      offsets[i + 1] = ids.length;
    });
    const digests = new Uint32Array(n);
    return {
      ids: Int32Array.from(ids),
      offsets,
      latenciesMs: new Float64Array(n).fill(0.05),
      wallS: n * 0.00005 * (1 + ef / 100),
      errors: new Array(n).fill(null),
      digests,
    };
  };
  const engine: GroupEngine = {
    async beforeGroup() {
      log.push('beforeGroup');
    },
    loadPids: () => ({ engine: undefined, engineTree: false, host: undefined }),
    async request(req: HostRequest) {
      if (req.type === 'point') {
        log.push(`point:${req.queries.length}:${req.ids === false ? 'timed' : 'ids'}`);
        return { type: 'point', reply: answer(req) } as never;
      }
      if (req.type === 'explain') {
        log.push('explain');
        const ef = req.knobs.ef as number;
        // The strategy flips with the knob, as a planner's does past a threshold.
        return {
          type: 'explained',
          plan: 'fake plan',
          planError: ef === failEf ? 'the plan scans the whole table' : null,
          strategy: { label: ef >= 16 ? 'graph walk' : 'exact scan', observed: true },
        } as never;
      }
      if (req.type === 'null-pass')
        return { type: 'null-pass', reply: { ...answer({ ...req, type: 'point', knobs: { ef: 1 }, filters: [], ids: false }), wallS: 1e-6 } } as never;
      if (req.type === 'loadgen-ceiling') return { type: 'loadgen-result', reply: { wallS: 1e-6 } } as never;
      throw new Error(`unexpected request ${req.type}`);
    },
  };
  const meter = {
    start() {},
    stop() {
      // The first passes look busy: they must be retaken, not counted.
      if (busyLeft > 0) {
        busyLeft--;
        return { otherCores: 1.5, steal: 0 };
      }
      return { otherCores: 0, steal: 0 };
    },
  };
  return { engine, meter };
}

function participant(ladder: Knobs[]): LoadedParticipant {
  const settings = settingsFileSchema.parse({
    index: {},
    ladders: [{ knobs: { ef: ladder.map((k) => k.ef as number) } }],
    calibration: { knob: 'ef', min: 1, max: 40 },
  });
  const adapter = { engine: 'fake', concurrentSearch: false, filters: null, filterStrategy: 'none' } as unknown as Participant<unknown>;
  return { name: 'fake', dir, adapter, settings, index: {}, settingsPath: join(dir, 'settings.json') };
}

const queriesOf = () => Array.from({ length: 1000 }, (_, i) => (i * 7) % ds.nq);

/** A host whose first `slowLeft` probes come back slowed by `slowdown`, then at speed. */
function fakeHost(slowLeft: number, slowdown = 1.6) {
  const waits: number[] = [];
  const probe = () => (slowLeft-- > 0 ? { ms: 10 * slowdown, slowdown } : { ms: 10, slowdown: 1 });
  return {
    waits,
    meter: {
      sample: async () => probe(),
      waitForSpeed: async (limit: number) => {
        waits.push(limit);
        return probe();
      },
    },
  };
}

async function measure(busyPasses = 0, minPasses = 3, maxPasses = 6, host?: ReturnType<typeof fakeHost>, failEf?: number) {
  const log: string[] = [];
  const { engine, meter } = fakeEngine(log, busyPasses, failEf);
  const group = emptyGroup(g);
  const queries = queriesOf();
  const run: GroupRun = {
    engine,
    p: participant([{ ef: 2 }, { ef: 16 }, { ef: 30 }]),
    ds,
    g,
    group,
    queries,
    clients: 4,
    threads: 2,
    pointTimeoutS: 60,
    timing: { minPasses, minSeconds: 0, maxPasses },
    build: 0,
    busyCores: 0.25,
    onProgress: () => {},
    save: () => {},
    loadMeter: meter,
    ...(host ? { hostSpeed: host.meter, hostSlow: 1.25 } : {}),
  };
  await measureWarmGroup(run);
  return { log, group };
}

const resultOf = (group: ResultGroup) => fakeResultOf(ds, group, 4);

test('the first query runs alone before anything else touches the engine; explain comes after it', async () => {
  const measured = await measure();
  const { log } = measured;
  assert.deepEqual(log.slice(0, 3), ['beforeGroup', 'point:1:ids', 'explain']);
  // Then one untimed pass per knob setting over the whole query set, then only timed passes.
  const rest = log.slice(3);
  const firstTimed = rest.indexOf('point:1000:timed');
  assert.ok(firstTimed > 0);
  assert.ok(rest.slice(0, firstTimed).every((x) => x === 'point:1000:ids'));
  // After the last timed pass, the plan check at every point's knobs, once per knob setting.
  const lastTimed = rest.lastIndexOf('point:1000:timed');
  assert.ok(rest.slice(firstTimed, lastTimed + 1).every((x) => x === 'point:1000:timed'));
  const knobSettings = new Set(measured.group.points.map((p) => JSON.stringify(p.knobs))).size;
  assert.deepEqual(rest.slice(lastTimed + 1), new Array(knobSettings).fill('explain'));
});

test('the plan check runs at every point: its strategy is recorded, and a contradicting plan fails the point', async () => {
  const { group } = await measure(0, 3, 6, undefined, 16);
  assert.ok(group.points.length > 0);
  for (const p of group.points) {
    assert.notEqual(p.knobs.ef, 16);
    assert.deepEqual(p.strategy, { label: (p.knobs.ef as number) >= 16 ? 'graph walk' : 'exact scan', observed: true });
  }
  assert.ok(
    group.points.some((p) => p.strategy?.label === 'graph walk') && group.points.some((p) => p.strategy?.label === 'exact scan'),
    'the strategy flips between knobs',
  );
  const failed = group.skipped.find((s) => s.knobs.ef === 16);
  assert.equal(failed?.reason, 'plan check: the plan scans the whole table');
  // The cells say how they were read.
  const cells = deriveCells([resultOf(group)]);
  assert.ok(cells.some((c) => c.strategy === 'graph walk' || c.strategy === 'exact scan'));
});

test('every point and view answers the same query set; recall is exact for the knob; intervals everywhere', async () => {
  const { group } = await measure();
  assert.ok(group.complete);
  for (const p of group.points) {
    assert.equal(p.queries, 1000);
    const expected = queriesOf().filter((q) => (q % 1000) / 1000 < curve(p.knobs.ef as number)).length / 1000;
    assert.ok(Math.abs(p.recall - expected) < 1e-9, `ef ${p.knobs.ef}: recall ${p.recall}, expected ${expected}`);
    assert.ok(p.ci && p.ci.qps[0] <= p.qps && p.qps <= p.ci.qps[1], `qps ${p.qps} outside ${p.ci?.qps}`);
    assert.ok(p.ci.recall[0] <= p.recall && p.recall <= p.ci.recall[1]);
    assert.equal(p.passes, p.pass!.qps.length);
    assert.ok(p.passes! >= 3);
    assert.deepEqual(p.flags, []);
  }
  // Both views of a knob read the same recall (the same queries).
  for (const p of group.points.filter((x) => x.view === 'latency')) {
    const t = group.points.find((x) => x.view === 'throughput' && x.ladder_index === p.ladder_index)!;
    assert.equal(p.recall, t.recall);
  }
});

test('calibration: the table reads each target at a measured point within ±0.005', async () => {
  const { group } = await measure();
  const cal = group.calibration!;
  assert.deepEqual(
    cal.map((c) => c.status),
    ['found', 'found', 'found'],
  );
  const cells = deriveCells([resultOf(group)]);
  for (const target of [0.9, 0.95, 0.99]) {
    const c = cells.find((x) => x.target === target)!;
    assert.equal(c.status, 'calibrated', `${target}: ${c.status} ${JSON.stringify(cal)}`);
    assert.equal(c.read_recall.length, 1);
    assert.ok(Math.abs(c.read_recall[0] - target) <= CALIBRATION_TOLERANCE + 1e-9, `${target}: read at ${c.read_recall[0]}`);
    assert.ok(c.ci_low !== null && c.ci_high !== null && c.ci_low <= c.value! && c.value! <= c.ci_high);
  }
  const calibrated = group.points.filter((p) => p.calibrated_for !== undefined);
  assert.equal(calibrated.length, 6, 'three targets x two views');
  assert.ok(
    calibrated.every((p) => p.ladder_index >= 3),
    'calibrated points are numbered after the ladder',
  );
});

test('busy passes are retaken; a point that never gets enough quiet passes is flagged and sets no cell', async () => {
  const retaken = await measure(4, 2);
  const first = retaken.group.points[0];
  assert.ok(first.passes_busy! >= 1);
  assert.ok(!first.flags.includes('busy-machine'));
  const flagged = await measure(10_000, 2);
  assert.ok(flagged.group.points.every((p) => p.flags.includes('busy-machine') && p.passes === 6));
  // A busy machine gets BUSY_RETAKES retakes per pass needed, not max_passes of them.
  const capped = await measure(10_000, 2, 60);
  assert.ok(capped.group.points.every((p) => p.flags.includes('busy-machine') && p.passes === BUSY_RETAKES * 2));
  const cells = deriveCells([resultOf(flagged.group)]);
  assert.ok(cells.every((c) => c.value === null && c.excluded['busy-machine'] > 0));
  assert.match(cells[0].reason ?? '', /busy-machine/);
});

test('a round the host-speed probe finds slowed is retaken like a busy one, waited out, and its probe is kept', async () => {
  // One slowed probe: the first timing round is retaken, and the next waits for the host first.
  const host = fakeHost(1);
  const { group } = await measure(0, 2, 6, host);
  assert.deepEqual(host.waits, [1.25], 'one wait, at the --host-slow limit');
  for (const p of group.points) {
    assert.equal(p.passes_busy, 1, `${p.view} ${JSON.stringify(p.knobs)}: the slowed round is retaken`);
    assert.ok(!p.flags.includes('busy-machine'));
    assert.equal(p.pass!.host_ms![0], 16, 'the slowed probe is stored with its pass');
    assert.equal(p.pass!.qps.length, 2, 'the figures come from the passes at speed');
    assert.ok(p.machine!.host_ms! > 10);
  }
  // A host slowed throughout: the points run out of retakes and are flagged; no cell reads them.
  const slow = await measure(0, 2, 60, fakeHost(10_000));
  assert.ok(slow.group.points.every((p) => p.flags.includes('busy-machine') && p.passes === BUSY_RETAKES * 2));
  assert.ok(deriveCells([resultOf(slow.group)]).every((c) => c.value === null));
  // Without a meter (--host-slow 0) nothing is probed or stored.
  const off = await measure();
  assert.ok(off.group.points.every((p) => p.pass!.host_ms === undefined && p.machine!.host_ms === undefined));
});

test('the points cells will read are marked before timing: calibrated points, the lowest point of a cell above its target, the points around an interpolated one', () => {
  const item = (li: number, recall: number, calibratedFor?: number) => ({
    li,
    knobs: { ef: li },
    ...(calibratedFor !== undefined ? { calibratedFor } : {}),
    recall: { digests: undefined, summary: { recall } as never, perQuery: [] },
  });
  const marked = (items: ReturnType<typeof item>[], build = 0) => {
    markCellPoints(items, build);
    return items.filter((i) => (i as { readsCell?: boolean }).readsCell).map((i) => i.li);
  };
  // 0.90 and 0.95 calibrated (ladder indices 10, 11), 0.99 between two ladder points 0.985 and
  // 0.995 (interpolated): the ladder's 0.80 and 0.999 points only draw the curve.
  assert.deepEqual(marked([item(0, 0.8), item(1, 0.985), item(2, 0.995), item(3, 0.999), item(10, 0.901, 0.9), item(11, 0.952, 0.95)]), [1, 2, 10, 11]);
  // Every target below the lowest point: that point alone.
  assert.deepEqual(marked([item(0, 0.995), item(1, 0.999), item(2, 1)]), [0]);
  // A later build times only such points: all are marked.
  assert.deepEqual(marked([item(0, 0.5), item(4, 0.7)], 1), [0, 4]);
  // Each marked point knows the targets it is read for: its lead is made precise at those.
  const targets = (items: ReturnType<typeof item>[]) => {
    markCellPoints(items, 0);
    return Object.fromEntries(items.map((i) => [i.li, (i as { cellTargets?: number[] }).cellTargets ?? []]));
  };
  assert.deepEqual(targets([item(0, 0.8), item(1, 0.985), item(2, 0.995), item(3, 0.999), item(10, 0.901, 0.9), item(11, 0.952, 0.95)]), {
    0: [],
    1: [0.99],
    2: [0.99],
    3: [],
    10: [0.9],
    11: [0.95],
  });
  assert.deepEqual(targets([item(0, 0.995), item(1, 0.999)]), { 0: [0.9, 0.95, 0.99], 1: [] });
});
