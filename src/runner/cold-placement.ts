// Where the cold protocol places its timed points (docs/measurement.md, "Calibration"). Each query
// is answered once, so a group holds few points (each view of a point takes its own slice of at
// least MIN_SLICE queries), and points at fixed ladder values rarely land within the cell rule's
// 0.02 of all three table targets: the disk tier's cells read "too wide". So recall-only probes,
// on a slice of queries the timed points never use, search the main knob (calibrateFamily) for
// each target, then for a neighbour on either side of it (NEAR to FAR beyond the target). A
// timed point then lies near the target and the cell still reads between it and a neighbour when
// the timed slices' recalls differ from the probe slice's by their sampling error. The probes
// and the warm protocol's recall passes are the same request (src/runner/recall-pass.ts).
import type { Knobs } from '../contracts.ts';
import { TARGETS } from '../metrics/curve.ts';
import { log } from '../util/progress.ts';
import { calibrateFamily, familiesOf, grainOf, onGrain, type CalibrationRecord, type CalibrationSpec } from './calibrate.ts';
import type { GroupRun } from './group-run.ts';
import { SLICE_CAP } from './query-order.ts';
import { failsOnlyThePoint, knobsKey, recallPass } from './recall-pass.ts';
import type { Item } from './timed-rounds.ts';
import { boundedSlice, COLD_PROBE_SECONDS, MIN_SLICE } from './timing-defaults.ts';

/** The target's own search tolerance: half the warm protocol's, so the calibrated point's timed
 * slice, whose recall differs from the probes' by its sampling error, still tends to read within
 * CALIBRATION_TOLERANCE of the target. */
const TARGET_TOLERANCE = 0.0025;
/** A neighbour lies at least NEAR and at most FAR in recall beyond its target: past the timed
 * slices' sampling error (a standard error of about 0.004 at 0.90 over 1,000 queries, k = 10:
 * 95 % intervals of ±0.008 on the disk tier), within the cell rule's 0.02 of the target's own
 * point. */
export const NEAR = 0.004;
const FAR = 0.015;
/** A neighbour's search ends when its bracket's two values are within this ratio (or neighbours
 * on the knob's grain): of the values past NEAR it takes the one nearest the target's, since a
 * search costs more the higher the knob, and a saturating curve puts far values within FAR too
 * (on the disk tier a re-rank factor of 64 read 1.000 at k = 100, ten times the cost of 6.4 at
 * 0.991). */
const RATIO = 1.15;
const MAX_NEIGHBOUR_STEPS = 10;

/** One point to time: its knobs, the table target it was calibrated for (its probe within the
 * tolerance of it), and its probed recall. */
export interface PlacedPoint {
  knobs: Knobs;
  calibratedFor?: number;
  recall: number;
}

/** The knobs a record asks to time: the calibrated value, both sides of an adjacent or failed
 * bracket, the lowest value when all read above the target, or the best recall probed when none
 * reaches it. */
function knobsToTime(r: CalibrationRecord, knob: string): Knobs[] {
  if (r.knobs.length > 0) return r.knobs;
  if (r.probes.length === 0) return [];
  const byValue = [...r.probes].sort((a, b) => Number(a.knobs[knob]) - Number(b.knobs[knob]));
  if (r.status === 'below_range') return [byValue[0].knobs];
  // The best recall probed, at its lowest value: where recall stops rising the range's end costs
  // more for nothing (an IVF-PQ whose refine bounds recall read 0.448 at 16 lists, 0.437 at 256).
  const best = Math.max(...byValue.map((p) => p.recall));
  if (r.status === 'not_reached') return [byValue.find((p) => p.recall === best)!.knobs];
  return [];
}

/** Searches the first family of the ladder (its other knobs at their first setting) for each
 * target and its two neighbours. Returns the records, each with the knobs it asks to time; null
 * when the ladder has no numeric main knob. Probe errors propagate. */
