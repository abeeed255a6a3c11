// Measuring one query group of one participant (docs/measurement.md, "Stable points",
// "Calibration"). Warm protocol, in this order:
// 1. the group's first query, timed on its own before anything else touches the engine, then the
//    plan check (explain runs after it: an engine's explain may execute the query);
// 2. one untimed pass per ladder point over the group's query set: its answers give the point's
//    recall (and warm the engine's caches);
// 3. calibration: recall-only probes of the main knob until a point lies within ±0.005 of each
//    table target;
// 4. timed passes over the same query set, in rounds (src/runner/timed-rounds.ts) until each
//    (point, view) has both the minimum passes and the minimum timed seconds, spread over the
//    rounds, and taken together with the run's other groups (and, interleaved, other
//    participants'): drift and bursts of other work then fall on all points alike instead of on
//    one. A pass taken while other processes used the machine is retaken (up to max_passes);
// 5. the points, with estimates, 95 % intervals and the raw per-pass figures.
// Steps 1-3 are prepareWarmGroup, step 4 is the caller's (timeInRounds), step 5 finishWarmGroup
// (each point built by stored-point.ts). The defaults of the timing are in timing-defaults.ts.
// The cold protocol keeps the slices of docs/method.md §5 (every query once, at least MIN_SLICE queries each).
import type { Knobs, Strategy } from '../contracts.ts';
import { recallInterval, singlePassIntervals } from '../metrics/intervals.ts';
import { hasReadings, pointReadings, summarize } from '../metrics/recall.ts';
import { VIEWS, type ResultPoint } from '../results/schema.ts';
import type { JournalEntry } from '../results/journal.ts';
import { TARGETS, throughputCurve } from '../metrics/curve.ts';
import { grainsOf, readCell, type Grains } from '../metrics/frontier.ts';
import { log } from '../util/progress.ts';
import { calibrate, type CalibrationRecord } from './calibrate.ts';
import { HostError } from './client.ts';
import { ladderFor } from './participants.ts';
import { scorePoint } from './points.ts';
import { drivenBy, GroupTiming, timeInRounds, type Item } from './timed-rounds.ts';
import { SLICE_CAP } from './query-order.ts';
import { latencySummary } from '../metrics/latency.ts';
import type { PointReply } from './point-reply.ts';
import type { GroupRun } from './group-run.ts';
import { keyOf } from './kept-passes.ts';
import { FEW_QUERIES, pointOf } from './stored-point.ts';
import { engineProcesses, ioBetween, snapshotIo } from './engine-io.ts';
import { boundedSlice, COLD_POINT_SECONDS, MIN_SLICE, minPointQueries } from './timing-defaults.ts';
import { coldItems } from './cold-placement.ts';
import { failsOnlyThePoint, knobsKey, recallPass, type RecallPass } from './recall-pass.ts';

/** The first query of the group on its own, then the plan check. False when the plan check
 * failed the group. */
async function firstQueryThenPlan(run: GroupRun, knobs: Knobs, firstQ: number): Promise<boolean> {
  const { engine, g, group, pointTimeoutS } = run;
  if (group.first_query_ms !== undefined) return true;
  await engine.beforeGroup(g.key);
  const first = await engine.request<'point'>({ type: 'point', knobs, k: g.k, queries: [firstQ], filters: [g.filters[firstQ]], clients: 1 }, pointTimeoutS);
  group.first_query_ms = first.reply.latenciesMs[0];
  const explained = await engine.request<'explained'>({ type: 'explain', knobs, query: firstQ, k: g.k, filter: g.filters[firstQ] }, pointTimeoutS);
  if (explained.plan !== null) group.plan = explained.plan;
  if (explained.planError) {
    group.status = 'failed';
    group.reason = `plan check: ${explained.planError}`;
    group.complete = true;
    run.save();
    return false;
  }
  run.save();
  return true;
}

/** A warm group prepared for timing: its timing, given to timeInRounds, then finishWarmGroup. */
export interface PreparedGroup {
  run: GroupRun;
  timing: GroupTiming;
}

/** The warm protocol for one group on its own (see the file comment). */
export async function measureWarmGroup(run: GroupRun): Promise<void> {
  const prepared = await prepareWarmGroup(run);
  if (!prepared) return;
  await timeInRounds([prepared.timing]);
  await finishWarmGroup(prepared);
}

/** Steps 1-3 of the warm protocol: the first query and plan check (build 0), the recall passes
 * and calibration. Null when the plan check failed the group. */
