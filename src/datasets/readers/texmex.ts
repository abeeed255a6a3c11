// The texmex formats (corpus-texmex.irisa.fr): every row is a little-endian int32 dimension
// followed by that many elements: float32 (.fvecs), uint8 (.bvecs) or int32 (.ivecs).
// Rows have a fixed size, so a row range is one positioned read.
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

const ELEMENT_OF: Record<string, ElementType> = { fvecs: 'float32', bvecs: 'uint8', ivecs: 'int32' };

/** A dimension above this is taken as a sign the file is not texmex at all. */
const MAX_DIM = 1 << 20;

export function openTexmex(path: string, kind: 'fvecs' | 'bvecs' | 'ivecs'): MatrixReader {
  const label = path;
  const element = ELEMENT_OF[kind];
  const fd = openInput(path);
  try {
    const size = fstatSync(fd).size;
    if (size === 0) throw inputError(label, 'is empty', 'export the vectors again');
    const head = new Uint8Array(4);
    readExact(fd, label, head, 0);
    const dim = new DataView(head.buffer).getInt32(0, true);
    if (dim <= 0 || dim > MAX_DIM)
      throw inputError(
        label,
        `starts with dimension ${dim}, which no .${kind} file has`,
        `check that it is a .${kind} file (little-endian int32 dimension before each row)`,
      );
    const rowBytes = 4 + dim * ELEMENT_BYTES[element];
    if (size % rowBytes !== 0) {
      throw inputError(
        label,
        `has ${size} bytes, not a whole number of ${rowBytes}-byte rows of dimension ${dim} (${Math.floor(size / rowBytes)} rows and ${size % rowBytes} bytes over)`,
        FIX_TRUNCATED,
      );
    }
    const rows = size / rowBytes;
    const read = (from: number, count: number): Uint8Array => {
      checkRange({ label, rows }, from, count);
      const buf = new Uint8Array(count * rowBytes);
      readExact(fd, label, buf, from * rowBytes);
      // Pack the elements, checking every row's own dimension header on the way.
      const packed = new Uint8Array(count * dim * ELEMENT_BYTES[element]);
      const dv = new DataView(buf.buffer);
      for (let r = 0; r < count; r++) {
        const d = dv.getInt32(r * rowBytes, true);
        if (d !== dim) throw inputError(label, `row ${from + r} says dimension ${d}, the file starts with ${dim}`, FIX_TRUNCATED);
        packed.set(buf.subarray(r * rowBytes + 4, (r + 1) * rowBytes), r * (rowBytes - 4));
      }
      return packed;
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