export async function placeColdPoints(
  ladder: Knobs[],
  spec: CalibrationSpec,
  probe: (knobs: Knobs) => Promise<number>,
  targets: readonly number[] = TARGETS,
): Promise<CalibrationRecord[] | null> {
  const family = familiesOf(ladder, spec)[0];
  if (!family) return null;
  const knobsAt = (v: number): Knobs => ({ ...family.base, [family.knob]: v });
  const recallOf = new Map<number, number>();
  const cached = async (k: Knobs) => {
    const v = Number(k[family.knob]);
    let r = recallOf.get(v);
    if (r === undefined) recallOf.set(v, (r = await probe(k)));
    return r;
  };
  const grain = grainOf(family, spec);
  const records: CalibrationRecord[] = [];
  for (const target of targets) {
    // Each search starts from every value probed so far (free: cached), not the ladder's alone.
    const values = [...new Set([...family.values, ...recallOf.keys()])].sort((a, b) => a - b);
    const main = await calibrateFamily({ ...family, values }, target, spec, cached, TARGET_TOLERANCE);
    records.push({ ...main, knobs: knobsToTime(main, family.knob) });
    if (main.status !== 'found') continue;
    const at = Number(main.knobs[0][family.knob]);
    for (const side of [-1, 1] as const) {
      // Above 1 - NEAR nothing can lie past the edge.
      if (side > 0 && target + NEAR > 1) continue;
      const probes: CalibrationRecord['probes'] = [];
      const recallAt = async (v: number) => {
        const r = await cached(knobsAt(v));
        probes.push({ knobs: knobsAt(v), recall: r });
        return r;
      };
      const found = await neighbour(at, target + side * NEAR, target + side * FAR, side, spec, grain, recallAt, recallOf);
      records.push({
        target: target + side * NEAR,
        knob: family.knob,
        status: found.status,
        knobs: found.value === undefined ? [] : [knobsAt(found.value)],
        probes,
      });
    }
  }
  return records;
}

/** The value nearest `at` (the target's own) whose recall is past `edge` on `side`: from the
 * nearest probed value past it (or the knob's end), bisected toward `at` (geometrically: recall
 * grows with the knob's log more than with the knob) until the bracket is within RATIO. found:
 * its recall also lies within `far`; adjacent: it jumped past the window, nothing between;
 * not_reached / below_range: no value of the knob's range gets past the edge. */
async function neighbour(
  at: number,
  edge: number,
  far: number,
  side: 1 | -1,
  spec: CalibrationSpec,
  grain: number | undefined,
  recallAt: (v: number) => Promise<number>,
  known: Map<number, number>,
): Promise<{ status: CalibrationRecord['status']; value?: number }> {
  const past = (r: number) => (side > 0 ? r >= edge : r <= edge);
  const inWindow = (r: number) => past(r) && Math.abs(r - edge) <= Math.abs(far - edge) + 1e-12;
  const outward = [...known.keys()].filter((v) => (side > 0 ? v > at : v < at)).sort((a, b) => side * (a - b));
  let near = at;
  let out: number | undefined;
  for (const v of outward) {
    if (past(await recallAt(v))) {
      out = v;
      break;
    }
    near = v;
  }
  let beyond: number;
  if (out !== undefined) beyond = out;
  else {
    const end = side > 0 ? spec.max : spec.min;
    const none = side > 0 ? 'not_reached' : 'below_range';
    if (end === undefined || (side > 0 ? end <= near : end >= near) || !past(await recallAt(end))) return { status: none };
    beyond = end;
  }
  for (let step = 0; step < MAX_NEIGHBOUR_STEPS; step++) {
    const lo = Math.min(near, beyond);
    const hi = Math.max(near, beyond);
    // Nothing lies between neighbouring values of a grain; within RATIO, stop once the value is in the window.
    if ((grain !== undefined && hi - lo <= grain * (1 + 1e-9)) || (lo > 0 && hi / lo <= RATIO && inWindow(known.get(beyond) ?? Number.NaN))) break;
    let mid = lo > 0 ? Math.sqrt(lo * hi) : (lo + hi) / 2;
    if (grain !== undefined) mid = Math.min(onGrain(hi - grain, grain), Math.max(onGrain(lo + grain, grain), onGrain(mid, grain)));
    if (past(await recallAt(mid))) beyond = mid;
    else near = mid;
  }
  return { status: inWindow(await recallAt(beyond)) ? 'found' : 'adjacent', value: beyond };
}