export async function prepareWarmGroup(run: GroupRun): Promise<PreparedGroup | null> {
  const { engine, p, g, group, queries, pointTimeoutS } = run;
  const ladder = ladderFor(p.settings, g.filter, g.k);
  if (run.build === 0 && !(await firstQueryThenPlan(run, ladder[0], queries[0]))) return null;

  // Recall-only passes, cached per knob setting: ladder points, calibration probes, builds.
  const recalls = new Map<string, RecallPass>();
  const probe = async (knobs: Knobs): Promise<RecallPass> => {
    const key = JSON.stringify(knobs);
    const have = recalls.get(key);
    if (have) return have;
    // A resumed run's probe of this very measurement (same index, queries, knobs).
    const kept = run.kept?.journal.probe(keyOf(run.kept, knobs));
    if (kept && hasReadings(kept.summary)) {
      const got = { digests: kept.digests ? Uint32Array.from(kept.digests) : undefined, summary: kept.summary, perQuery: kept.perQuery, wallS: kept.wallS };
      recalls.set(key, got);
      return got;
    }
    const got = await recallPass(run, knobs, queries);
    recalls.set(key, got);
    run.kept?.journal.keepProbe(keyOf(run.kept, knobs), { ...got, digests: got.digests ? Array.from(got.digests) : null });
    return got;
  };

  let items: Item[];
  if (run.build === 0) {
    items = ladder.map((knobs, li) => ({ li, knobs }));
  } else {
    // Later builds: the knobs build 0's cells were read at (calibrated points, their adjacent
    // neighbours, the lowest point of a cell read above its target), so each build reads the
    // same cells on points of its own.
    const read = new Set<number>();
    for (const target of TARGETS)
      for (const f of readCell(throughputCurve(group, 0), target, 'higher', grainsOf(p.settings.calibration)).from ?? []) read.add(f.ladderIndex);
    const seen = group.points.filter(
      (pt) =>
        (pt.build ?? 0) === 0 && pt.view === 'throughput' && (read.has(pt.ladder_index) || pt.calibrated_for !== undefined || pt.ladder_index >= ladder.length),
    );
    items = seen.map((pt) => ({ li: pt.ladder_index, knobs: pt.knobs, calibratedFor: pt.calibrated_for }));
  }
  const kept: Item[] = [];
  for (const it of items) {
    try {
      it.recall = await probe(it.knobs);
      kept.push(it);
    } catch (e) {
      if (!failsOnlyThePoint(e)) throw e;
      group.skipped.push({ ladder_index: it.li, knobs: it.knobs, reason: e.message });
      // A time-out at one knob: higher ladder points would not fare better.
      if (e instanceof HostError) break;
    }
  }
  items = kept;
  run.onProgress(`${g.key}: recall of ${items.length} ladder points`);

  const spec = p.settings.calibration;
  if (run.build === 0 && spec && items.length > 0) {
    const records: CalibrationRecord[] = [];
    for (const target of TARGETS) {
      try {
        records.push(
          ...(await calibrate(
            items.map((i) => i.knobs),
            target,
            spec,
            async (k) => (await probe(k)).summary.recall,
          )),
        );
      } catch (e) {
        if (!failsOnlyThePoint(e)) throw e;
        records.push({ target, knob: spec.knob[0], status: 'failed', knobs: [], probes: [], reason: e.message });
      }
    }
    group.calibration = records;
    for (const r of records) {
      for (const knobs of r.knobs) {
        const existing = items.find((i) => knobsKey(i.knobs) === knobsKey(knobs));
        const calibratedFor = r.status === 'found' ? r.target : undefined;
        if (existing) {
          if (calibratedFor !== undefined && existing.calibratedFor === undefined) existing.calibratedFor = calibratedFor;
          continue;
        }
        const got = recalls.get(JSON.stringify(knobs));
        if (got) items.push({ li: ladder.length + items.filter((i) => i.li >= ladder.length).length, knobs, calibratedFor, recall: got });
      }
    }
    run.onProgress(`${g.key}: calibrated (${records.filter((r) => r.status === 'found').length} of ${records.length} found)`);
  }

  markCellPoints(items, run.build, grainsOf(p.settings.calibration));

  // Later builds time the throughput view alone: the table's cells are read there, and the
  // latency view (one request at a time) has the costliest passes; latency cells are build 0's.
  const timing = new GroupTiming(
    {
      engine,
      p,
      g,
      queries,
      clients: run.clients,
      threads: run.threads,
      timing: run.timing,
      pointTimeoutS,
      busyCores: run.busyCores,
      hostSlow: run.hostSlow,
      hostSpeed: run.hostSpeed,
      loadMeter: run.loadMeter,
      onProgress: run.onProgress,
      kept: run.kept,
    },
    items,
    run.build === 0 ? VIEWS : ['throughput'],
  );
  return { run, timing };
}

