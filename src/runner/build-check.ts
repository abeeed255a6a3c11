// The queries that tie a built index to its marker: the probe asked between ingest and index
// build, asked again after the build as the check queries (their ids go in the marker), and
// once more by a reopened engine, which must answer alike to be reused; and the build a marker
// must match. Apart from engine-handle.ts, which runs the engine they are asked of.
import type { Knobs } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import { log } from '../util/progress.ts';
import type { HostClient } from './client.ts';
import { buildSettingsHash, idsPerQuery, writeMarker } from './engine-home.ts';
import { ladderFor, type LoadedParticipant } from './participants.ts';
import { PROBE_QUERIES } from './points.ts';
import { queryOrder } from './query-order.ts';

/** The build a reusable index must come from: this participant, data and settings. */
export function wantedBuild(p: LoadedParticipant, ds: Dataset) {
  return { participant: p.name, datasetHash: ds.hash, settingsHash: buildSettingsHash(p.index, p.settings.batch_size) };
}

/** The check queries: the between-load probe's queries and knobs, asked after the build. */
export async function askCheck(
  host: HostClient,
  p: LoadedParticipant,
  ds: Dataset,
  pointTimeoutS: number,
): Promise<{ knobs: Knobs; k: number; queries: number[]; ids: number[][] } | string> {
  const check = probeRequest(p, ds);
  const r = await host.request<'point'>(
    { type: 'point', knobs: check.knobs, k: check.k, queries: check.queries, filters: check.queries.map(() => null), clients: 1 },
    pointTimeoutS,
  );
  const failed = r.reply.errors.find((e) => e !== null);
  return failed ? `a check query failed: ${failed}` : { ...check, ids: idsPerQuery(r.reply) };
}

/** A few unfiltered k=10 queries asked between ingest and index build (the last queries of
 * the shuffled order, with the first knobs of the none/10 ladder). */
export function probeRequest(p: LoadedParticipant, ds: Dataset): { knobs: Knobs; k: number; queries: number[] } {
  const order = queryOrder(ds.nq);
  const n = Math.min(PROBE_QUERIES, ds.nq);
  return { knobs: ladderFor(p.settings, 'none', 10)[0] ?? {}, k: 10, queries: Array.from(order.subarray(order.length - n)) };
}

/** After a finished load: asks the check queries and writes the marker that lets a resumed run
 * reopen this build in `home`. Returns the build time, or null when the engine could not answer
 * them (no marker, no reuse). */
export async function markBuilt(
  host: HostClient,
  p: LoadedParticipant,
  ds: Dataset,
  at: { home: string; engineVersion: string; rows: number; pointTimeoutS: number },
): Promise<string | null> {
  const check = await askCheck(host, p, ds, at.pointTimeoutS);
  if (typeof check === 'string') {
    log(`${p.name}: the built index is not marked for reuse: ${check}`);
    return null;
  }
  const want = wantedBuild(p, ds);
  const built = new Date().toISOString();
  writeMarker(at.home, {
    format: 'vecbench-engine/1',
    participant: want.participant,
    dataset: ds.name,
    dataset_hash: want.datasetHash,
    settings_hash: want.settingsHash,
    engine_version: at.engineVersion,
    built,
    rows: at.rows,
    check,
  });
  return built;
}
