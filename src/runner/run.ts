// `vecbench run`: load each participant, sweep its ladder over every asked query group and
// store only measured points (docs/method.md §4, §5). Recall is computed here from the returned ids,
// never taken from the engine.
//
// The warm protocol takes the participants in stages (src/runner/participant-run.ts): each loads
// its engine and prepares its groups (first query, plan check, recall, calibration) one after
// another; then the points of every participant are timed together, in shared rounds
// (src/runner/timed-rounds.ts), all engines loaded and each idle while another runs; then each
// stores its points and measures what follows (later builds the same way, answer quality, load,
// cold start). --no-interleave takes the participants one after another instead, one engine
// loaded at a time.
import { resolve } from 'node:path';
import { prepareDataset } from '../prepare/registry.ts';
import type { ResultFile } from '../results/schema.ts';
import { readResult, resultPath, resultPaths } from '../results/store.ts';
import { UserError } from '../util/errors.ts';
import { Progress, log } from '../util/progress.ts';
import { HostError } from './client.ts';
import { sharedHostSpeed } from './host-speed.ts';
import { busyWarning, checkQuiet } from './machine-load.ts';
import type { PreparedGroup } from './measure-group.ts';
import { DEFAULT_HOST_SLOW, MIN_RUN_QUERIES, minPointQueries } from './timing-defaults.ts';
import { ParticipantRun } from './participant-run.ts';
import { loadParticipant, type LoadedParticipant } from './participants.ts';
import { prepareGroups } from './points.ts';
import type { RunOptions } from './run-options.ts';
import { reapServerData, serverDataBase } from './server-data.ts';
import { reapOrphans } from './server.ts';
import { timeInRounds } from './timed-rounds.ts';
import { thinToFit } from './thin-to-fit.ts';
import { planText, timingPlan } from './timing-plan.ts';
import { reapBudgets } from './memory-budget.ts';

/** Times the prepared groups of several participants (or one) in shared rounds. */
async function timeTogether(
  runs: ParticipantRun[],
  prepared: Map<ParticipantRun, PreparedGroup[]>,
  onGroupDone: (r: ParticipantRun, pg: PreparedGroup) => Promise<void>,
  budget?: { seconds: number; why: string },
): Promise<void> {
  const owner = new Map(runs.flatMap((r) => (prepared.get(r) ?? []).map((pg) => [pg.timing, { r, pg }] as const)));
  const timings = [...owner.keys()];
  if (timings.length === 0) return;
  const timed = runs.filter((r) => (prepared.get(r) ?? []).length > 0);
  for (const r of timed) r.result.run.interleaved_with = timed.filter((o) => o !== r).map((o) => o.p.name);
  log(planText(budget ? thinToFit(timings, budget.seconds, budget.why).plan : timingPlan(timings)));
  // Progress counts rounds: with passes spread over all of them, points finish near the end.
  // The ETA is the plan's, made again after each round from the passes still wanted: the first
  // round times every point and the last few only the cells', so extrapolating rounds said an
  // hour at round 2 of a run that took ten minutes.
  const progress = new Progress(timed.length > 1 ? `timing ${timed.length} participants' points together, rounds` : `${timed[0].p.name}: timing, rounds`, 1);
  let round = 0;
  let left = { seconds: midpoint(timingPlan(timings).seconds), at: performance.now() };
  const eta = () => Math.max(0, left.seconds - (performance.now() - left.at) / 1000);
  for (const r of timed) r.onTiming = (what) => progress.update(round, timed.length > 1 ? `${r.p.name} ${what}` : what, eta());
  try {
    await timeInRounds(
      timings,
      (pr) => {
        round = pr.round;
        left = { seconds: midpoint(timingPlan(timings).seconds), at: performance.now() };
        progress.setTotal(pr.rounds);
        progress.update(round, `${pr.done}/${pr.total} points done`, eta());
      },
      async (t) => {
        const o = owner.get(t)!;
        await onGroupDone(o.r, o.pg);
      },
    );
  } finally {
    for (const r of timed) r.onTiming = null;
  }
  progress.done();
}

const midpoint = ([low, high]: [number, number]) => (low + high) / 2;

/**
 * Measures the given participants through every stage, together: each stage is taken by each
 * participant in turn, and a build's groups are timed in shared rounds. A participant whose
 * engine fails is stopped and left out of the later stages (its finished groups are kept); a
 * user error stops the run.
 */