/** Step 5 of the warm protocol: the timed entries' points, stored. */
export async function finishWarmGroup({ run, timing }: PreparedGroup): Promise<void> {
  const { group } = run;
  const strategies = new Map<string, Awaited<ReturnType<typeof planAt>>>();
  for (const e of timing.entries) {
    if (e.skipped) {
      if (e.view === 'throughput') group.skipped.push({ ladder_index: e.item.li, knobs: e.item.knobs, reason: e.skipped });
      continue;
    }
    // The plan check at every point's knobs, after its passes (both views share one).
    const key = JSON.stringify(e.item.knobs);
    if (!strategies.has(key)) strategies.set(key, await planAt(run, e.item.knobs));
    const plan = strategies.get(key)!;
    if (plan.error !== null) {
      // A plan that contradicts what the settings promise fails the point, with the plan.
      if (e.view === 'throughput') group.skipped.push({ ladder_index: e.item.li, knobs: e.item.knobs, reason: `plan check: ${plan.error}` });
      continue;
    }
    const point = await pointOf(run, e);
    if (plan.strategy) point.strategy = plan.strategy;
    group.points.push(point);
  }
  group.points.sort((a, b) => (a.build ?? 0) - (b.build ?? 0) || a.ladder_index - b.ladder_index || a.view.localeCompare(b.view));
  if (run.build === 0) group.complete = true;
  run.save();
}

/** Marks the items the table's cells are expected to read, so that their throughput view is timed
 * to the cells' precision. Before timing only recalls are known; the cell rule (src/metrics/
 * frontier.ts) is applied to them with a stand-in value that falls as recall rises (the usual
 * shape), which picks the calibrated points, the lowest point of a cell read above its target
 * and the two points around an interpolated one. Later builds time only such points. */
export function markCellPoints(items: Item[], build: number, grains: Grains = {}): void {
  const curve = items
    .filter((it) => it.recall !== undefined)
    .map((it) => ({
      recall: it.recall!.summary.recall,
      value: 2 - it.recall!.summary.recall,
      knobs: it.knobs,
      ladderIndex: it.li,
      calibratedFor: it.calibratedFor,
    }));
  // Each point's targets: its lead is paired at those (src/runner/lead-precision.ts).
  const read = new Map<number, number[]>();
  for (const target of TARGETS)
    for (const f of readCell(curve, target, 'higher', grains).from ?? []) read.set(f.ladderIndex, [...(read.get(f.ladderIndex) ?? []), target]);
  for (const it of items) {
    if (read.has(it.li)) it.cellTargets = read.get(it.li);
    if (read.has(it.li) || build > 0) it.readsCell = true;
  }
}

/** The engine's strategy at these knobs for the group's first query, and a plan check that
 * failed. An engine that cannot say (it crashed or hung explaining) leaves it unrecorded. */
async function planAt(run: GroupRun, knobs: Knobs): Promise<{ strategy: Strategy | null; error: string | null }> {
  const { engine, g, queries, pointTimeoutS } = run;
  const q = queries[0];
  try {
    const explained = await engine.request<'explained'>({ type: 'explain', knobs, query: q, k: g.k, filter: g.filters[q] }, pointTimeoutS);
    return { strategy: explained.strategy, error: explained.planError };
  } catch (e) {
    if (!(e instanceof HostError) || e.userError) throw e;
    log(`${run.p.name}: ${g.key}: no plan at ${JSON.stringify(knobs)}: ${e.message}`);
    return { strategy: null, error: null };
  }
}

/** The cold protocol: every query once, in slices of at least MIN_SLICE queries (fewer only when
 * the dataset has fewer); slices wrap around the query order when the points need more, and
 * such points are marked `queries-reused`. With a calibration spec the points are placed around
 * the table's targets by recall-only probes on a slice of their own (coldItems). */
