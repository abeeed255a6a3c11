// NumPy .npy (format versions 1-3): a magic string, a small Python-literal header with the
// dtype, the memory order and the shape, then the raw C-order array. The data is fixed-size,
// so a row range is one positioned read.
import { fstatSync } from 'node:fs';
import {
  ELEMENT_BYTES,
  FIX_TRUNCATED,
  checkRange,
  closeQuietly,
  inputError,
  openInput,
  readExact,
  toFloats,
  toInts,
  type ElementType,
  type MatrixReader,
} from './common.ts';

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

const DTYPES: Record<string, ElementType> = {
  f4: 'float32',
  f2: 'float16',
  f8: 'float64',
  u1: 'uint8',
  i1: 'int8',
  i4: 'int32',
  i8: 'int64',
};

interface NpyHeader {
  element: ElementType;
  shape: number[];
  dataOffset: number;
}

function parseNpyHeader(fd: number, label: string, size: number): NpyHeader {
  if (size < 10) throw inputError(label, `has only ${size} bytes, too few for a .npy header`, FIX_TRUNCATED);
  const pre = new Uint8Array(12);
  readExact(fd, label, pre.subarray(0, Math.min(12, size)), 0);
  if (!MAGIC.every((b, i) => pre[i] === b))
    throw inputError(label, 'does not start with the .npy magic string', 'save the array with numpy.save (or pass a file of another supported format)');
  const major = pre[6];
  const dv = new DataView(pre.buffer);
  let headerLen: number;
  let headerStart: number;
  if (major === 1) {
    headerLen = dv.getUint16(8, true);
    headerStart = 10;
  } else if (major === 2 || major === 3) {
    headerLen = dv.getUint32(8, true);
    headerStart = 12;
  } else {
    throw inputError(label, `is .npy format version ${major}, which vecbench does not know`, 'save it with numpy.save from numpy >= 1.0');
  }
  if (headerStart + headerLen > size) throw inputError(label, 'ends inside its header', FIX_TRUNCATED);
  const hbuf = new Uint8Array(headerLen);
  readExact(fd, label, hbuf, headerStart);
  const header = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(hbuf);
  const descr = /['"]descr['"]\s*:\s*['"]([<>|=])?([a-zA-Z]\d+)['"]/.exec(header);
  const fortran = /['"]fortran_order['"]\s*:\s*(True|False)/.exec(header);
  const shapeM = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shapeM) throw inputError(label, `has a header vecbench cannot parse (${header.trim().slice(0, 80)})`, FIX_TRUNCATED);
  if (descr[1] === '>') throw inputError(label, `is big-endian (${descr[1]}${descr[2]})`, "convert it with array.astype('<f4') and save again");
  const element = DTYPES[descr[2]];
  if (!element)
    throw inputError(label, `has dtype ${descr[2]}`, 'supported dtypes are float32, float16, float64, uint8, int8, int32, int64: convert with array.astype');
  if (fortran[1] === 'True') throw inputError(label, 'is stored in Fortran (column-major) order', 'save numpy.ascontiguousarray(array) instead');
  const shape = shapeM[1]
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map(Number);
  if (shape.some((x) => !Number.isInteger(x) || x < 0)) throw inputError(label, `has a bad shape (${shapeM[1]})`, FIX_TRUNCATED);
  return { element, shape, dataOffset: headerStart + headerLen };
}

export function openNpy(path: string): MatrixReader {
  const label = path;
  const fd = openInput(path);
  try {
    const size = fstatSync(fd).size;
    const { element, shape, dataOffset } = parseNpyHeader(fd, label, size);
    if (shape.length !== 2)
      throw inputError(label, `has shape (${shape.join(', ')}), expected 2-D (rows, dimension)`, 'reshape it to (rows, dimension) and save again');
    const [rows, dim] = shape;
    if (rows === 0 || dim === 0) throw inputError(label, `is empty (shape ${rows} x ${dim})`, 'export the vectors again');
    const rowBytes = dim * ELEMENT_BYTES[element];
    const expected = dataOffset + rows * rowBytes;
    if (size !== expected) {
      throw inputError(label, `has ${size} bytes, its header promises ${expected} (${rows} x ${dim} ${element})`, FIX_TRUNCATED);
    }
    const read = (from: number, count: number): Uint8Array => {
      checkRange({ label, rows }, from, count);
      const buf = new Uint8Array(count * rowBytes);
      readExact(fd, label, buf, dataOffset + from * rowBytes);
      return buf;
    };
    return {
      label,
      rows,
      dim,
      element,
      readFloats: async (from, count) => toFloats(read(from, count), element, count * dim),
      readInts: async (from, count) => toInts(read(from, count), element, count * dim, label),
      close: async () => closeQuietly(fd),
    };
  } catch (e) {
    closeQuietly(fd);
    throw e;
  }
}

/** A headerless little-endian float32 matrix (e.g. a package's embeddings.bin) whose
 * dimension comes from elsewhere (its metadata). */
export function openRawFloat32(path: string, dim: number): MatrixReader {
  const label = path;
  const fd = openInput(path);
  try {
    const size = fstatSync(fd).size;
    const rowBytes = dim * 4;
    if (size === 0 || size % rowBytes !== 0) {
      throw inputError(label, `has ${size} bytes, not a whole number of ${dim}-d float32 rows`, FIX_TRUNCATED);
    }
    const rows = size / rowBytes;
    const read = (from: number, count: number): Uint8Array => {
      checkRange({ label, rows }, from, count);
      const buf = new Uint8Array(count * rowBytes);
      readExact(fd, label, buf, from * rowBytes);
      return buf;
    };
    return {
      label,
      rows,
      dim,
      element: 'float32',
      readFloats: async (from, count) => toFloats(read(from, count), 'float32', count * dim),
      readInts: async () => {
        throw inputError(label, 'holds float32 vectors, not neighbour ids', 'pass ground truth as .ivecs, .npy or HDF5');
      },
      close: async () => closeQuietly(fd),
    };
  } catch (e) {
    closeQuietly(fd);
    throw e;
  }
}
