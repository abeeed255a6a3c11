// Files in which in-process adapters keep what their engine's own index file does not hold
// (attribute columns, live / deleted flags, a flat vector array), so that a closed session can
// be opened again from its work directory without ingest (Participant.reopen).
//
// Writes go to a temporary file renamed into place, so a reader never sees half a file. They
// do not use src/util/atomic.ts on purpose: its fault hook (VECBENCH_FAULT_WRITE) is for the
// runner's result files and would kill an engine host that inherited the variable.
import { closeSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';

type Column = Int32Array | Uint8Array | Float32Array;

const FORMAT = 'vecbench-columns/1';
const TYPES = { i32: Int32Array, u8: Uint8Array, f32: Float32Array } as const;
type TypeName = keyof typeof TYPES;
/** Bytes written per write call: a 4 GB vector file goes out in bounded pieces. */
const CHUNK = 1 << 26;

function typeName(c: Column): TypeName {
  if (c instanceof Int32Array) return 'i32';
  if (c instanceof Uint8Array) return 'u8';
  return 'f32';
}

const pad8 = (n: number) => (n + 7) & ~7;

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, Math.min(CHUNK, bytes.length - off));
}

function readAll(fd: number, into: Uint8Array, position: number, path: string): void {
  for (let off = 0; off < into.length; ) {
    const got = readSync(fd, into, off, Math.min(CHUNK, into.length - off), position + off);
    if (got === 0) throw new Error(`${path}: the file ends ${into.length - off} bytes early`);
    off += got;
  }
}

const bytesOf = (c: Column) => new Uint8Array(c.buffer, c.byteOffset, c.byteLength);

/** Writes `path` through a temporary file renamed over it. */
function replaceFile(path: string, write: (fd: number) => void): void {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    write(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
}

/**
 * Named typed-array columns (any lengths) and a small JSON `meta` in one file: a 4-byte
 * little-endian header length, the JSON header, then each column's bytes, 8-byte aligned.
 */
export function writeColumns(path: string, meta: Record<string, unknown>, columns: Record<string, Column>): void {
  const list = Object.entries(columns).map(([name, c]) => ({ name, type: typeName(c), length: c.length }));
  const header = Buffer.from(JSON.stringify({ format: FORMAT, meta, columns: list }));
  const head = Buffer.alloc(pad8(4 + header.length));
  head.writeUInt32LE(header.length, 0);
  header.copy(head, 4);
  replaceFile(path, (fd) => {
    writeAll(fd, head);
    for (const c of Object.values(columns)) {
      writeAll(fd, bytesOf(c));
      const pad = pad8(c.byteLength) - c.byteLength;
      if (pad > 0) writeAll(fd, new Uint8Array(pad));
    }
  });
}

/** Reads a file written by writeColumns; every column is a fresh, aligned typed array. */
export function readColumns(path: string): { meta: Record<string, unknown>; columns: Record<string, Column> } {
  const fd = openSync(path, 'r');
  try {
    const lenBuf = new Uint8Array(4);
    readAll(fd, lenBuf, 0, path);
    const headerLength = Buffer.from(lenBuf).readUInt32LE(0);
    const headerBytes = new Uint8Array(headerLength);
    readAll(fd, headerBytes, 4, path);
    const header = JSON.parse(Buffer.from(headerBytes).toString('utf8')) as {
      format?: string;
      meta: Record<string, unknown>;
      columns: { name: string; type: TypeName; length: number }[];
    };
    if (header.format !== FORMAT) throw new Error(`${path}: not a ${FORMAT} file (format ${JSON.stringify(header.format)})`);
    let pos = pad8(4 + headerLength);
    const columns: Record<string, Column> = {};
    for (const c of header.columns) {
      const Type = TYPES[c.type];
      if (!Type) throw new Error(`${path}: column ${c.name} has unknown type ${c.type}`);
      const col = new Type(c.length);
      readAll(fd, bytesOf(col), pos, path);
      pos += pad8(col.byteLength);
      columns[c.name] = col;
    }
    if (pos !== statSync(path).size) throw new Error(`${path}: ${statSync(path).size} bytes, the header describes ${pos}`);
    return { meta: header.meta, columns };
  } finally {
    closeSync(fd);
  }
}

/** A raw little-endian float32 file (no header), written through a temporary file. */
export function writeFloats(path: string, values: Float32Array): void {
  replaceFile(path, (fd) => writeAll(fd, bytesOf(values)));
}

/** Reads `count` float32 values from a raw file written by writeFloats; its size must match. */
export function readFloats(path: string, count: number): Float32Array {
  const size = statSync(path).size;
  if (size !== count * 4) throw new Error(`${path}: ${size} bytes, expected ${count} floats (${count * 4} bytes)`);
  const out = new Float32Array(count);
  const fd = openSync(path, 'r');
  try {
    readAll(fd, bytesOf(out), 0, path);
  } finally {
    closeSync(fd);
  }
  return out;
}

/** Sum of the sizes of existing files (missing ones count 0). */
export function fileBytes(...paths: string[]): number {
  let total = 0;
  for (const p of paths) {
    try {
      total += statSync(p).size;
    } catch {
      // not written yet
    }
  }
  return total;
}