export async function measureColdGroup(run: GroupRun): Promise<void> {
  const { engine, p, ds, g, group, queries: order, pointTimeoutS } = run;
  const ladder = ladderFor(p.settings, g.filter, g.k);
  const per = Math.min(ds.nq - 1, Math.max(MIN_SLICE, SLICE_CAP[g.k] ?? 200));
  const firstQ = order[0];
  if (!(await firstQueryThenPlan(run, ladder[0], firstQ))) return;
  const { items, start, probeQps } = await coldItems(run, ladder);
  // The engine's expected speed in a view: its group's last point in that view, else its last
  // point, else the probes' (a resumed group reads it from the points it kept).
  const expectedQps = (view: ResultPoint['view']) => [...group.points].reverse().find((pt) => pt.view === view)?.qps ?? group.points.at(-1)?.qps ?? probeQps;
  const have = new Set(group.points.map((pt) => `${pt.ladder_index}/${pt.view}`));
  for (const s of group.skipped) for (const v of VIEWS) have.add(`${s.ladder_index}/${v}`);
  // Each point is appended, not the whole file rewritten: bytes per point stay constant.
  const keep = (entry: JournalEntry) => (run.append ? run.append(entry) : run.save());
  const slots = items.length * VIEWS.length;
  if (start + slots * per > ds.nq)
    log(
      `${p.name}: ${g.key}: ${items.length} points need ${start + slots * per} queries, ${ds.name} has ${ds.nq}: later points reuse queries (flagged queries-reused); shorten the ladder or use a dataset with more queries`,
    );
  let slot = 0;
  for (const { li, knobs, calibratedFor } of items) {
    for (const view of VIEWS) {
      const from = start + slot++ * per;
      if (have.has(`${li}/${view}`)) continue;
      // The slot keeps its place in the order (a resumed run finds the same slots); a slow engine
      // answers only its first queries (COLD_POINT_SECONDS), and the point says so.
      const n = boundedSlice(per, expectedQps(view), COLD_POINT_SECONDS);
      const queries = Array.from({ length: n }, (_, i) => order[(from + i) % ds.nq]);
      const drive = drivenBy(p, view, run.clients, run.threads);
      // Bytes the engine's processes read from storage over the slice (the disk tier's figure).
      const ioBefore = snapshotIo(engineProcesses(engine.loadPids()));
      let reply: PointReply;
      try {
        const retry = (e: HostError) => log(`${p.name}: ${g.key} point ${li} (${view}): ${e.message}; restarting the engine and measuring the point again`);
        reply = (
          await engine.request<'point'>(
            { type: 'point', knobs, k: g.k, queries, filters: queries.map((q) => g.filters[q]), clients: drive.clients, threads: drive.threads },
            pointTimeoutS,
            retry,
          )
        ).reply;
      } catch (e) {
        if (!(e instanceof HostError) || e.userError) throw e;
        group.skipped.push({ ladder_index: li, knobs, reason: e.message });
        group.complete = true;
        run.save();
        return;
      }
      const failed = reply.errors.filter((x) => x !== null);
      if (failed.length > 0) {
        const skipped = { ladder_index: li, knobs, reason: `${failed.length} of ${queries.length} queries failed: ${failed[0]}` };
        group.skipped.push(skipped);
        keep({ group: group.key, skipped });
        continue;
      }
      const io = ioBetween(ioBefore, snapshotIo(engineProcesses(engine.loadPids())));
      const scores = scorePoint(ds, g, queries, reply);
      const s = summarize(scores);
      const qps = queries.length / reply.wallS;
      const ci = singlePassIntervals(reply.latenciesMs, qps);
      const point: ResultPoint = {
        ladder_index: li,
        knobs,
        view,
        clients: drive.clients * drive.threads,
        queries: queries.length,
        query_slice: [from % ds.nq, (from + n - 1) % ds.nq],
        ...pointReadings(s),
        qps,
        duration_s: reply.wallS,
        latency_ms: latencySummary(reply.latenciesMs),
        flags: [
          ...(s.unknownIds + s.duplicateIds + s.filterViolations > 0 ? ['invalid-results'] : []),
          ...(from + n - 1 >= ds.nq ? ['queries-reused'] : []),
          ...(n < minPointQueries(ds.nq) ? [FEW_QUERIES] : []),
        ],
        passes: 1,
        ci: { qps: ci.qps, recall: recallInterval(scores.map((x) => x.tieAware)), latency_ms: ci.latency_ms },
        build: run.build,
        driven: drive.text,
        ...(calibratedFor !== undefined ? { calibrated_for: calibratedFor } : {}),
        ...(io ? { io: { read_bytes_per_query: io.readBytes / queries.length, major_faults_per_query: io.majorFaults / queries.length } } : {}),
      };
      group.points.push(point);
      keep({ group: group.key, point });
      run.onProgress(`${g.key} point ${li} (${view})`);
    }
  }
  group.complete = true;
}
