// Text embedding providers, chosen per dataset with --embed:
//   glove                 averaged GloVe 6B 100-d word vectors (offline, deterministic)
//   precomputed:DIR       the user's own vectors for the corpus and the queries, by id
//   model:DIR             a local transformer model directory (transformers.js, local files only)
// Every provider returns unit-length float32 rows, one per text, in the order given.
import { UserError } from '../util/errors.ts';
import { gloveEmbedder } from './glove.ts';
import { precomputedEmbedder } from './precomputed.ts';
import { transformerEmbedder } from './transformer.ts';
import type { TextEmbedder } from './embedder.ts';

export const EMBED_HELP =
  'glove | precomputed:DIR (corpus and queries vectors by id: <role>.jsonl of {"_id", "vector"}, or <role>.npy/.fvecs/... with <role>.ids.txt) | model:DIR (a local transformers.js model directory)';

export function parseEmbedSpec(spec: string): TextEmbedder {
  if (spec === 'glove') return gloveEmbedder();
  const m = /^(precomputed|model):(.+)$/.exec(spec);
  if (m?.[1] === 'precomputed') return precomputedEmbedder(m[2]);
  if (m?.[1] === 'model') return transformerEmbedder(m[2]);
  throw new UserError(`--embed ${JSON.stringify(spec)} is not a known provider; use ${EMBED_HELP}`);
}
