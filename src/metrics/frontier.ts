// The Pareto frontier of an engine's measured points and the rule that reads one table
// cell from it (docs/method.md §4). This is the ONLY implementation: the terminal table, the JSON
// output and the HTML page all call it, so table and graph cannot disagree. Pure and
// browser-safe (no Node imports).
//
// The rule, for a target recall and a direction (QPS: higher is better; latency: lower):
// - Usable points: finite recall in [0, 1] and finite value > 0. Anything else is ignored
//   everywhere below. No usable point → 'none', value null, maxRecall null.
// - Frontier: the usable points that no other usable point beats on both. q dominates p
//   when q.recall >= p.recall and q.value is at least as good (>= for higher, <= for
//   lower), with at least one of the two strictly better. Of equal duplicates one is kept
//   (the lowest ladderIndex). The frontier is sorted by recall ascending.
// - maxRecall: the highest usable recall; set for every status except 'none' (and the
//   caller-made 'not_asked' / 'unsupported').
// - A frontier point whose recall equals the target (|diff| <= 1e-12) → 'point', its value.
// - Collapse, before all below: every usable point's recall is below COLLAPSE_RECALL (0.5: at
//   no knob does the engine find half of what it should) → 'collapsed', value null.
// - No frontier point reaches the target (maxRecall < target) → 'not_reached', value null.
// - Every frontier point is above the target → 'above', the value of the lowest-recall
//   frontier point.
// - Otherwise the target lies between two adjacent frontier points lo < target < hi, and
//   the value is log(value) interpolated linearly in recall between them → 'interpolated'.
//   BUT first look at ALL usable points (not only the frontier): the nearest one below
//   the target (highest recall < target) and the nearest one above (lowest recall >
//   target). If their recalls are more than 0.02 apart (plus 1e-12, so that e.g. 0.93 and
//   0.95 count as exactly 0.02 apart despite floating point) the cell is
//   'bracket_too_wide', value null — unless those two points' knobs differ in exactly one
//   knob, both values integers differing by exactly 1 (or by exactly the knob's declared
//   grain, `grains`), with all other knobs equal
//   (adjacent knob values: nothing could be measured between them); then it is
//   interpolated as usual. (When several points share the nearest recall on a side, the
//   exception holds if any point on one side is adjacent to any point on the other.)
// - Calibrated reading, before all of the above: when a usable point was calibrated for this
//   target (calibratedFor === target) and its recall lies within CALIBRATION_TOLERANCE of it, the
//   cell is 'calibrated': the calibrated point's value, unless the frontier point with the lowest
//   recall >= its recall (the best value measured at that recall or better) is better beyond
//   the intervals (its whole interval better than the calibrated point's; without intervals,
//   simply better): then that point's, 'calibrated' only when its recall is within the
//   tolerance too, else 'above' (a reading above the target is never called calibrated).
//   Points of other harnesses carry no calibratedFor, so their cells read as before.
// - Intervals: a point may carry low / high (its 95 % interval of value). A cell read at one
//   point carries that point's interval; an interpolated cell interpolates the lows and the
//   highs (log, linear in recall) with the same weight as the value.
// - Shares: each point may carry shortShare (queries that returned fewer than min(k, matching
//   rows) ids) and lowRecallShare (queries whose recall is below 0.5). A cell read at one point
//   carries that point's; an interpolated cell interpolates them (linear, the same weight); a
//   cell with no value ('collapsed', 'not_reached', 'bracket_too_wide') carries those of its
//   highest-recall usable point, the best the engine did. Bytes read from storage per query
//   (readBytes), where measured, are carried the same way.
// - leads: for each value, value / best, where best is the max (higher) or min (lower) of
//   the values present; null stays null, so the best has lead 1. A value that is not a
//   finite number > 0 cannot come out of readCell and is treated like null.
import type { Knobs } from '../contracts.ts';

export type Better = 'higher' | 'lower';

export interface CurvePoint {
  recall: number;
  value: number;
  knobs: Knobs;
  ladderIndex: number;
  /** The target recall this point's knobs were calibrated to (vecbench's own runs). */
  calibratedFor?: number;
  /** 95 % interval of value, when measured. */
  low?: number;
  high?: number;
  /** Shares of the point's queries by the cell's name of each (src/results/readings.ts, the
   * readings with `cell`: short answers, empty answers, recall below 0.5). */
  shares?: Record<string, number>;
  /** Bytes the engine read from storage per query (where measured: a budget or the cold
   * protocol makes it read). */
  readBytes?: number;
}

/** 'leak' is the caller's (src/report/cells.ts): a group where a row crossed a tenant boundary. */
export type CellStatus =
  | 'calibrated'
  | 'point'
  | 'interpolated'
  | 'above'
  | 'collapsed'
  | 'not_reached'
  | 'bracket_too_wide'
  | 'none'
  | 'not_asked'
  | 'unsupported'
  | 'leak';

