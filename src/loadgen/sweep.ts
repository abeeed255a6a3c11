// The runner's side of the load generator (docs/method.md §5): for one participant, after its query
// groups, a closed-loop concurrency sweep (QPS and latency per in-flight level) and an open-loop
// ramp (p99 per offered Poisson rate), at one group and one knob setting. Every point records
// the engine's and the client's CPU, recall of its own queries, errors and time-outs, and the
// client-limited flag (measured by measurer.ts). Results go to `extra.concurrency` and `extra.open_loop`.

import type { Knobs } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import type { ResultFile, ResultGroup } from '../results/schema.ts';
import { ladderFor, type LoadedParticipant } from '../runner/participants.ts';
import type { AskedGroup } from '../runner/points.ts';
import { Progress, log } from '../util/progress.ts';
import { concurrencySchema, openLoopSchema, type ConcurrencySection, type OpenLoopSection, type OpenStep, type SweepPoint } from './schema.ts';
import type { LoadEngine, LoadOptions } from './load-options.ts';
import { Measurer, OPEN_CEILING_LEVEL, round } from './measurer.ts';

const DEFAULT_BUDGET_MS = 100;
const OPEN_LOOP_SEED = 7001;
/** Fractions of the closed-loop peak offered by the automatic open-loop ramp. */
const AUTO_RAMP = [0.1, 0.25, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25];

/** The group the load is measured on: none/10 when asked and measured, else the first measured. */
function loadGroup(groups: AskedGroup[], result: ResultFile): AskedGroup | null {
  const measured = (g: AskedGroup) => g.asked && result.groups.some((r) => r.key === g.key && r.status === 'measured');
  return groups.find((g) => g.key === 'none/10' && measured(g)) ?? groups.find(measured) ?? null;
}

/** The knob setting: the first ladder point whose measured recall reaches the target, else the
 * highest-recall point, else the middle of the ladder. */
function chooseKnobs(p: LoadedParticipant, g: AskedGroup, group: ResultGroup | undefined, target: number): { knobs: Knobs; reason: string } {
  const ladder = ladderFor(p.settings, g.filter, g.k);
  // Ladder points and the points calibration added (numbered after the ladder), by knob order
  // of measurement; the first build's only, so every build agrees.
  const pts = (group?.points ?? []).filter((pt) => (pt.build ?? 0) === 0 && pt.view === 'throughput').sort((a, b) => a.ladder_index - b.ladder_index);
  const onLadder = pts.filter((pt) => pt.ladder_index < ladder.length);
  const first = onLadder.find((pt) => pt.recall >= target);
  if (first) return { knobs: first.knobs, reason: `the first ladder point of ${g.key} with recall >= ${target} (${first.recall.toFixed(3)})` };
  if (pts.length > 0) {
    const top = [...pts].sort((a, b) => b.recall - a.recall)[0];
    return { knobs: top.knobs, reason: `no ladder point of ${g.key} reached recall ${target}: its highest-recall point (${top.recall.toFixed(3)})` };
  }
  return { knobs: ladder[Math.floor(ladder.length / 2)] ?? {}, reason: `the middle of the ${g.key} ladder (no measured points)` };
}

/** Saturation: the smallest in-flight level reaching 90 % of the peak QPS. */
export function saturationOf(points: { in_flight: number; qps: number }[]): { in_flight: number; qps: number } | null {
  if (points.length === 0) return null;
  const peak = Math.max(...points.map((p) => p.qps));
  const p = [...points].sort((a, b) => a.in_flight - b.in_flight).find((x) => x.qps >= 0.9 * peak)!;
  return { in_flight: p.in_flight, qps: p.qps };
}

/** Steps to a higher in-flight level that lost at least 10 % of the throughput. */
export function antiScalingOf(points: { in_flight: number; qps: number }[]) {
  const s = [...points].sort((a, b) => a.in_flight - b.in_flight);
  const out: { from_in_flight: number; to_in_flight: number; qps_from: number; qps_to: number }[] = [];
  for (let i = 1; i < s.length; i++)
    if (s[i].qps < 0.9 * s[i - 1].qps) out.push({ from_in_flight: s[i - 1].in_flight, to_in_flight: s[i].in_flight, qps_from: s[i - 1].qps, qps_to: s[i].qps });
  return out;
}