/** The points the records ask to time, each once, ascending in probed recall; a point is
 * calibrated for a table target when that target's own record found it. */
export function placedPoints(records: CalibrationRecord[], targets: readonly number[] = TARGETS): PlacedPoint[] {
  const recall = new Map<string, number>();
  for (const r of records) for (const p of r.probes) recall.set(knobsKey(p.knobs), p.recall);
  const out = new Map<string, PlacedPoint>();
  for (const r of records) {
    const forTarget = r.status === 'found' && targets.some((t) => Math.abs(t - r.target) < 1e-12) ? r.target : undefined;
    for (const knobs of r.knobs) {
      const key = knobsKey(knobs);
      const have = out.get(key);
      if (have) {
        if (have.calibratedFor === undefined && forTarget !== undefined) have.calibratedFor = forTarget;
        continue;
      }
      const r0 = recall.get(key);
      if (r0 === undefined) continue;
      out.set(key, { knobs, recall: r0, ...(forTarget !== undefined ? { calibratedFor: forTarget } : {}) });
    }
  }
  return [...out.values()].sort((a, b) => a.recall - b.recall);
}

/** A cold group's points to time and the first query of its timed slices. With a calibration
 * spec: placed by recall-only probes over the SLICE_CAP queries after the group's first
 * (src/runner/cold-placement.ts), kept in the group's calibration so that a resumed run places
 * the same points without probing; without one, or when the probes fail, the ladder. */
export async function coldItems(run: GroupRun, ladder: Knobs[]): Promise<{ items: Item[]; start: number; probeQps?: number }> {
  const { p, ds, g, group, queries: order } = run;
  const asLadder = { items: ladder.map((knobs, li) => ({ li, knobs })), start: 1 };
  const spec = p.settings.calibration;
  if (!spec) return asLadder;
  const probeQueries = order.slice(1, 1 + Math.min(SLICE_CAP[g.k] ?? 200, Math.max(0, ds.nq - 1 - MIN_SLICE)));
  // The first probe asks the whole probe slice; later ones what the last probe's speed answers in
  // COLD_PROBE_SECONDS (the first queries of the slice: every probe's are among the first's).
  let probeQps: number | undefined;
  const probe = async (knobs: Knobs) => {
    const asked = probeQueries.slice(0, boundedSlice(probeQueries.length, probeQps, COLD_PROBE_SECONDS));
    const got = await recallPass(run, knobs, asked);
    if (got.wallS !== undefined && got.wallS > 0) probeQps = asked.length / got.wallS;
    run.onProgress(`${g.key}: placing points, probe at ${JSON.stringify(knobs)}`);
    return got.summary.recall;
  };
  if (!group.calibration) {
    try {
      const records = await placeColdPoints(ladder, spec, probe);
      if (!records) return asLadder;
      group.calibration = records;
      run.save();
    } catch (e) {
      if (!failsOnlyThePoint(e)) throw e;
      log(`${p.name}: ${g.key}: placing points failed (${e.message}); timing the ladder instead`);
      return asLadder;
    }
  }
  // Ladder values keep their index; the other points are numbered after the ladder.
  let extra = ladder.length;
  const items = placedPoints(group.calibration).map((pt) => {
    const li = ladder.findIndex((k) => knobsKey(k) === knobsKey(pt.knobs));
    return { li: li >= 0 ? li : extra++, knobs: pt.knobs, calibratedFor: pt.calibratedFor };
  });
  return { items, start: 1 + probeQueries.length, ...(probeQps !== undefined ? { probeQps } : {}) };
}
