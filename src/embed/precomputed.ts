// Precomputed vectors supplied by the user, matched to the corpus and the queries by id. In
// DIR, for each of `corpus` and `queries`, either
//   <role>.jsonl                  one {"_id": "...", "vector": [numbers]} per line
//                                 ("embedding" is accepted for "vector"), or
//   <role>.<fmt> + <role>.ids.txt a matrix in any format vecbench reads (.npy, .fvecs, .hdf5,
//                                 .parquet, ...; src/datasets/readers) and one id per line
//                                 naming its rows in order.
// Every id of the dataset needs a vector of the same dimension; extra ids are ignored. Rows
// are scaled to unit length.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError } from '../util/errors.ts';
import { sha256File } from '../util/hash.ts';
import { formatOf, openVectors } from '../datasets/readers/index.ts';
import { normalizeRows, type TextEmbedder } from './embedder.ts';

type Role = 'corpus' | 'queries';
type VectorSource = { kind: 'jsonl'; file: string } | { kind: 'matrix'; file: string; ids: string };

const layoutHelp = (role: Role) =>
  `give ${role}.jsonl ({"_id": ID, "vector": [...]} per line) or ${role}.<npy|fvecs|hdf5|parquet> with ${role}.ids.txt (one id per row, in order)`;

function findSource(dir: string, dirArg: string, role: Role): VectorSource {
  const jsonl = join(dir, `${role}.jsonl`);
  if (existsSync(jsonl)) return { kind: 'jsonl', file: jsonl };
  const matrix = readdirSync(dir).find((f) => f.startsWith(`${role}.`) && formatOf(f) !== null);
  if (!matrix) throw new UserError(`--embed precomputed:${dirArg}: no vectors for the ${role} in ${dir}; ${layoutHelp(role)}`);
  const ids = join(dir, `${role}.ids.txt`);
  if (!existsSync(ids))
    throw new UserError(
      `--embed precomputed:${dirArg}: ${matrix} needs ${role}.ids.txt beside it, one ${role === 'corpus' ? 'document' : 'query'} id per line in row order`,
    );
  return { kind: 'matrix', file: join(dir, matrix), ids };
}

async function readJsonl(file: string): Promise<{ byId: Map<string, Float32Array>; d: number }> {
  const byId = new Map<string, Float32Array>();
  let d = -1;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      let row: { _id?: unknown; vector?: unknown; embedding?: unknown };
      try {
        row = JSON.parse(line);
      } catch {
        throw new UserError(`${file} line ${i + 1} is not valid JSON; fix the file`);
      }
      const v = row.vector ?? row.embedding;
      if ((typeof row._id !== 'string' && typeof row._id !== 'number') || !Array.isArray(v)) {
        throw new UserError(`${file} line ${i + 1} needs "_id" (string) and "vector" (array of numbers); fix the file`);
      }
      if (d < 0) d = v.length;
      if (v.length !== d || v.length === 0)
        throw new UserError(`${file} line ${i + 1} has ${v.length} dimensions, earlier lines ${d}; every vector needs the same dimension`);
      if (!v.every((x) => typeof x === 'number' && Number.isFinite(x)))
        throw new UserError(`${file} line ${i + 1} has a value that is not a finite number (NaN, Inf or text); fix the file`);
      byId.set(String(row._id), Float32Array.from(v as number[]));
    });
  if (d < 0) throw new UserError(`${file} has no vectors; write one {"_id", "vector"} line per row`);
  return { byId, d };
}

async function readMatrix(src: Extract<VectorSource, { kind: 'matrix' }>): Promise<{ byId: Map<string, Float32Array>; d: number }> {
  const ids = readFileSync(src.ids, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const reader = await openVectors(src.file);
  try {
    if (reader.rows !== ids.length)
      throw new UserError(`${reader.label} has ${reader.rows} rows but ${src.ids} names ${ids.length} ids; they must match row for row`);
    const all = await reader.readFloats(0, reader.rows);
    const byId = new Map<string, Float32Array>();
    ids.forEach((id, i) => byId.set(id, all.subarray(i * reader.dim, (i + 1) * reader.dim)));
    return { byId, d: reader.dim };
  } finally {
    await reader.close();
  }
}

export function precomputedEmbedder(dirArg: string): TextEmbedder {
  const dir = resolve(dirArg);
  if (!existsSync(dir))
    throw new UserError(
      `--embed precomputed:${dirArg}: ${dir} does not exist; give a directory with the corpus and query vectors (${layoutHelp('corpus')}; the same for queries)`,
    );
  const sources = { corpus: findSource(dir, dirArg, 'corpus'), queries: findSource(dir, dirArg, 'queries') };
  const describe: Record<string, unknown> = { embedder: 'precomputed', dir, corpus: sources.corpus.file, queries: sources.queries.file };
  return {
    describe,
    async embed(input, role) {
      // Provenance: the hash of the file the vectors came from (assembleLabelled records describe after embedding).
      describe[`${role}_sha256`] = await sha256File(sources[role].file);
      const src = sources[role];
      const { byId, d } = src.kind === 'jsonl' ? await readJsonl(src.file) : await readMatrix(src);
      const out = new Float32Array(input.ids.length * d);
      input.ids.forEach((id, i) => {
        const v = byId.get(id);
        if (!v)
          throw new UserError(
            `${src.file} has no vector for ${role === 'corpus' ? 'document' : 'query'} id ${JSON.stringify(id)}; every id of the dataset needs one`,
          );
        out.set(v, i * d);
      });
      for (let j = 0; j < out.length; j++) {
        if (!Number.isFinite(out[j]))
          throw new UserError(`${src.file}: the vector of id ${JSON.stringify(input.ids[Math.floor(j / d)])} has NaN or Inf; fix the file`);
      }
      const zero = normalizeRows(out, input.ids.length, d);
      if (zero.length > 0)
        throw new UserError(`${src.file}: the vector of id ${JSON.stringify(input.ids[zero[0]])} is all zeros, which has no direction; fix or drop it`);
      return { vectors: out, d };
    },
  };
}
