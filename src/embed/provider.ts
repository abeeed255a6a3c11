// Text embedding providers, chosen per dataset with --embed:
//   glove                 averaged GloVe 6B 100-d word vectors (offline, deterministic)
//   precomputed:DIR       the user's own vectors for the corpus and the queries, by id
//   model:DIR             a local transformer model directory (transformers.js, local files only)
// Every provider returns unit-length float32 rows, one per text, in the order given.
import { UserError } from '../util/errors.ts';
import { gloveEmbedder } from './glove.ts';
import { precomputedEmbedder } from './precomputed.ts';
import { transformerEmbedder } from './transformer.ts';

export interface EmbedInput {
  /** The corpus' or the query set's own ids (precomputed vectors are matched by them). */
  ids: string[];
  texts: string[];
}

export interface TextEmbedder {
  /** Recorded in the dataset manifest's source. */
  describe: Record<string, unknown>;
  embed(input: EmbedInput, role: 'corpus' | 'queries'): Promise<{ vectors: Float32Array; d: number }>;
}

export const EMBED_HELP = 'glove | precomputed:DIR (corpus and queries vectors by id: <role>.jsonl of {"_id", "vector"}, or <role>.npy/.fvecs/... with <role>.ids.txt) | model:DIR (a local transformers.js model directory)';

export function parseEmbedSpec(spec: string): TextEmbedder {
  if (spec === 'glove') return gloveEmbedder();
  const m = /^(precomputed|model):(.+)$/.exec(spec);
  if (m?.[1] === 'precomputed') return precomputedEmbedder(m[2]);
  if (m?.[1] === 'model') return transformerEmbedder(m[2]);
  throw new UserError(`--embed ${JSON.stringify(spec)} is not a known provider; use ${EMBED_HELP}`);
}

/** Scales every row to unit length in place; returns the indices of zero rows (left as is). */
export function normalizeRows(v: Float32Array, rows: number, d: number): number[] {
  const zero: number[] = [];
  for (let i = 0; i < rows; i++) {
    let s = 0;
    for (let j = i * d; j < (i + 1) * d; j++) s += v[j] * v[j];
    if (s === 0 || !Number.isFinite(s)) {
      zero.push(i);
      continue;
    }
    const inv = 1 / Math.sqrt(s);
    for (let j = i * d; j < (i + 1) * d; j++) v[j] *= inv;
  }
  return zero;
}