async function measureTogether(
  runs: ParticipantRun[],
  opts: RunOptions,
  failures: string[],
  clock: { started: number; later: number },
): Promise<ParticipantRun[]> {
  let live = runs.filter((r) => !r.already);
  const each = async (stage: (r: ParticipantRun) => Promise<void>): Promise<void> => {
    const kept: ParticipantRun[] = [];
    for (const r of live) {
      try {
        await stage(r);
        kept.push(r);
      } catch (e) {
        if (e instanceof HostError && e.userError) throw new UserError(e.message);
        if (!(e instanceof HostError)) throw e;
        failures.push(`${r.p.name}: ${e.message}`);
        log(`${r.p.name}: stopped: ${e.message} (finished groups are kept in ${resolve(opts.outDir)})`);
        // The result says why it stopped (e.g. an engine that does not fit its memory budget).
        r.result.extra.stopped = e.message;
        try {
          r.save();
        } catch (saveError) {
          log(`${r.p.name}: its result could not be saved: ${(saveError as Error).message}`);
        }
        await r.stop();
      }
    }
    live = kept;
  };
  try {
    await each((r) => r.start());
    const builds = opts.cold ? 1 : (opts.builds ?? 1);
    for (let b = 0; b < builds; b++) {
      const prepared = new Map<ParticipantRun, PreparedGroup[]>();
      await each(async (r) => {
        prepared.set(r, await r.prepareBuild(b));
      });
      // Each group is stored as soon as its points are done (timeInRounds hands on every one).
      // --max-time: this build's share of the time left (participants measured after these,
      // without --interleave, get theirs).
      const left = opts.maxTimeS === undefined ? undefined : opts.maxTimeS - (performance.now() - clock.started) / 1000;
      const budget = left === undefined ? undefined : { seconds: left / (builds - b + clock.later * builds), why: `--max-time ${opts.maxTimeS}s` };
      await timeTogether(live, prepared, (r, pg) => r.finishBuild(b, [pg]), budget);
    }
    await each((r) => r.extras());
    await each((r) => r.complete());
  } finally {
    for (const r of runs) await r.stop();
  }
  return runs.filter((r) => r.already || live.includes(r));
}

export async function run(opts: RunOptions): Promise<ResultFile[]> {
  // --max-time counts from here: the dataset, the loads and the probes spend the bound too.
  const started = performance.now();
  // Servers left by a run that was killed before it could stop them.
  for (const r of reapOrphans()) log(`stopped ${r.name} server (pid ${r.pid}) left by a killed run`);
  for (const dir of reapServerData()) log(`removed server data ${dir} left in ${serverDataBase()} by a run whose engine home is gone`);
  reapBudgets();
  const participants: LoadedParticipant[] = [];
  for (const name of opts.participants) participants.push(await loadParticipant(name, opts.settingsFiles?.[name], opts.dataset));
  // The table after the run reads every stored result: one that cannot be read stops the run
  // now, before any measuring, not after it (a --fresh run replaces its own files unread).
  const replaced = new Set(opts.fresh ? opts.participants.map((name) => resolve(resultPath(opts.outDir, opts.dataset, name))) : []);
  for (const path of resultPaths(opts.outDir)) if (!replaced.has(resolve(path))) readResult(path);
  // The ground truth is computed below for the run's groups only (prepareGroups): on a large set
  // each filter kind is minutes of scanning, and a run asks few of the fifteen.
  const ds = await prepareDataset(opts.dataDir, opts.dataset, { groundTruth: false });
  // Recall over a handful of queries (reused point after point) says nothing: refuse it.
  if (ds.nq < MIN_RUN_QUERIES)
    throw new UserError(
      `dataset ${ds.name} has ${ds.nq} queries, vecbench run needs at least ${MIN_RUN_QUERIES} (and ${minPointQueries(Infinity).toLocaleString('en-US')} for a reliable recall); prepare it with more queries`,
    );
  if (typeof opts.querySet === 'number' && opts.querySet < MIN_RUN_QUERIES)
    throw new UserError(
      `--queries ${opts.querySet} is below the ${MIN_RUN_QUERIES} queries a point needs at least; pass --queries ${minPointQueries(ds.nq)} (or all)`,
    );
  // Settings that cannot suit this dataset (e.g. its dimension) stop the run before any work.
  const info = { name: ds.name, n: ds.n, d: ds.d, metric: ds.metric, hasText: ds.text !== undefined };
  for (const p of participants) {
    const why = p.adapter.checkDataset?.(p.index, info);
    if (why) throw new UserError(`participant ${p.name}: ${why}`);
  }
  const groups = prepareGroups(ds, opts.groups);
  // A machine already busy makes every figure suspect: say so before measuring (points measured
  // while it stays busy are retaken, then flagged).
  const busy = busyWarning(await checkQuiet(1000));
  if (busy) log(busy);
  // The host-speed reference is the fastest probe of the run: a couple of seconds of probes
  // first, so the first rounds are judged against the host at speed, not against themselves.
  if (!opts.cold && (opts.hostSlow ?? DEFAULT_HOST_SLOW) > 0) {
    const first = await sharedHostSpeed().waitForSpeed(0);
    log(
      `host-speed probe: fastest ${(first.ms / first.slowdown).toFixed(1)} ms over 2 s (a round whose probe takes over ${opts.hostSlow ?? DEFAULT_HOST_SLOW} x the run's fastest is retaken)`,
    );
  }
  const failures: string[] = [];
  const runs = participants.map((p) => new ParticipantRun(p, ds, groups, opts));
  // Interleaved, every participant's engine is loaded at once (each idle while another runs).
  const together = !opts.cold && (opts.interleave ?? true) && runs.filter((r) => !r.already).length > 1;
  if (together)
    log(
      `timing ${runs.filter((r) => !r.already).length} participants' points in shared rounds (their engines stay loaded together; --no-interleave measures one at a time)`,
    );
  const finished: ParticipantRun[] = [];
  if (together) finished.push(...(await measureTogether(runs, opts, failures, { started, later: 0 })));
  else for (const [i, r] of runs.entries()) finished.push(...(await measureTogether([r], opts, failures, { started, later: runs.length - 1 - i })));
  if (failures.length > 0) process.exitCode = 1;
  return finished.map((r) => r.result);
}
