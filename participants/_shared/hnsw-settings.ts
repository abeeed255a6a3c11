// The index settings of the HNSW libraries that more than one participant runs: hnswlib (through
// hnswlib-node in `hnswlib`, through vecbench's addon in `hnswlib-direct`) and USearch (through
// its npm binding in `usearch` and `usearch-disk`, through vecbench's addon in `usearch-direct`).
// One schema per library, so its participants build the same index from the same settings.
import { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';

export const hnswlibSettingsSchema = sdk.settingsObject({
  /** Links per node (layer 0 keeps 2 x M). */
  M: sdk.intSetting(2, 256, 16),
  /** Candidate list size while inserting. */
  efConstruction: sdk.intSetting(1, 10_000, 200),
  /** Seed of the level generator (hnswlib's random_seed). */
  seed: sdk.intSetting(0, 2 ** 32 - 1, 100),
  /** Let new labels reuse the slots of deleted ones (hnswlib's allow_replace_deleted). */
  replaceDeleted: z.boolean().default(true),
});

/** hnswlib's space for a dataset's metric: cosine sets are unit length after prepare, so the
 * inner product ranks them. */
export const hnswlibSpace = (metric: string): 'ip' | 'l2' => (metric === 'l2' ? 'l2' : 'ip');

/** What both hnswlib participants declare alike: one index is searched by one thread at a time,
 * and each search thread reopens the two files the build saved (searches never write them). */
export const hnswlibDeclaration = {
  settingsSchema: hnswlibSettingsSchema,
  knobs: { ef: sdk.intKnob(1) },
  filters: sdk.EVERY_FILTER,
  concurrentSearch: false,
  reopenInThreads: true,
} as const;

export const usearchSettingsSchema = sdk.settingsObject({
  /** Links per node (HNSW M; layer 0 keeps 2 x connectivity). */
  connectivity: sdk.intSetting(2, 256, 16),
  /** Candidate list size while inserting (HNSW efConstruction). */
  expansion_add: sdk.intSetting(1, 10_000, 128),
  /** Candidate list size while searching, used when a ladder point does not set it. */
  expansion_search: sdk.intSetting(1, 100_000, 64),
  /** Threads for add (0: all hardware threads). Searches use one thread each. */
  threads: sdk.intSetting(0, 1024, 0),
  /** memory: the index is held in the process (loaded from its file on reopen); view: once
   * built, the index is searched from its file, memory-mapped (USearch's view), so the page
   * cache holds what the searches touch and a memory budget smaller than the file makes them
   * read it. */
  storage: z.enum(['memory', 'view']).default('memory'),
});
