// Calibration to a target recall (docs/measurement.md, "Calibration"): rather than reading a cell
// between coarse ladder points, search the participant's main knob until a measured point lies
// within CALIBRATION_TOLERANCE of the target. Recall-only probes: they need no timing, so the
// search is cheap; the point found is then timed like any other.
//
// The knob's ladder values (other knobs held fixed: one "family" per combination of the other
// knobs) give the starting bracket. Integers, and a knob with a declared grain (`step`), are
// bisected on their grid until a value lands within the tolerance or two neighbouring values
// straddle the target ('adjacent': nothing lies between them); other numbers for at most
// MAX_FLOAT_STEPS. Below the lowest ladder value the search may go down to the declared minimum, above the
// highest up to the declared maximum. The bisection keeps recall(lo) < target < recall(hi), so
// it ends on a crossing even where recall is not monotone in the knob.
import type { Knobs } from '../contracts.ts';
import { CALIBRATION_TOLERANCE } from '../metrics/frontier.ts';
import type { ResultGroup } from '../results/schema.ts';

export type CalibrationRecord = NonNullable<ResultGroup['calibration']>[number];

export interface CalibrationSpec {
  /** Names of the main knob; the first one a ladder has is searched. */
  knob: string[];
  min?: number;
  max?: number;
  /** The knob's grain: values searched lie on multiples of it (integers: 1). */
  step?: number;
}

/** The grain a search of this family keeps to: the spec's step, 1 where every value is an
 * integer, none (a real number) otherwise. */
export function grainOf(f: Family, spec: CalibrationSpec): number | undefined {
  if (spec.step !== undefined) return spec.step;
  const integer =
    f.values.every(Number.isInteger) && (spec.min === undefined || Number.isInteger(spec.min)) && (spec.max === undefined || Number.isInteger(spec.max));
  return integer ? 1 : undefined;
}

/** `x` on the grain's grid, without the float noise of the multiplication. */
export const onGrain = (x: number, grain: number) => Number((Math.round(x / grain) * grain).toPrecision(12));

/** Most probes one bisection may take before giving up on a non-integer knob. */
const MAX_FLOAT_STEPS = 12;

interface Family {
  knob: string;
  /** The other knobs, fixed. */
  base: Knobs;
  /** Numeric values of the knob in the ladder, ascending. */
  values: number[];
}

/** The ladder's families for the spec's knob: one per combination of the other knobs. */
export function familiesOf(ladder: Knobs[], spec: CalibrationSpec): Family[] {
  const knob = spec.knob.find((k) => ladder.some((p) => typeof p[k] === 'number'));
  if (knob === undefined) return [];
  const byBase = new Map<string, Family>();
  for (const p of ladder) {
    const v = p[knob];
    if (typeof v !== 'number') continue;
    const { [knob]: _v, ...base } = p;
    const key = JSON.stringify(base);
    let f = byBase.get(key);
    if (!f) byBase.set(key, (f = { knob, base, values: [] }));
    if (!f.values.includes(v)) f.values.push(v);
  }
  for (const f of byBase.values()) f.values.sort((a, b) => a - b);
  return [...byBase.values()];
}

/** Recall of a knob setting, measured once (a cache in front of the engine). */
type RecallProbe = (knobs: Knobs) => Promise<number>;

export async function calibrateFamily(
  f: Family,
  target: number,
  spec: CalibrationSpec,
  probe: RecallProbe,
  tol = CALIBRATION_TOLERANCE,
): Promise<CalibrationRecord> {
  const probes: { knobs: Knobs; recall: number }[] = [];
  const knobsAt = (v: number): Knobs => ({ ...f.base, [f.knob]: v });
  const cache = new Map<number, number>();
  const recallAt = async (v: number) => {
    let r = cache.get(v);
    if (r === undefined) {
      r = await probe(knobsAt(v));
      cache.set(v, r);
      probes.push({ knobs: knobsAt(v), recall: r });
    }
    return r;
  };
  const within = (r: number) => Math.abs(r - target) <= tol + 1e-12;
  const rec = (status: CalibrationRecord['status'], values: number[], reason?: string): CalibrationRecord => ({
    target,
    knob: f.knob,
    status,
    knobs: values.map(knobsAt),
    probes,
    ...(reason ? { reason } : {}),
  });
  const grain = grainOf(f, spec);

  const rs: number[] = [];
  for (const v of f.values) rs.push(await recallAt(v));
  // A ladder value already within the tolerance: prefer the lowest one at or above the target.
  const hits = f.values.filter((_, i) => within(rs[i]));
  if (hits.length > 0) {
    const above = hits.find((v) => (cache.get(v) ?? 0) >= target);
    return rec('found', [above ?? hits[hits.length - 1]]);
  }

  let lo: number;
  let hi: number;
  if (rs[0] > target) {
    if (spec.min === undefined || spec.min >= f.values[0]) return rec('below_range', []);
    const r = await recallAt(spec.min);
    if (within(r)) return rec('found', [spec.min]);
    if (r > target) return rec('below_range', []);
    lo = spec.min;
    hi = f.values[0];
  } else {
    const j = rs.findIndex((r) => r > target);
    if (j < 0) {
      const top = f.values[f.values.length - 1];
      if (spec.max === undefined || spec.max <= top) return rec('not_reached', []);
      const r = await recallAt(spec.max);
      if (within(r)) return rec('found', [spec.max]);
      if (r < target) return rec('not_reached', []);
      lo = top;
      hi = spec.max;
    } else {
      lo = f.values[j - 1];
      hi = f.values[j];
    }
  }
  for (let step = 0; grain !== undefined ? hi - lo > grain * (1 + 1e-9) : step < MAX_FLOAT_STEPS; step++) {
    // On a grain, the grid value halfway (rounded down) between the two: strictly between them.
    const mid = grain !== undefined ? onGrain(lo + grain * Math.floor(Math.round((hi - lo) / grain) / 2), grain) : (lo + hi) / 2;
    const r = await recallAt(mid);
    if (within(r)) return rec('found', [mid]);
    if (r < target) lo = mid;
    else hi = mid;
  }
  if (grain !== undefined) return rec('adjacent', [lo, hi]);
  return rec('failed', [lo, hi], `no ${f.knob} within ±${tol} of ${target} after ${MAX_FLOAT_STEPS} bisection steps`);
}

/** Calibrates every family of the ladder for one target. */
export async function calibrate(ladder: Knobs[], target: number, spec: CalibrationSpec, probe: RecallProbe): Promise<CalibrationRecord[]> {
  const families = familiesOf(ladder, spec);
  if (families.length === 0)
    return [{ target, knob: spec.knob.join('|'), status: 'no_knob', knobs: [], probes: [], reason: `the ladder has no numeric ${spec.knob.join(' or ')}` }];
  const out: CalibrationRecord[] = [];
  for (const f of families) out.push(await calibrateFamily(f, target, spec, probe));
  return out;
}
