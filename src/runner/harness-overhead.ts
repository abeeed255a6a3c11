// The harness's own cost per query: a pass of the participant host's point path (the query
// vectors, the timed loop, digests, packing) against a null engine that answers at once, and
// the rule that keeps a point the harness itself slowed from setting a cell.
import type { HostReply, HostRequest } from './protocol.ts';

type NullPassRequest = Extract<HostRequest, { type: 'null-pass' }>;
type NullPassReply = Extract<HostReply, { type: 'null-pass' }>;

/** Largest share of a point's mean latency the harness may take per query. */
export const HARNESS_OVERHEAD_LIMIT = 0.05;
export const HARNESS_OVERHEAD_RULE = `a point whose harness overhead per query exceeds ${HARNESS_OVERHEAD_LIMIT * 100} % of its mean latency is flagged harness-overhead and never sets a cell`;

/** Timed passes after one warm-up (the JIT, the host's query-vector cache); odd, so the
 * median is one pass's figure and a neighbour's burst in one pass does not move it. */
const PASSES = 5;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Per-query harness overhead (the null pass's wall time / queries, median of the passes)
 * and the rate it caps a point at. `request` sends one request to the participant's host. */
export async function measureHarnessOverhead(
  request: (req: NullPassRequest) => Promise<NullPassReply>,
  k: number,
  queries: number[],
  clients: number,
): Promise<{ perQueryMs: number; qps: number }> {
  if (queries.length === 0) throw new Error('measureHarnessOverhead: no queries');
  const req: NullPassRequest = { type: 'null-pass', k, queries, clients };
  await request(req);
  const walls: number[] = [];
  for (let p = 0; p < PASSES; p++) walls.push((await request(req)).reply.wallS);
  const wallS = median(walls);
  return { perQueryMs: (wallS * 1000) / queries.length, qps: queries.length / Math.max(wallS, 1e-12) };
}

/** ['harness-overhead'] when the harness's cost per query exceeds HARNESS_OVERHEAD_LIMIT of
 * the point's mean latency; unknown figures (not finite) flag nothing. */
export function harnessFlag(perQueryMs: number, meanLatencyMs: number): string[] {
  if (!Number.isFinite(perQueryMs) || !Number.isFinite(meanLatencyMs)) return [];
  return perQueryMs > HARNESS_OVERHEAD_LIMIT * meanLatencyMs ? ['harness-overhead'] : [];
}
