// Where the cold protocol places its timed points (docs/measurement.md, "Calibration"). Each query
// is answered once, so a group holds few points (each view of a point takes its own slice of at
// least MIN_SLICE queries), and points at fixed ladder values rarely land within the cell rule's
// 0.02 of all three table targets: the disk tier's cells read "too wide". So recall-only probes,
// on a slice of queries the timed points never use, search the main knob (calibrateFamily) for
// each target and for a neighbour NEIGHBOUR below and above it. A timed point then lies near the
// target and the cell still reads between it and a neighbour when the timed slices' recalls differ
// from the probe slice's by their sampling error (about ±0.004 at 0.90 over 1,000 queries, k = 10).
import type { Knobs } from '../contracts.ts';
import { TARGETS } from '../metrics/curve.ts';
import { summarize } from '../metrics/recall.ts';
import { log } from '../util/progress.ts';
import { calibrateFamily, familiesOf, type CalibrationRecord, type CalibrationSpec } from './calibrate.ts';
import { HostError } from './client.ts';
import type { GroupRun } from './group-run.ts';
import { scorePoint } from './points.ts';
import { SLICE_CAP } from './query-order.ts';
import { drivenBy, type Item } from './timed-rounds.ts';
import { MIN_SLICE } from './timing-defaults.ts';

/** How far below and above a target its neighbours are searched for, in recall. */
export const NEIGHBOUR = 0.008;
/** The target's own search tolerance: half the warm protocol's, so the calibrated point's timed
 * slice, whose recall differs from the probes' by its sampling error, still tends to read within
 * CALIBRATION_TOLERANCE of the target. */
const TARGET_TOLERANCE = 0.0025;
/** A neighbour's search tolerance: it lands NEIGHBOUR ± this from its target, so the gap to the
 * target's own point stays well under the cell rule's 0.02. */
const NEIGHBOUR_TOLERANCE = 0.003;

/** One point to time: its knobs, the table target it was calibrated for (its probe within the
 * tolerance of it), and its probed recall. */
export interface PlacedPoint {
  knobs: Knobs;
  calibratedFor?: number;
  recall: number;
}

const keyOf = (k: Knobs) => JSON.stringify(Object.entries(k).sort());

/** The knobs a record asks to time: the calibrated value, both sides of an adjacent or failed
 * bracket, or the end of the knob's range that comes nearest the target. */
function knobsToTime(r: CalibrationRecord, knob: string): Knobs[] {
  if (r.knobs.length > 0) return r.knobs;
  if (r.probes.length === 0) return [];
  const byValue = [...r.probes].sort((a, b) => Number(a.knobs[knob]) - Number(b.knobs[knob]));
  if (r.status === 'below_range') return [byValue[0].knobs];
  if (r.status === 'not_reached') return [byValue[byValue.length - 1].knobs];
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
  const seen = new Map<string, number>();
  const values = new Set(family.values);
  const cached = async (k: Knobs) => {
    const key = keyOf(k);
    let r = seen.get(key);
    if (r === undefined) seen.set(key, (r = await probe(k)));
    values.add(Number(k[family.knob]));
    return r;
  };
  const records: CalibrationRecord[] = [];
  // Each search starts from every value probed so far (free: cached), not the ladder's alone.
  const probed = () => ({ ...family, values: [...values].sort((a, b) => a - b) });
  for (const target of targets) {
    const main = await calibrateFamily(probed(), target, spec, cached, TARGET_TOLERANCE);
    records.push({ ...main, knobs: knobsToTime(main, family.knob) });
    for (const side of [target - NEIGHBOUR, Math.min(1, target + NEIGHBOUR)]) {
      const r = await calibrateFamily(probed(), side, spec, cached, NEIGHBOUR_TOLERANCE);
      // A neighbour is one point: of a bracket, the side nearer its own target.
      const nearest = knobsToTime(r, family.knob).sort((a, b) => Math.abs((seen.get(keyOf(a)) ?? 2) - side) - Math.abs((seen.get(keyOf(b)) ?? 2) - side));
      records.push({ ...r, knobs: nearest.slice(0, 1) });
    }
  }
  return records;
}

/** The points the records ask to time, each once, ascending in probed recall; a point is
 * calibrated for a table target when that target's own record found it. */
export function placedPoints(records: CalibrationRecord[], targets: readonly number[] = TARGETS): PlacedPoint[] {
  const recall = new Map<string, number>();
  for (const r of records) for (const p of r.probes) recall.set(keyOf(p.knobs), p.recall);
  const out = new Map<string, PlacedPoint>();
  for (const r of records) {
    const forTarget = r.status === 'found' && targets.some((t) => Math.abs(t - r.target) < 1e-12) ? r.target : undefined;
    for (const knobs of r.knobs) {
      const key = keyOf(knobs);
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

class ProbeFailed extends Error {}

/** A cold group's points to time and the first query of its timed slices. With a calibration
 * spec: placed by recall-only probes over the SLICE_CAP queries after the group's first
 * (src/runner/cold-placement.ts), kept in the group's calibration so that a resumed run places
 * the same points without probing; without one, or when the probes fail, the ladder. */
export async function coldItems(run: GroupRun, ladder: Knobs[]): Promise<{ items: Item[]; start: number }> {
  const { engine, p, ds, g, group, queries: order, pointTimeoutS } = run;
  const asLadder = { items: ladder.map((knobs, li) => ({ li, knobs })), start: 1 };
  const spec = p.settings.calibration;
  if (!spec) return asLadder;
  const probeQueries = order.slice(1, 1 + Math.min(SLICE_CAP[g.k] ?? 200, Math.max(0, ds.nq - 1 - MIN_SLICE)));
  const drive = drivenBy(p, 'throughput', run.clients, run.threads);
  const probe = async (knobs: Knobs) => {
    const filters = probeQueries.map((q) => g.filters[q]);
    const req = { type: 'point' as const, knobs, k: g.k, queries: probeQueries, filters, clients: drive.clients, threads: drive.threads };
    const reply = (await engine.request<'point'>(req, pointTimeoutS)).reply;
    const failed = reply.errors.filter((x) => x !== null);
    if (failed.length > 0) throw new ProbeFailed(`${failed.length} of ${probeQueries.length} queries failed: ${failed[0]}`);
    run.onProgress(`${g.key}: placing points, probe at ${JSON.stringify(knobs)}`);
    return summarize(scorePoint(ds, g, probeQueries, reply)).recall;
  };
  if (!group.calibration) {
    try {
      const records = await placeColdPoints(ladder, spec, probe);
      if (!records) return asLadder;
      group.calibration = records;
      run.save();
    } catch (e) {
      if (!(e instanceof ProbeFailed) && (!(e instanceof HostError) || e.userError)) throw e;
      log(`${p.name}: ${g.key}: placing points failed (${e.message}); timing the ladder instead`);
      return asLadder;
    }
  }
  // Ladder values keep their index; the other points are numbered after the ladder.
  let extra = ladder.length;
  const items = placedPoints(group.calibration).map((pt) => {
    const li = ladder.findIndex((k) => keyOf(k) === keyOf(pt.knobs));
    return { li: li >= 0 ? li : extra++, knobs: pt.knobs, calibratedFor: pt.calibratedFor };
  });
  return { items, start: 1 + probeQueries.length };
}
