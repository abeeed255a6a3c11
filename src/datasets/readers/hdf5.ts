// HDF5 in the ann-benchmarks layout (`train`, `test`, `neighbors`, `distances`, and a root
// attribute `distance`: angular / euclidean / dot), read with h5wasm (HDF5's own C library in
// WebAssembly). h5wasm's Node build reads the host file system directly, and a row range is a
// hyperslab read, so memory stays bounded by the block asked for, not by the file.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError } from '../../util/errors.ts';
import { FIX_TRUNCATED, checkRange, inputError, type ElementType, type MatrixReader } from './common.ts';

type H5 = typeof import('h5wasm/node');
type H5File = InstanceType<H5['File']>;
type H5Dataset = InstanceType<H5['Dataset']>;

let h5: Promise<H5> | null = null;

/** Loads h5wasm once, with HDF5's error stack turned into thrown errors (not stderr noise). */
async function loadH5(): Promise<H5> {
  h5 ??= (async () => {
    const mod = await import('h5wasm/node');
    const Module = await mod.ready;
    Module.activate_throwing_error_handler();
    return mod;
  })();
  return h5;
}

/** The most specific line of an HDF5 error stack, e.g. "truncated file: eof = 2000, ...". */
function hdf5Reason(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  const lines = msg
    .split('\n')
    .map((l) => /#\d+: .*? in [A-Za-z0-9_]+\(\): (.*)$/.exec(l)?.[1])
    .filter((x): x is string => !!x);
  return (lines[lines.length - 1] ?? msg.split('\n')[0]).trim();
}

/** The ann-benchmarks `distance` attribute as a vecbench metric, when the file has one. */
type Hdf5Metric = 'cosine' | 'l2' | 'ip' | null;

interface Hdf5Info {
  datasets: string[];
  metric: Hdf5Metric;
  /** The raw `distance` attribute. */
  distance: string | null;
}

function elementOf(label: string, ds: H5Dataset): ElementType {
  const m = ds.metadata as { type: number; size: number; signed: boolean };
  // h5wasm type codes: 0 integer, 1 float.
  if (m.type === 1 && m.size === 4) return 'float32';
  if (m.type === 1 && m.size === 8) return 'float64';
  if (m.type === 1 && m.size === 2) return 'float16';
  if (m.type === 0 && m.size === 4) return 'int32';
  if (m.type === 0 && m.size === 8) return 'int64';
  if (m.type === 0 && m.size === 1) return m.signed ? 'int8' : 'uint8';
  throw inputError(label, `holds HDF5 type ${String(ds.dtype)} (${m.size} bytes)`, 'store vectors as float32/float64/uint8 and ids as int32/int64');
}

function openFile(mod: H5, path: string): H5File {
  if (!existsSync(path)) throw new UserError(`${path}: no such file; check the path`);
  try {
    return new mod.File(resolve(path), 'r');
  } catch (e) {
    throw inputError(path, `is not a readable HDF5 file (${hdf5Reason(e)})`, FIX_TRUNCATED);
  }
}

function metricOf(distance: string | null): Hdf5Metric {
  if (distance === null) return null;
  const d = distance.toLowerCase();
  if (d === 'angular' || d === 'cosine') return 'cosine';
  if (d === 'euclidean' || d === 'l2') return 'l2';
  if (d === 'dot' || d === 'ip' || d === 'inner_product') return 'ip';
  return null;
}

export async function hdf5Info(path: string): Promise<Hdf5Info> {
  const mod = await loadH5();
  const f = openFile(mod, path);
  try {
    const attr = f.attrs.distance;
    const distance = attr ? String(attr.value) : null;
    return { datasets: f.keys(), metric: metricOf(distance), distance };
  } finally {
    f.close();
  }
}

/** Opens one 2-D dataset of an HDF5 file (`train`, `test` or `neighbors` in ann-benchmarks files). */
export async function openHdf5(path: string, datasetName: string): Promise<MatrixReader> {
  const mod = await loadH5();
  const label = `${path}:${datasetName}`;
  const f = openFile(mod, path);
  try {
    let entity: ReturnType<H5File['get']>;
    try {
      entity = f.get(datasetName);
    } catch (e) {
      throw inputError(label, `cannot be opened (${hdf5Reason(e)})`, FIX_TRUNCATED);
    }
    if (!entity || !(entity instanceof mod.Dataset)) {
      throw inputError(path, `has no dataset "${datasetName}" (it has: ${f.keys().join(', ') || 'nothing'})`, `name one with ${path}:<dataset>`);
    }
    const ds = entity;
    const shape = ds.shape ?? [];
    if (shape.length !== 2) throw inputError(label, `has shape (${shape.join(', ')}), expected 2-D (rows, dimension)`, 'store it as a 2-D dataset');
    const [rows, dim] = shape;
    if (rows === 0 || dim === 0) throw inputError(label, `is empty (shape ${rows} x ${dim})`, 'export the vectors again');
    const element = elementOf(label, ds);
    const slice = (from: number, count: number) => {
      checkRange({ label, rows }, from, count);
      let data: unknown;
      try {
        data = ds.slice([[from, from + count], []]);
      } catch (e) {
        throw inputError(label, `rows ${from}..${from + count} cannot be read (${hdf5Reason(e)})`, FIX_TRUNCATED);
      }
      if (!ArrayBuffer.isView(data) || (data as unknown as ArrayLike<unknown>).length !== count * dim) {
        throw inputError(label, `rows ${from}..${from + count} came back with the wrong size`, FIX_TRUNCATED);
      }
      return data as unknown as ArrayLike<number | bigint>;
    };
    return {
      label,
      rows,
      dim,
      element,
      readFloats: async (from, count) => {
        const data = slice(from, count);
        if (data instanceof Float32Array) return data;
        const out = new Float32Array(count * dim);
        for (let i = 0; i < out.length; i++) out[i] = Number(data[i]);
        return out;
      },
      readInts: async (from, count) => {
        if (element.startsWith('float')) {
          throw inputError(label, `holds ${element} values, not integer ids`, 'pass the "neighbors" dataset of an ann-benchmarks file');
        }
        const data = slice(from, count);
        if (data instanceof Int32Array) return data;
        const out = new Int32Array(count * dim);
        for (let i = 0; i < out.length; i++) {
          const v = data[i];
          if (typeof v === 'bigint' && (v > 2147483647n || v < -2147483648n))
            throw inputError(label, `id ${v} does not fit in int32`, 'row ids must be below 2^31');
          out[i] = Number(v);
        }
        return out;
      },
      close: async () => {
        f.close();
      },
    };
  } catch (e) {
    f.close();
    throw e;
  }
}