export interface Cell {
  status: CellStatus;
  value: number | null;
  maxRecall: number | null;
  /** the frontier point(s) the value was read from */
  from?: CurvePoint[];
  /** 95 % interval of value (null where the points carry none). */
  low: number | null;
  high: number | null;
  /** The points' shares where the cell was read (above), by name; a name the points lack is absent. */
  shares: Record<string, number>;
  /** Bytes read from storage per query where the cell was read, carried like the shares. */
  readBytes: number | null;
}

/** Below this recall at every point, a cell is 'collapsed' rather than 'not_reached'. */
const COLLAPSE_RECALL = 0.5;
/** Widest recall gap between the measured points around the target that may be interpolated. */
const MAX_BRACKET = 0.02;
/** Recalls this close count as equal. */
const RECALL_EPS = 1e-12;
/** A calibrated point this close to its target recall is read as the cell. */
export const CALIBRATION_TOLERANCE = 0.005;

function isUsable(p: CurvePoint): boolean {
  return Number.isFinite(p.recall) && p.recall >= 0 && p.recall <= 1 && Number.isFinite(p.value) && p.value > 0;
}

/** a is strictly better than b in the given direction */
function betterThan(a: number, b: number, better: Better): boolean {
  return better === 'higher' ? a > b : a < b;
}

export function paretoFrontier(points: CurvePoint[], better: Better): CurvePoint[] {
  // Highest recall first; within equal recall the best value first, then the lowest
  // ladderIndex. Sweeping in that order, a point is on the frontier exactly when its
  // value is strictly better than every value seen so far (all of which have recall >=
  // its own): otherwise some earlier point dominates it or is its equal duplicate.
  const usable = points.filter(isUsable).sort((a, b) => {
    if (a.recall !== b.recall) return b.recall - a.recall;
    if (a.value !== b.value) return betterThan(a.value, b.value, better) ? -1 : 1;
    return a.ladderIndex - b.ladderIndex;
  });
  const frontier: CurvePoint[] = [];
  let bestSoFar: number | null = null;
  for (const p of usable) {
    if (bestSoFar === null || betterThan(p.value, bestSoFar, better)) {
      frontier.push(p);
      bestSoFar = p.value;
    }
  }
  return frontier.reverse();
}

/** A knob's grain: the step its values are searched on (a knob absent here: integers, step 1). */
export type Grains = Readonly<Record<string, number>>;

/** The grains a participant's calibration spec declares: its step, for each name of its knob.
 * Takes a stored result's settings as they come (a result from before `step` has none). */
export function grainsOf(spec: unknown): Grains {
  const { knob, step } = (spec ?? {}) as { knob?: unknown; step?: unknown };
  if (!Array.isArray(knob) || typeof step !== 'number' || !(step > 0)) return {};
  return Object.fromEntries(knob.filter((k) => typeof k === 'string').map((k) => [k, step]));
}

/** Knobs of two points differ in exactly one knob, by exactly its grain (1 between integers). */
export function adjacentKnobs(a: Knobs, b: Knobs, grains: Grains = {}): boolean {
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  let differing = 0;
  for (const key of keysA) {
    if (!Object.hasOwn(b, key)) return false;
    const va = a[key];
    const vb = b[key];
    if (va === vb) continue;
    differing++;
    if (differing > 1) return false;
    if (typeof va !== 'number' || typeof vb !== 'number') return false;
    const grain = grains[key];
    if (grain !== undefined) {
      // Values on the grain's grid carry float noise (0.1 * 3): a relative slack absorbs it.
      if (Math.abs(Math.abs(va - vb) - grain) > grain * 1e-9) return false;
      continue;
    }
    if (!Number.isInteger(va) || !Number.isInteger(vb)) return false;
    if (Math.abs(va - vb) !== 1) return false;
  }
  return differing === 1;
}

function logInterpolate(lo: number, hi: number, t: number): number {
  return Math.exp(Math.log(lo) + t * (Math.log(hi) - Math.log(lo)));
}

const hasInterval = (p: CurvePoint) => Number.isFinite(p.low) && Number.isFinite(p.high) && p.low! > 0 && p.high! > 0;

const shares = (p: CurvePoint | undefined) => ({ shares: { ...p?.shares }, readBytes: p?.readBytes ?? null });

/** A cell read at one point: its value and interval. */
function atPoint(status: CellStatus, p: CurvePoint, maxRecall: number): Cell {
  return { status, value: p.value, maxRecall, from: [p], low: hasInterval(p) ? p.low! : null, high: hasInterval(p) ? p.high! : null, ...shares(p) };
}

/** A cell without a value; `best`: the highest-recall usable point, whose shares it carries. */
const empty = (status: CellStatus, maxRecall: number | null, best?: CurvePoint): Cell => ({
  status,
  value: null,
  maxRecall,
  low: null,
  high: null,
  ...shares(best),
});

