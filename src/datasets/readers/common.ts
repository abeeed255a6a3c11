// What every input-format reader offers: a matrix of `rows` x `dim` read in row ranges, so a
// caller can stream a file of any size with memory bounded by the block it asks for.
import { closeSync, openSync, readSync } from 'node:fs';
import { UserError } from '../../util/errors.ts';

/** Element types the readers understand (converted to float32 or int32 on read). */
export type ElementType = 'float32' | 'float16' | 'float64' | 'uint8' | 'int8' | 'int32' | 'int64';

export interface MatrixReader {
  /** The file (and the dataset / column inside it) being read, for messages. */
  readonly label: string;
  readonly rows: number;
  readonly dim: number;
  readonly element: ElementType;
  /** Rows [from, from + count) as float32, row-major. */
  readFloats(from: number, count: number): Promise<Float32Array>;
  /** Rows [from, from + count) as int32 (ground-truth ids); floats are refused. */
  readInts(from: number, count: number): Promise<Int32Array>;
  close(): Promise<void>;
}

/** One line naming the file, the problem and the fix. */
export function inputError(label: string, problem: string, fix: string): UserError {
  return new UserError(`${label}: ${problem}; ${fix}`);
}

export const FIX_TRUNCATED = 'the file is truncated or corrupt: download or export it again';

/** Reads exactly `length` bytes at `position`, or fails naming the file as truncated. */
export function readExact(fd: number, label: string, buf: Uint8Array, position: number): void {
  let off = 0;
  while (off < buf.length) {
    const got = readSync(fd, buf, off, buf.length - off, position + off);
    if (got === 0) throw inputError(label, `ends at byte ${position + off}, expected at least ${position + buf.length}`, FIX_TRUNCATED);
    off += got;
  }
}

export function openInput(path: string): number {
  try {
    return openSync(path, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UserError(`${path}: no such file; check the path`);
    if (code === 'EISDIR') throw new UserError(`${path}: is a directory, not a vector file; name the file itself`);
    throw new UserError(`${path}: cannot be read (${code ?? (e as Error).message}); check its permissions`);
  }
}

export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/** IEEE 754 half precision to single (numpy float16 files). */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** Converts little-endian raw elements to float32. */
export function toFloats(bytes: Uint8Array, element: ElementType, count: number): Float32Array {
  const out = new Float32Array(count);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (element) {
    case 'float32':
      for (let i = 0; i < count; i++) out[i] = dv.getFloat32(i * 4, true);
      break;
    case 'float64':
      for (let i = 0; i < count; i++) out[i] = dv.getFloat64(i * 8, true);
      break;
    case 'float16':
      for (let i = 0; i < count; i++) out[i] = halfToFloat(dv.getUint16(i * 2, true));
      break;
    case 'uint8':
      for (let i = 0; i < count; i++) out[i] = bytes[i];
      break;
    case 'int8':
      for (let i = 0; i < count; i++) out[i] = dv.getInt8(i);
      break;
    case 'int32':
      for (let i = 0; i < count; i++) out[i] = dv.getInt32(i * 4, true);
      break;
    case 'int64':
      for (let i = 0; i < count; i++) out[i] = Number(dv.getBigInt64(i * 8, true));
      break;
  }
  return out;
}

/** Converts little-endian raw integer elements to int32 (ids beyond int32 are refused). */
export function toInts(bytes: Uint8Array, element: ElementType, count: number, label: string): Int32Array {
  const out = new Int32Array(count);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (element === 'int32') {
    for (let i = 0; i < count; i++) out[i] = dv.getInt32(i * 4, true);
  } else if (element === 'int64') {
    for (let i = 0; i < count; i++) {
      const v = dv.getBigInt64(i * 8, true);
      if (v > 2147483647n || v < -2147483648n) throw inputError(label, `id ${v} does not fit in int32`, 'row ids must be below 2^31');
      out[i] = Number(v);
    }
  } else if (element === 'uint8') {
    for (let i = 0; i < count; i++) out[i] = bytes[i];
  } else {
    throw inputError(
      label,
      `holds ${element} values, not integer ids`,
      'pass a file of neighbour ids (.ivecs, an int32/int64 .npy, or an HDF5 "neighbors" dataset)',
    );
  }
  return out;
}

export const ELEMENT_BYTES: Record<ElementType, number> = { float32: 4, float16: 2, float64: 8, uint8: 1, int8: 1, int32: 4, int64: 8 };

/** Checks a requested row range against the matrix. */
export function checkRange(r: { label: string; rows: number }, from: number, count: number): void {
  if (!Number.isInteger(from) || !Number.isInteger(count) || from < 0 || count < 0 || from + count > r.rows) {
    throw new Error(`${r.label}: rows [${from}, ${from + count}) out of range 0..${r.rows}`);
  }
}
