// A recall-only pass: one request for a set of queries at one knob setting, scored by the
// harness. The warm protocol's ladder points and calibration probes (src/runner/measure-group.ts)
// and the cold protocol's placement probes (src/runner/cold-placement.ts) are all this request.
import type { Knobs } from '../contracts.ts';
import { summarize } from '../metrics/recall.ts';
import { HostError } from './client.ts';
import type { GroupRun } from './group-run.ts';
import { scorePoint } from './points.ts';
import type { Item } from './timed-entry.ts';
import { drivenBy } from './timed-rounds.ts';

/** A pass whose queries the engine answered with errors: the point's own failure. */
class PassFailed extends Error {}

/** What one recall pass measured. */
export type RecallPass = NonNullable<Item['recall']>;

/** One recall-only pass of `queries` at `knobs`, driven as the throughput view drives the
 * engine. Throws PassFailed when any query failed. */
export async function recallPass(run: GroupRun, knobs: Knobs, queries: number[]): Promise<RecallPass> {
  const { engine, p, ds, g, pointTimeoutS } = run;
  const drive = drivenBy(p, 'throughput', run.clients, run.threads);
  const filters = queries.map((q) => g.filters[q]);
  const req = { type: 'point' as const, knobs, k: g.k, queries, filters, clients: drive.clients, threads: drive.threads };
  const reply = (await engine.request<'point'>(req, pointTimeoutS)).reply;
  const failed = reply.errors.filter((x) => x !== null);
  if (failed.length > 0) throw new PassFailed(`${failed.length} of ${queries.length} queries failed: ${failed[0]}`);
  const scores = scorePoint(ds, g, queries, reply);
  return { digests: reply.digests, summary: summarize(scores), perQuery: scores.map((s) => s.tieAware), wallS: reply.wallS };
}

/** Whether an error failed only the knob setting it was raised at (the engine's errors, a
 * time-out) rather than the run (the user's mistake, a harness fault): the former is skipped. */
export const failsOnlyThePoint = (e: unknown): e is Error => e instanceof PassFailed || (e instanceof HostError && !e.userError);

/** One key per knob setting, whatever the order its knobs were written in. */
export const knobsKey = (k: Knobs) => JSON.stringify(Object.entries(k).sort());