const lerp = (a: number | undefined, b: number | undefined, t: number) => (a === undefined || b === undefined ? null : a + t * (b - a));

export function readCell(points: CurvePoint[], target: number, better: Better, grains: Grains = {}): Cell {
  if (!Number.isFinite(target)) throw new RangeError(`readCell: target recall must be finite, got ${target}`);
  const usable = points.filter(isUsable);
  if (usable.length === 0) return empty('none', null);

  let maxRecall = -Infinity;
  let best = usable[0];
  for (const p of usable) {
    if (p.recall > maxRecall) {
      maxRecall = p.recall;
      best = p;
    }
  }
  if (maxRecall < COLLAPSE_RECALL) return empty('collapsed', maxRecall, best);

  const frontier = paretoFrontier(usable, better);

  // A point calibrated for this target: the best value at its recall or better.
  const calibrated = usable
    .filter(
      (p) =>
        p.calibratedFor !== undefined && Math.abs(p.calibratedFor - target) <= RECALL_EPS && Math.abs(p.recall - target) <= CALIBRATION_TOLERANCE + RECALL_EPS,
    )
    .sort((a, b) => b.recall - a.recall)[0];
  if (calibrated) {
    // The best value at its recall or better; a neighbour counts as better only when its
    // interval lies wholly beyond the calibrated point's (noise does not move the reading).
    const reading = frontier.find((p) => p.recall >= calibrated.recall - RECALL_EPS);
    const beats =
      reading !== undefined && reading !== calibrated && hasInterval(reading) && hasInterval(calibrated)
        ? betterThan(better === 'higher' ? reading.low! : reading.high!, better === 'higher' ? calibrated.high! : calibrated.low!, better)
        : reading !== undefined && reading !== calibrated;
    const at = beats ? reading! : calibrated;
    return atPoint(Math.abs(at.recall - target) <= CALIBRATION_TOLERANCE + RECALL_EPS ? 'calibrated' : 'above', at, maxRecall);
  }

  const exact = frontier.find((p) => Math.abs(p.recall - target) <= RECALL_EPS);
  if (exact) return atPoint('point', exact, maxRecall);

  if (maxRecall < target) return empty('not_reached', maxRecall, best);

  const lowest = frontier[0];
  if (lowest.recall > target) return atPoint('above', lowest, maxRecall);

  // lo < target < hi, adjacent on the frontier. hi exists because maxRecall > target here
  // and the highest-recall usable point with the best value there is on the frontier.
  let hiIndex = frontier.findIndex((p) => p.recall > target);
  if (hiIndex <= 0) hiIndex = frontier.length - 1; // unreachable; keeps the types honest
  const lo = frontier[hiIndex - 1];
  const hi = frontier[hiIndex];

  // The bracket: nearest measured recalls on either side, from all usable points.
  let belowRecall = -Infinity;
  let aboveRecall = Infinity;
  for (const p of usable) {
    if (p.recall < target && p.recall > belowRecall) belowRecall = p.recall;
    if (p.recall > target && p.recall < aboveRecall) aboveRecall = p.recall;
  }
  if (aboveRecall - belowRecall > MAX_BRACKET + RECALL_EPS) {
    // Several points may share the nearest recall; the exception holds when any point at
    // the nearest-below recall and any at the nearest-above recall are adjacent.
    const belowPts = usable.filter((p) => p.recall === belowRecall);
    const abovePts = usable.filter((p) => p.recall === aboveRecall);
    const adjacent = belowPts.some((b) => abovePts.some((a) => adjacentKnobs(b.knobs, a.knobs, grains)));
    if (!adjacent) return empty('bracket_too_wide', maxRecall, best);
  }

  const t = (target - lo.recall) / (hi.recall - lo.recall);
  const both = hasInterval(lo) && hasInterval(hi);
  return {
    status: 'interpolated',
    value: logInterpolate(lo.value, hi.value, t),
    maxRecall,
    from: [lo, hi],
    low: both ? logInterpolate(lo.low!, hi.low!, t) : null,
    high: both ? logInterpolate(lo.high!, hi.high!, t) : null,
    // A share both sides carry, interpolated with the value's weight.
    shares: Object.fromEntries(
      Object.keys(lo.shares ?? {})
        .filter((name) => hi.shares?.[name] !== undefined)
        .map((name) => [name, lerp(lo.shares![name], hi.shares![name], t)!]),
    ),
    readBytes: lerp(lo.readBytes, hi.readBytes, t),
  };
}

export function leads(values: (number | null)[], better: Better): (number | null)[] {
  const present = (v: number | null): v is number => v !== null && Number.isFinite(v) && v > 0;
  let best: number | null = null;
  for (const v of values) {
    if (present(v) && (best === null || betterThan(v, best, better))) best = v;
  }
  return values.map((v) => (present(v) && best !== null ? v / best : null));
}
