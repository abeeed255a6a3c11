// IDX (the MNIST / Fashion-MNIST format), plain or gzip-compressed: a 4-byte magic (two zero
// bytes, an element type code, the number of dimensions), big-endian uint32 sizes, then the
// big-endian data. The first size is the row count; the rest multiply into the dimension
// (28 x 28 images are 784-d rows). A .gz file cannot be seeked, so it is decompressed as a
// stream and row ranges must be asked in order (asking backwards restarts the stream).
import { createReadStream, fstatSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
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

const TYPES: Record<number, ElementType | 'int16'> = { 0x08: 'uint8', 0x09: 'int8', 0x0b: 'int16', 0x0c: 'int32', 0x0d: 'float32', 0x0e: 'float64' };

/** Sequential byte source over a gzip stream, failing with one clear line when it ends early. */
class GunzipCursor {
  private iterator: AsyncIterator<Buffer>;
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Decompressed bytes handed out so far. */
  position = 0;
  constructor(
    private readonly path: string,
    private readonly label: string,
  ) {
    this.iterator = this.open();
  }

  private open(): AsyncIterator<Buffer> {
    const stream = createReadStream(this.path).pipe(createGunzip());
    return stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  async take(n: number): Promise<Uint8Array> {
    while (this.buffered < n) {
      let next: IteratorResult<Buffer>;
      try {
        next = await this.iterator.next();
      } catch (e) {
        const msg = (e as Error).message;
        throw inputError(this.label, `is not a whole gzip stream (${msg})`, FIX_TRUNCATED);
      }
      if (next.done)
        throw inputError(this.label, `ends after ${this.position + this.buffered} decompressed bytes, expected at least ${this.position + n}`, FIX_TRUNCATED);
      this.chunks.push(next.value);
      this.buffered += next.value.length;
    }
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const out = new Uint8Array(n);
    out.set(all.subarray(0, n));
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    this.position += n;
    return out;
  }

  async restart(): Promise<void> {
    await this.iterator.return?.();
    this.iterator = this.open();
    this.chunks = [];
    this.buffered = 0;
    this.position = 0;
  }

  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}

function isGzip(path: string): boolean {
  return /\.gz$/i.test(path);
}

/** Parses the magic and sizes; returns the element type, row count, dimension, header bytes. */
function parseHeader(label: string, head: Uint8Array, ndims: number) {
  const dv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const sizes: number[] = [];
  for (let i = 0; i < ndims; i++) sizes.push(dv.getUint32(4 + 4 * i, false));
  const rows = sizes[0];
  const dim = sizes.slice(1).reduce((a, b) => a * b, 1);
  if (rows === 0 || dim === 0) throw inputError(label, `is empty (sizes ${sizes.join(' x ')})`, 'export the data again');
  return { rows, dim, sizes };
}

function checkMagic(label: string, magic: Uint8Array): { type: ElementType | 'int16'; ndims: number } {
  const type = TYPES[magic[2]];
  const ndims = magic[3];
  if (magic[0] !== 0 || magic[1] !== 0 || !type || ndims < 1 || ndims > 8) {
    throw inputError(label, 'does not start with an IDX magic number (0x00 0x00 type ndims)', 'pass an IDX file such as train-images-idx3-ubyte(.gz)');
  }
  return { type, ndims };
}

/** Big-endian raw elements to little-endian bytes of the matching ElementType. */
function swapToLittle(bytes: Uint8Array, type: ElementType | 'int16'): { bytes: Uint8Array; element: ElementType } {
  if (type === 'uint8' || type === 'int8') return { bytes, element: type };
  const width = type === 'int16' ? 2 : ELEMENT_BYTES[type];
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i += width) for (let b = 0; b < width; b++) out[i + b] = bytes[i + width - 1 - b];
  if (type === 'int16') {
    // Widen to int32 so the shared converters apply.
    const src = new DataView(out.buffer);
    const wide = new Uint8Array((out.length / 2) * 4);
    const dst = new DataView(wide.buffer);
    for (let i = 0; i < out.length / 2; i++) dst.setInt32(i * 4, src.getInt16(i * 2, true), true);
    return { bytes: wide, element: 'int32' };
  }
  return { bytes: out, element: type };
}

export async function openIdx(path: string): Promise<MatrixReader> {
  const label = path;
  if (isGzip(path)) {
    closeQuietly(openInput(path)); // a clear error for a missing file before streaming
    const cursor = new GunzipCursor(path, label);
    try {
      const magic = await cursor.take(4);
      const { type, ndims } = checkMagic(label, magic);
      const sizesBytes = await cursor.take(4 * ndims);
      const head = new Uint8Array(4 + sizesBytes.length);
      head.set(magic);
      head.set(sizesBytes, 4);
      const { rows, dim } = parseHeader(label, head, ndims);
      const dataOffset = head.length;
      const width = type === 'int16' ? 2 : ELEMENT_BYTES[type];
      const read = async (from: number, count: number): Promise<{ bytes: Uint8Array; element: ElementType }> => {
        checkRange({ label, rows }, from, count);
        const at = dataOffset + from * dim * width;
        if (cursor.position > at) await cursor.restart();
        if (cursor.position < at) {
          // Skip forward in bounded steps.
          while (cursor.position < at) await cursor.take(Math.min(1 << 24, at - cursor.position));
        }
        return swapToLittle(await cursor.take(count * dim * width), type);
      };
      const element: ElementType = type === 'int16' ? 'int32' : type;
      return {
        label,
        rows,
        dim,
        element,
        readFloats: async (from, count) => {
          const r = await read(from, count);
          return toFloats(r.bytes, r.element, count * dim);
        },
        readInts: async (from, count) => {
          const r = await read(from, count);
          return toInts(r.bytes, r.element, count * dim, label);
        },
        close: () => cursor.close(),
      };
    } catch (e) {
      await cursor.close();
      throw e;
    }
  }
  const fd = openInput(path);
  try {
    const size = fstatSync(fd).size;
    if (size < 8) throw inputError(label, `has only ${size} bytes, too few for an IDX header`, FIX_TRUNCATED);
    const magic = new Uint8Array(4);
    readExact(fd, label, magic, 0);
    const { type, ndims } = checkMagic(label, magic);
    const head = new Uint8Array(4 + 4 * ndims);
    readExact(fd, label, head, 0);
    const { rows, dim, sizes } = parseHeader(label, head, ndims);
    const width = type === 'int16' ? 2 : ELEMENT_BYTES[type];
    const expected = head.length + rows * dim * width;
    if (size !== expected) throw inputError(label, `has ${size} bytes, its header promises ${expected} (${sizes.join(' x ')})`, FIX_TRUNCATED);
    const read = (from: number, count: number) => {
      checkRange({ label, rows }, from, count);
      const buf = new Uint8Array(count * dim * width);
      readExact(fd, label, buf, head.length + from * dim * width);
      return swapToLittle(buf, type);
    };
    const element: ElementType = type === 'int16' ? 'int32' : type;
    return {
      label,
      rows,
      dim,
      element,
      readFloats: async (from, count) => {
        const r = read(from, count);
        return toFloats(r.bytes, r.element, count * dim);
      },
      readInts: async (from, count) => {
        const r = read(from, count);
        return toInts(r.bytes, r.element, count * dim, label);
      },
      close: async () => closeQuietly(fd),
    };
  } catch (e) {
    closeQuietly(fd);
    throw e;
  }
}
