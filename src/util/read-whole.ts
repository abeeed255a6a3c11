// A whole file read into an ArrayBuffer of its own, in chunks: typed arrays over it are aligned,
// engines that wrap a typed array read from the start of its buffer, and one read stops at
// 2 GiB where a disk-tier set's vectors are 3 GB.
import { closeSync, openSync, readSync } from 'node:fs';

/** The most one read asks for. */
const CHUNK_BYTES = 1 << 28;

/** The first `size` bytes of `path` in a new buffer, and how many were there (fewer: the file
 * ended early). */
export function readWhole(path: string, size: number): { buffer: ArrayBuffer; read: number } {
  const buffer = new ArrayBuffer(size);
  const bytes = new Uint8Array(buffer);
  const fd = openSync(path, 'r');
  let at = 0;
  try {
    for (let n = 1; at < size && n > 0; at += n) n = readSync(fd, bytes, at, Math.min(CHUNK_BYTES, size - at), at);
  } finally {
    closeSync(fd);
  }
  return { buffer, read: at };
}
