// The text embedder every provider is (provider.ts picks one by --embed) and the row
// normalisation they share.
interface EmbedInput {
  /** The corpus' or the query set's own ids (precomputed vectors are matched by them). */
  ids: string[];
  texts: string[];
}

export interface TextEmbedder {
  /** Recorded in the dataset manifest's source. */
  describe: Record<string, unknown>;
  embed(input: EmbedInput, role: 'corpus' | 'queries'): Promise<{ vectors: Float32Array; d: number }>;
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
