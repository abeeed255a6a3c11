import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';

/** Writes a file so that readers see either the old or the whole new content, never a part:
 * write a temp file beside it, fsync, rename over, fsync the directory. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w');
  try {
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  faultPoint();
  renameSync(tmp, path);
  const dfd = openSync(dir, 'r');
  try {
    fsyncSync(dfd);
  } finally {
    closeSync(dfd);
  }
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, JSON.stringify(value, null, 1) + '\n');
}

let writes = 0;
/** Fault injection for the crash tests: VECBENCH_FAULT_WRITE=N makes the process SIGKILL
 * itself during its Nth atomic write, after the temp file is written and before the rename. */
function faultPoint(): void {
  const n = Number(process.env.VECBENCH_FAULT_WRITE ?? 0);
  if (n > 0 && ++writes === n) process.kill(process.pid, 'SIGKILL');
}
