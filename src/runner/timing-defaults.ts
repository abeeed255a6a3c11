// The timing defaults of `vecbench run` (--min-passes, --queries, --busy-cores, --host-slow ...)
// and the VECBENCH_TIMING override the test suite shortens them with; also the query counts
// recall needs. Apart from measure-group.ts because the CLI reads them without the protocol.
import { UserError } from '../util/errors.ts';
import type { Timing } from './timed-rounds.ts';

// A pass of a fast point lasts a few tens of ms: up to 60 of them let the minimum seconds bind,
// so a point is timed for at least half a second whatever its speed. The points the table's
// cells read then go on toward a ±3 % QPS interval, for at most 2 s and 300 passes each: on a
// quiet machine that costs a few passes; on this project's 2-core VM one pass's QPS varies by
// 15-20 % around its mean with the host (deterministic brute force too), ±3 % would take over
// 100 passes, and with 4 s a cell the default run took 606-634 s (2026-12-02), so the cap binds.
// The ladder's other points only draw the curve, and keep the base timing.
// Where the row's participants are timed in shared rounds, a cell's point aims at its leads'
// paired interval instead (±3 % too): the common drift cancels in a lead, so that takes a
// handful of passes where the cell's own interval would need a hundred.
const PRODUCT_TIMING: Timing = { minPasses: 3, minSeconds: 0.5, maxPasses: 60, cellHalfWidth: 0.03, cellSeconds: 2, cellMaxPasses: 300, leadHalfWidth: 0.03 };
/** Queries in a warm group's query set unless --queries says otherwise. */
const PRODUCT_QUERY_SET = 1000;

/** VECBENCH_TIMING="min_passes=2,min_seconds=0,max_passes=4,queries=300,busy_cores=64,cell_half_width=0" changes
 * the defaults of the options of the same names (the test suite uses it to stay short; every
 * result records the values it was measured with). A bad value is one line naming it. */
export function envDefaults(env = process.env.VECBENCH_TIMING): { timing: Timing; queries: number; busyCores?: number; hostSlow: number } {
  const out = { timing: { ...PRODUCT_TIMING }, queries: PRODUCT_QUERY_SET, busyCores: undefined as number | undefined, hostSlow: 0 };
  if (!env) return out;
  for (const part of env.split(',')) {
    const [key, raw] = part.split('=');
    const v = Number(raw);
    if (!(v >= 0) || !Number.isFinite(v)) throw new UserError(`VECBENCH_TIMING: ${part} is not NAME=NUMBER; write e.g. min_passes=2,min_seconds=0`);
    if (key === 'min_passes') out.timing.minPasses = Math.max(1, Math.round(v));
    else if (key === 'min_seconds') out.timing.minSeconds = v;
    else if (key === 'max_passes') out.timing.maxPasses = Math.max(1, Math.round(v));
    else if (key === 'cell_half_width') out.timing.cellHalfWidth = v;
    else if (key === 'cell_seconds') out.timing.cellSeconds = v;
    else if (key === 'cell_max_passes') out.timing.cellMaxPasses = Math.max(1, Math.round(v));
    else if (key === 'lead_half_width') out.timing.leadHalfWidth = v;
    else if (key === 'queries') out.queries = Math.max(1, Math.round(v));
    else if (key === 'busy_cores') out.busyCores = v;
    else if (key === 'host_slow') out.hostSlow = v;
    else
      throw new UserError(
        `VECBENCH_TIMING: unknown name ${key}; the names are min_passes, min_seconds, max_passes, cell_half_width, cell_seconds, cell_max_passes, lead_half_width, queries, busy_cores, host_slow`,
      );
  }
  out.timing.maxPasses = Math.max(out.timing.maxPasses, out.timing.minPasses);
  return out;
}

export const DEFAULT_TIMING: Timing = envDefaults().timing;
export const DEFAULT_QUERY_SET = envDefaults().queries;
export const DEFAULT_BUSY_CORES = envDefaults().busyCores;
/** --host-slow's default (0: the host's speed is not probed). */
export const DEFAULT_HOST_SLOW = envDefaults().hostSlow;
/** Cold protocol: the fewest queries a slice may have (recall over at least this many). */
export const MIN_SLICE = 1000;
/** Cold protocol: a slice is cut to what the engine answers in about this many seconds (at its
 * group's last measured speed), down to COLD_MIN_QUERIES: a disk layout that answers a few
 * queries a second spends minutes on each 1,000-query slice and hours on a group. */
export const COLD_POINT_SECONDS = 60;
/** ... a placement probe to about this many. */
export const COLD_PROBE_SECONDS = 20;
/** ... and never below this many queries. */
const COLD_MIN_QUERIES = 200;

/** How many of a slice's `full` queries to ask, given the engine's expected QPS (undefined: not
 * known yet, the whole slice) and the seconds allowed. */
export function boundedSlice(full: number, qps: number | undefined, seconds: number): number {
  if (qps === undefined || !(qps > 0) || !Number.isFinite(qps)) return full;
  return Math.max(Math.min(full, COLD_MIN_QUERIES), Math.min(full, Math.floor(seconds * qps)));
}
/** The fewest queries a dataset needs for `vecbench run`: below this, recall says nothing. */
export const MIN_RUN_QUERIES = 10;

/** The queries a point needs for its recall to count: 1,000, or all of a smaller set. */
export function minPointQueries(nq: number): number {
  return Math.min(MIN_SLICE, nq);
}
