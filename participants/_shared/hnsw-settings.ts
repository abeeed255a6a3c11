// The index settings of the HNSW libraries that more than one participant runs: hnswlib (through
// hnswlib-node in `hnswlib`, through vecbench's addon in `hnswlib-direct`) and USearch (through
// its npm binding in `usearch` and `usearch-disk`, through vecbench's addon in `usearch-direct`).
// One schema per library, so its participants build the same index from the same settings.
import { z } from 'zod';

export const hnswlibSettingsSchema = z
  .object({
    /** Links per node (layer 0 keeps 2 x M). */
    M: z.number().int().min(2).max(256).default(16),
    /** Candidate list size while inserting. */
    efConstruction: z.number().int().min(1).max(10_000).default(200),
    /** Seed of the level generator (hnswlib's random_seed). */
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .default(100),
    /** Let new labels reuse the slots of deleted ones (hnswlib's allow_replace_deleted). */
    replaceDeleted: z.boolean().default(true),
  })
  .strict();

export const usearchSettingsSchema = z
  .object({
    /** Links per node (HNSW M; layer 0 keeps 2 x connectivity). */
    connectivity: z.number().int().min(2).max(256).default(16),
    /** Candidate list size while inserting (HNSW efConstruction). */
    expansion_add: z.number().int().min(1).max(10_000).default(128),
    /** Candidate list size while searching, used when a ladder point does not set it. */
    expansion_search: z.number().int().min(1).max(100_000).default(64),
    /** Threads for add (0: all hardware threads). Searches use one thread each. */
    threads: z.number().int().min(0).max(1024).default(0),
    /** memory: the index is held in the process (loaded from its file on reopen); view: once
     * built, the index is searched from its file, memory-mapped (USearch's view), so the page
     * cache holds what the searches touch and a memory budget smaller than the file makes them
     * read it. */
    storage: z.enum(['memory', 'view']).default('memory'),
  })
  .strict();
