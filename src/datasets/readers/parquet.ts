// Parquet with an embedding list column plus scalar columns (the Hugging Face layout: e.g.
// Cohere's wikipedia-2023-11-embed-multilingual-v3 with `emb`, `title`, `text`, or a `lang`
// column), read with hyparquet. A row range reads only the row groups (or, with an offset
// index, the pages) that hold it, so memory is bounded by the block asked for plus one row
// group of the file, never by the file.
import { existsSync, statSync } from 'node:fs';
import { asyncBufferFromFile, parquetMetadataAsync, parquetRead, parquetSchema } from 'hyparquet';
import { UserError } from '../../util/errors.ts';
import { FIX_TRUNCATED, checkRange, inputError, type MatrixReader } from './common.ts';

type Metadata = Awaited<ReturnType<typeof parquetMetadataAsync>>;
type SchemaNode = ReturnType<typeof parquetSchema>;

/** Names tried, in order, when no embedding column is named. */
const EMBEDDING_NAMES = ['emb', 'embedding', 'embeddings', 'vector', 'vectors', 'openai'];

export interface ParquetReader extends MatrixReader {
  readonly column: string;
  /** Top-level column names of the file. */
  readonly columns: string[];
  /** Values of a scalar column for rows [from, from + count), as strings (null stays null). */
  readStrings(column: string, from: number, count: number): Promise<(string | null)[]>;
}

function leafOf(node: SchemaNode): SchemaNode {
  let n = node;
  while (n.children.length === 1) n = n.children[0];
  return n;
}

/** A list of FLOAT / DOUBLE: the shape an embedding column has. */
function isFloatList(node: SchemaNode): boolean {
  if (node.children.length === 0) return node.element.repetition_type === 'REPEATED' && (node.element.type === 'FLOAT' || node.element.type === 'DOUBLE');
  const leaf = leafOf(node);
  const repeated = (function hasRepeated(n: SchemaNode): boolean {
    return n.element.repetition_type === 'REPEATED' || n.children.some(hasRepeated);
  })(node);
  return repeated && leaf.children.length === 0 && (leaf.element.type === 'FLOAT' || leaf.element.type === 'DOUBLE');
}

function parquetReason(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0];
}

export async function openParquet(path: string, column?: string): Promise<ParquetReader> {
  if (!existsSync(path)) throw new UserError(`${path}: no such file; check the path`);
  if (statSync(path).isDirectory()) throw new UserError(`${path}: is a directory, not a Parquet file; name the file itself`);
  const file = await asyncBufferFromFile(path);
  let metadata: Metadata;
  try {
    metadata = await parquetMetadataAsync(file);
  } catch (e) {
    throw inputError(path, `is not a readable Parquet file (${parquetReason(e)})`, FIX_TRUNCATED);
  }
  const schema = parquetSchema(metadata);
  const columns = schema.children.map((c) => c.element.name);
  let chosen: string | undefined = column;
  if (chosen !== undefined) {
    const node = schema.children.find((c) => c.element.name === chosen);
    if (!node) throw inputError(path, `has no column "${chosen}" (it has: ${columns.join(', ')})`, `name one with ${path}:<column>`);
    if (!isFloatList(node)) throw inputError(`${path}:${chosen}`, 'is not a list of float/double values', 'name the embedding column (a list of floats)');
  } else {
    const lists = schema.children.filter(isFloatList).map((c) => c.element.name);
    chosen = EMBEDDING_NAMES.find((n) => lists.includes(n)) ?? lists[0];
    if (!chosen)
      throw inputError(path, `has no embedding column (no list of floats among: ${columns.join(', ')})`, 'store the vectors as a list<float> column');
  }
  const embColumn = chosen;
  const label = `${path}:${embColumn}`;
  const rows = Number(metadata.num_rows);
  if (rows === 0) throw inputError(label, 'has no rows', 'export the vectors again');

  const readColumn = async (name: string, from: number, count: number): Promise<unknown[]> => {
    let out: unknown[] = [];
    try {
      await parquetRead({
        file,
        metadata,
        columns: [name],
        rowStart: from,
        rowEnd: from + count,
        useOffsetIndex: true,
        onComplete: (r: unknown[][]) => {
          out = r.map((row) => row[0]);
        },
      });
    } catch (e) {
      throw inputError(`${path}:${name}`, `rows ${from}..${from + count} cannot be read (${parquetReason(e)})`, FIX_TRUNCATED);
    }
    if (out.length !== count) throw inputError(`${path}:${name}`, `rows ${from}..${from + count} gave ${out.length} values`, FIX_TRUNCATED);
    return out;
  };

  const first = (await readColumn(embColumn, 0, 1))[0];
  if (!Array.isArray(first) && !ArrayBuffer.isView(first)) throw inputError(label, 'row 0 has no vector', 'every row needs an embedding');
  const dim = (first as ArrayLike<number>).length;
  if (dim === 0) throw inputError(label, 'row 0 has an empty vector', 'every row needs an embedding');

  const reader: ParquetReader = {
    label,
    rows,
    dim,
    element: 'float32',
    column: embColumn,
    columns,
    readFloats: async (from, count) => {
      checkRange(reader, from, count);
      const values = await readColumn(embColumn, from, count);
      const out = new Float32Array(count * dim);
      for (let r = 0; r < count; r++) {
        const v = values[r] as ArrayLike<number> | null;
        if (v === null || v === undefined) throw inputError(label, `row ${from + r} has no vector (null)`, 'drop rows without embeddings before preparing');
        if (v.length !== dim)
          throw inputError(label, `row ${from + r} has ${v.length} values, row 0 has ${dim}`, 'every embedding must have the same dimension');
        for (let j = 0; j < dim; j++) out[r * dim + j] = v[j];
      }
      return out;
    },
    readInts: async () => {
      throw inputError(label, 'holds float embeddings, not neighbour ids', 'pass ground truth as .ivecs, .npy or an HDF5 "neighbors" dataset');
    },
    readStrings: async (name, from, count) => {
      checkRange(reader, from, count);
      if (!columns.includes(name)) throw inputError(path, `has no column "${name}" (it has: ${columns.join(', ')})`, 'check the column name');
      const values = await readColumn(name, from, count);
      return values.map((v) => (v === null || v === undefined ? null : String(v)));
    },
    close: async () => {},
  };
  return reader;
}
