// Qdrant Edge (PyPI qdrant-edge-py): Qdrant's own segment and shard code in-process, in Python.
// This file declares the settings and how to start the host; the engine calls are in host.py,
// which speaks the participant protocol through the SDK's Python reference host
// (src/adapters/foreign.ts, docs/contracts.md "The participant protocol").
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';

const PROVISION = 'participants/qdrant-edge/provision.sh';

const settingsSchema = sdk.settingsObject({
  /** HNSW graph degree (Qdrant `m`). */
  m: sdk.intSetting(2, 128, 16),
  /** Candidates while building (Qdrant `ef_construct`). */
  ef_construct: sdk.intSetting(4, 4096, 200),
  /** Qdrant's planner threshold, in KB of vectors: per segment, a filter estimated to match
   * less than this is answered through the payload index with an exact scan of the matches;
   * above it, the graph is walked with the filter. (Qdrant's default, 10,000 KB, would make
   * every segment of a 20k x 128 set an exact scan, unfiltered too.) */
  full_scan_threshold_kb: sdk.intSetting(1, 1_000_000, 1000),
  /** Attributes with a payload index (built before the graph, so it gets payload-aware links). */
  payload_indexes: z.array(z.enum(sdk.ATTRIBUTES)).default([...sdk.ATTRIBUTES]),
  /** Where the points' payloads (their attributes) live: 'ram' (Qdrant's default) or 'disk'
   * (memory-mapped, read on demand). Filters read the payload indexes, not the payloads. */
  payload: z.enum(['ram', 'disk']).default('ram'),
  /** Where the original vectors live: 'ram' (pinned) or 'disk' (memory-mapped, read on demand). */
  vectors: z.enum(['ram', 'disk']).default('ram'),
  /** 'int8' (a byte a dimension), 'binary' (code_bits a dimension, the query encoded in 8 bits
   * against them) or 'turbo' (TurboQuant: the vectors rotated, then code_bits a dimension): the
   * graph is walked over codes pinned in RAM, the top candidates rescored from the originals
   * (knobs rescore, oversampling). */
  quantization: z.enum(['none', 'int8', 'binary', 'turbo']).default('none'),
  /** Bits a dimension of the 'binary' (1, 1.5, 2) or 'turbo' (1, 1.5, 2, 4, 8) codes. */
  code_bits: z.union([z.literal(1), z.literal(1.5), z.literal(2), z.literal(4), z.literal(8)]).default(2),
  /** Segments the optimizer aims for (Qdrant's default_segment_number): each is searched, in
   * parallel by the shard's search threads. */
  segments: sdk.intSetting(1, 64, 1),
  /** Threads building the graph (0: Qdrant chooses). */
  max_indexing_threads: sdk.intSetting(0, 64, 0),
  /** The shard's search thread pool (0: Qdrant's default). */
  search_threads: sdk.intSetting(0, 64, 0),
});

/** The interpreter of the provisioned virtual environment. */
function python(): string {
  const venv = join(process.env.VECBENCH_CACHE ?? '/var/cache/vecbench', 'venv', 'qdrant-edge');
  const bin = join(venv, 'bin', 'python');
  if (!existsSync(join(venv, '.vecbench-requirements')))
    throw new sdk.SetupNeeded(`Qdrant Edge's Python environment is not installed (${venv}; ${PROVISION} makes it)`);
  return bin;
}

export default sdk.foreignParticipant({
  name: 'qdrant-edge',
  engine: 'Qdrant Edge',
  settingsSchema,
  knobs: {
    hnsw_ef: sdk.intKnob(1, 100_000),
    exact: sdk.knobWith<number>((v) => v === 0 || v === 1, '0 or 1'),
    rescore: sdk.knobWith<number>((v) => v === 0 || v === 1, '0 or 1'),
    oversampling: sdk.knobWith<number>((v) => typeof v === 'number' && v >= 1 && v <= 100, 'a number 1..100'),
  },
  filters: sdk.EVERY_FILTER,
  filterStrategy: "Qdrant's planner per segment: payload index + exact scan below full_scan_threshold, else graph walk with the filter (payload-aware links)",
  reopen: true,
  // One query at a time per host (Python's GIL); the harness's search threads each run a host
  // of their own on a copy of the shard, so the engine gets a thread per core.
  concurrency: 'processes',
  host: () => sdk.pythonHost(import.meta.url, python()),
});
