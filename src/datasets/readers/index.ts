// Picks the reader for an input file by its name. A file may name a part of itself after a
// colon: `vectors.hdf5:train` (an HDF5 dataset) or `wiki.parquet:emb` (a Parquet column).
import { existsSync } from 'node:fs';
import { UserError } from '../../util/errors.ts';
import type { MatrixReader } from './common.ts';
import { hdf5Info, openHdf5 } from './hdf5.ts';
import { openIdx } from './idx.ts';
import { openNpy } from './npy.ts';
import { openParquet } from './parquet.ts';
import { openTexmex } from './texmex.ts';

type InputFormat = 'fvecs' | 'bvecs' | 'ivecs' | 'npy' | 'hdf5' | 'parquet' | 'idx';

export const FORMAT_HELP =
  '.fvecs, .bvecs, .ivecs, .npy (float32/float16/uint8), .hdf5/.h5 (ann-benchmarks layout), .parquet (a list<float> column), IDX (*-idx3-ubyte, .idx, optionally .gz)';

export function formatOf(path: string): InputFormat | null {
  const p = path.toLowerCase();
  if (p.endsWith('.fvecs')) return 'fvecs';
  if (p.endsWith('.bvecs')) return 'bvecs';
  if (p.endsWith('.ivecs')) return 'ivecs';
  if (p.endsWith('.npy')) return 'npy';
  if (p.endsWith('.hdf5') || p.endsWith('.h5')) return 'hdf5';
  if (p.endsWith('.parquet')) return 'parquet';
  if (/(idx\d-ubyte|\.idx\d?)(\.gz)?$/.test(p)) return 'idx';
  return null;
}

/** Splits `FILE[:PART]`; a colon belongs to the path when the whole string names a file. */
export function parseInputSpec(spec: string): { path: string; part?: string } {
  const i = spec.lastIndexOf(':');
  if (i <= 0 || existsSync(spec)) return { path: spec };
  const path = spec.slice(0, i);
  const part = spec.slice(i + 1);
  if (part.length === 0 || part.includes('/')) return { path: spec };
  return { path, part };
}

function needFormat(path: string): InputFormat {
  const f = formatOf(path);
  if (!f) throw new UserError(`${path}: unknown file format; supported: ${FORMAT_HELP}`);
  return f;
}

/** Opens a matrix of vectors. In an HDF5 file, `role` picks the ann-benchmarks dataset. */
export async function openVectors(spec: string, role: 'base' | 'queries' = 'base'): Promise<MatrixReader> {
  const { path, part } = parseInputSpec(spec);
  const format = needFormat(path);
  switch (format) {
    case 'fvecs':
    case 'bvecs':
    case 'ivecs':
      return openTexmex(path, format);
    case 'npy':
      return openNpy(path);
    case 'hdf5':
      return openHdf5(path, part ?? (role === 'base' ? 'train' : 'test'));
    case 'parquet':
      return openParquet(path, part);
    case 'idx':
      return openIdx(path);
  }
}

/** Opens a matrix of neighbour ids (ground truth): .ivecs, an integer .npy, or HDF5 `neighbors`. */
export async function openIds(spec: string): Promise<MatrixReader> {
  const { path, part } = parseInputSpec(spec);
  const format = needFormat(path);
  if (format === 'hdf5') return openHdf5(path, part ?? 'neighbors');
  if (format === 'ivecs' || format === 'npy') return openVectors(spec);
  throw new UserError(`${path}: ground truth must be .ivecs, an integer .npy or an HDF5 file with a "neighbors" dataset`);
}

/** The metric an input file declares for itself (ann-benchmarks HDF5 `distance`), if any. */
export async function declaredMetric(spec: string): Promise<'ip' | 'cosine' | 'l2' | null> {
  const { path } = parseInputSpec(spec);
  if (formatOf(path) !== 'hdf5') return null;
  return (await hdf5Info(path)).metric;
}

/** Reads a whole (small) id matrix, e.g. a ground-truth file. */
export async function readAllIds(reader: MatrixReader, blockRows = 4096): Promise<Int32Array> {
  const out = new Int32Array(reader.rows * reader.dim);
  for (let r = 0; r < reader.rows; r += blockRows) {
    const c = Math.min(blockRows, reader.rows - r);
    out.set(await reader.readInts(r, c), r * reader.dim);
  }
  return out;
}