/** Measures the sweep and / or the open loop for one participant and stores them in result.extra. */
export async function measureLoad(
  engine: LoadEngine,
  p: LoadedParticipant,
  ds: Dataset,
  groups: AskedGroup[],
  result: ResultFile,
  opts: LoadOptions,
  save: () => void,
): Promise<void> {
  const wantSweep = opts.concurrency !== undefined && opts.concurrency.length > 0 && result.extra.concurrency === undefined;
  const wantOpen = opts.openLoop !== undefined && result.extra.open_loop === undefined;
  if (!wantSweep && !wantOpen) return;
  const g = loadGroup(groups, result);
  if (!g) {
    log(`${p.name}: no measured group to put load on; the concurrency sweep and open loop are skipped`);
    return;
  }
  const group = result.groups.find((x) => x.key === g.key);
  const { knobs, reason } = chooseKnobs(p, g, group, opts.recallTarget ?? 0.95);
  const levels = [...new Set(opts.concurrency ?? [])].sort((a, b) => a - b);
  const m = new Measurer(engine, ds, g, opts);
  m.label = p.name;
  await m.init(Math.max(64, ...levels));
  // The protocol's ceiling is measured once, at every level the points will be held against
  // (the open loop's at OPEN_CEILING_LEVEL).
  m.ceilingLevels = [...(wantSweep ? levels : []), ...(wantOpen ? [OPEN_CEILING_LEVEL] : [])];
  try {
    const requests = opts.requestsPerPoint ?? 1000;
    let peak = 0;
    if (wantSweep) {
      const notes: string[] = [];
      let run = levels;
      if (!m.concurrent && levels.some((c) => c > 1)) {
        run = levels.filter((c) => c === 1);
        if (run.length === 0) run = [1];
        notes.push(`${p.adapter.engine}'s searches do not overlap (concurrentSearch: false): only in-flight 1 is measured; more in flight would only queue`);
      }
      const progress = new Progress(`${p.name}: concurrency sweep`, run.length);
      const points: SweepPoint[] = [];
      const sectionOf = (ceiling: number | null): ConcurrencySection => ({
        format: 'vecbench-concurrency/1',
        group: g.key,
        knobs,
        knobs_reason: reason,
        client: m.clientInfo(ceiling),
        requests_per_point: requests,
        points,
        saturation: saturationOf(points),
        anti_scaling: antiScalingOf(points),
        notes: [...notes, ...m.notes],
      });
      for (const c of run) {
        try {
          points.push(await m.closedPoint(knobs, c, Math.max(requests, c * 4)));
        } catch (e) {
          // A client host lost mid-sweep: the points measured so far are stored, marked.
          if (points.length > 0 && m.remote) {
            notes.push(`incomplete: in-flight ${c} and above were not measured (${(e as Error).message})`);
            // Client hosts have no ceiling measured here (Measurer.init).
            result.extra.concurrency = concurrencySchema.parse(sectionOf(null));
            save();
          }
          throw e;
        }
        progress.update(points.length, `in-flight ${c}`);
      }
      progress.done();
      peak = Math.max(0, ...points.map((x) => x.qps));
      result.extra.concurrency = concurrencySchema.parse(sectionOf(await m.ceiling(1)));
      save();
    } else if (result.extra.concurrency !== undefined) {
      peak = Math.max(0, ...concurrencySchema.parse(result.extra.concurrency).points.map((x) => x.qps));
    }
    if (wantOpen) {
      const budget = opts.budgetMs ?? DEFAULT_BUDGET_MS;
      const stepS = opts.openStepS ?? 3;
      const notes: string[] = [];
      let rates: number[];
      let from: string;
      if (Array.isArray(opts.openLoop)) {
        rates = [...opts.openLoop].sort((a, b) => a - b);
        from = 'given';
      } else {
        if (peak <= 0) {
          // No sweep to read the peak from: one closed-loop point at high concurrency finds it.
          const probe = await m.closedPoint(knobs, m.concurrent ? 32 : 1, requests);
          peak = probe.qps;
          notes.push(`the ramp's peak came from one closed-loop probe at in-flight ${probe.in_flight}: ${probe.qps} QPS`);
        }
        rates = AUTO_RAMP.map((f) => Math.max(1, Math.round(f * peak)));
        from = `a ramp of ${AUTO_RAMP.join(', ')} x the closed-loop peak (${round(peak, 1)} QPS)`;
      }
      const progress = new Progress(`${p.name}: open loop`, rates.length);
      const steps: OpenStep[] = [];
      let saturatedAt: number | null = null;
      for (let i = 0; i < rates.length; i++) {
        const step = await m.openStep(knobs, rates[i], stepS, OPEN_LOOP_SEED + i, budget);
        steps.push(step);
        progress.update(steps.length, `${rates[i]}/s: p99 ${step.p99_ms} ms`);
        if (saturatedAt === null && step.achieved_qps < 0.9 * step.offered_qps) {
          saturatedAt = step.offered_qps;
          // The automatic ramp stops past saturation: the queue would only grow.
          if (!Array.isArray(opts.openLoop)) break;
        }
      }
      progress.done();
      const ok = steps.filter((s) => s.within_budget).map((s) => s.offered_qps);
      const section: OpenLoopSection = {
        format: 'vecbench-open-loop/1',
        group: g.key,
        knobs,
        knobs_reason: reason,
        client: m.clientInfo(await m.ceiling(1)),
        arrivals: 'poisson',
        seed: OPEN_LOOP_SEED,
        budget_p99_ms: budget,
        step_s: stepS,
        rates_from: from,
        steps,
        max_qps_within_budget: ok.length > 0 ? Math.max(...ok) : null,
        saturated_at_qps: saturatedAt,
        notes: [...notes, ...m.notes],
      };
      result.extra.open_loop = openLoopSchema.parse(section);
      save();
    }
  } finally {
    await m.remote?.close();
    await engine.request<'loadgen-stopped'>({ type: 'loadgen-stop' }, 60).catch(() => {});
  }
}
