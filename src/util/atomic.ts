import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { diskFullError } from './errors.ts';
import { redactValue } from './redact.ts';

/** Writes all of buf at the descriptor's position (writeSync may write less than asked), then
 * fsyncs: on return the bytes are on the disk. */
export function writeAllDurable(fd: number, buf: Uint8Array): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  fsyncSync(fd);
}

/** Writes a file so that readers see either the old or the whole new content, never a part:
 * write a temp file beside it, fsync, rename over, fsync the directory. A full disk leaves the
 * old file as it was, removes the temp file and throws one UserError line naming the file. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.tmp`);
  try {
    mkdirSync(dir, { recursive: true });
    const fd = openSync(tmp, 'w');
    try {
      const buf = typeof data === 'string' ? Buffer.from(data) : data;
      faultNoSpace(path);
      writeAllDurable(fd, buf);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    rmSync(tmp, { force: true });
    throw diskFullError(e, path) ?? e;
  }
  faultPoint();
  renameSync(tmp, path);
  const dfd = openSync(dir, 'r');
  try {
    fsyncSync(dfd);
  } finally {
    closeSync(dfd);
  }
}

/** JSON files (results, manifests, indexes) never hold a credential: src/util/redact.ts. */
export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, `${JSON.stringify(redactValue(value), null, 1)}\n`);
}

let writes = 0;
/** Fault injection for the crash tests: VECBENCH_FAULT_WRITE=N makes the process SIGKILL
 * itself during its Nth atomic write, after the temp file is written and before the rename. */
function faultPoint(): void {
  const n = Number(process.env.VECBENCH_FAULT_WRITE ?? 0);
  if (n > 0 && ++writes === n) process.kill(process.pid, 'SIGKILL');
}

/** Fault injection for machines where a test cannot mount a small tmpfs: VECBENCH_FAULT_ENOSPC=S
 * makes every atomic write of a path containing S fail as a full disk does (ENOSPC). */
function faultNoSpace(path: string): void {
  const s = process.env.VECBENCH_FAULT_ENOSPC;
  if (s && path.includes(s)) throw Object.assign(new Error(`ENOSPC: no space left on device, write (simulated)`), { code: 'ENOSPC', syscall: 'write' });
}
