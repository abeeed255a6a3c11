// Exclusive locks (docs/runs.md, "Locks"): one vecbench at a time writes a results
// directory or prepares a dataset. A lock is a small JSON file naming its holder (PID, the
// PID's start time, the command, since when). It appears whole or not at all: it is written
// beside its place and hard-linked there, which fails if a lock exists. A lock whose holder
// no longer runs (or whose PID now belongs to a later process) is taken over with a note.
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmdirSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { atExit } from './at-exit.ts';
import { UserError, diskFullError } from './errors.ts';
import { log } from './progress.ts';
import { isSameProcessRunning, startTicks } from './proc.ts';
import { redact } from './redact.ts';

export const LOCK_FORMAT = 'vecbench-lock/1';

interface LockHolder {
  pid: number;
  /** Start time of the PID in clock ticks after boot (/proc/PID/stat field 22). */
  start: number | null;
  command: string;
  since: string;
}

export interface HeldLock {
  readonly path: string;
  /** Removes the lock (when this process took it as often as it releases it). */
  release(): void;
}

interface Entry {
  count: number;
  content: string;
  /** The first directory that taking the lock created: removed again if left empty. */
  createdDir: string | undefined;
  cancelExit: () => void;
}

const held = new Map<string, Entry>();

/** What another user of the lock sees as "the command": the secrets of the arguments masked. */
function currentCommand(): string {
  const args = process.argv.slice(2).map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a));
  const text = redact(['vecbench', ...args].join(' '));
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

function parseHolder(raw: string): LockHolder | null {
  try {
    const v = JSON.parse(raw) as Record<string, unknown>;
    if (v.format !== LOCK_FORMAT || !Number.isInteger(v.pid) || (v.start !== null && !Number.isInteger(v.start))) return null;
    return { pid: v.pid as number, start: v.start as number | null, command: String(v.command ?? '?'), since: String(v.since ?? '?') };
  } catch {
    return null;
  }
}

/** The lock file's text, or null when there is none. */
function readRaw(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

export function describeHolder(h: LockHolder): string {
  return `pid ${h.pid} (${h.command}) since ${h.since}`;
}

/** The holder of the lock at path if it is a process that still runs, else null: for readers
 * that must not use what a holder is rewriting, without taking the lock themselves. */
export function liveHolder(path: string): LockHolder | null {
  const raw = readRaw(path);
  const h = raw === null ? null : parseHolder(raw);
  return h && isSameProcessRunning(h.pid, h.start) && !held.has(path) ? h : null;
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function writeSynced(path: string, content: string): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Puts the lock in place unless one exists: link(2) of the written file; where the file
 * system has no hard links, an O_EXCL create (readers wait out its moment of emptiness). */
function place(tmp: string, path: string, content: string): boolean {
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw e;
  }
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Moves a stale lock aside and removes it, unless another process replaced it in between
 * (then that process's lock goes back). */
function removeStale(path: string, staleRaw: string): boolean {
  const aside = `${path}.stale-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
  const moved = readFileSync(aside, 'utf8');
  if (moved !== staleRaw) {
    try {
      linkSync(aside, path);
    } catch {
      // A third process took the place meanwhile: it holds the lock now.
    }
    unlinkSync(aside);
    return false;
  }
  unlinkSync(aside);
  return true;
}

function removeIfOurs(path: string, entry: Entry): void {
  if (readRaw(path) === entry.content) unlinkSync(path);
  // Leave no empty directory behind that only the lock made (a refused command writes nothing).
  if (entry.createdDir === undefined) return;
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      return;
    }
    if (relative(entry.createdDir, dir) === '') return;
  }
}

interface LockOptions {
  /** What the lock guards, for messages: "results directory /r". */
  what: string;
  /** What the holder does to it (default "is in use by"). */
  busy?: string;
  /** The way out besides waiting: "or pass another --out". */
  fix: string;
}

/** Takes the lock at path, or throws one UserError line naming its holder: "<what> is in use
 * by pid ... since ...; wait for it to finish (or stop it), <fix>". Released by release() and,
 * at the latest, when the process exits. Taking a lock this process holds counts it again. */
export function acquireLock(path: string, opts: LockOptions): HeldLock {
  const handle: HeldLock = { path, release: () => releaseLock(path) };
  const mine = held.get(path);
  if (mine) {
    mine.count++;
    return handle;
  }
  const createdDir = mkdirSync(dirname(path), { recursive: true });
  const holder: LockHolder = {
    pid: process.pid,
    start: startTicks(process.pid),
    command: currentCommand(),
    since: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
  const content = `${JSON.stringify({ format: LOCK_FORMAT, ...holder })}\n`;
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeSynced(tmp, content);
  } catch (e) {
    removeQuietly(tmp);
    if (!diskFullError(e, tmp)) throw e;
    // No room for 200 bytes: the command's own first write will fail on the full disk and
    // name its file (docs/runs.md, "Bad input"), so only a live holder is refused here.
    const other = liveHolder(path);
    if (other) throw refusal(opts, other);
    log(`note: ${opts.what}: no room on the disk for the lock ${path}; going on without it`);
    return { path, release: () => {} };
  }
  try {
    for (let attempt = 0; attempt < 20; attempt++) {
      if (place(tmp, path, content)) {
        const entry: Entry = { count: 1, content, createdDir, cancelExit: () => {} };
        entry.cancelExit = atExit(() => removeIfOurs(path, entry));
        held.set(path, entry);
        return handle;
      }
      const raw = readRaw(path);
      if (raw === null) continue;
      const other = parseHolder(raw);
      if (other === null && attempt < 5) {
        // Possibly an O_EXCL lock between its create and its write.
        sleepMs(50);
        continue;
      }
      if (other && isSameProcessRunning(other.pid, other.start)) throw refusal(opts, other);
      if (removeStale(path, raw)) {
        const whose = other ? `of ${describeHolder(other)}, which no longer runs` : 'that cannot be read';
        log(`note: ${opts.what}: took over the stale lock ${path} ${whose}`);
      }
    }
    throw new UserError(`${opts.what}: could not take the lock ${path}, other processes keep taking it; run again`);
  } finally {
    removeQuietly(tmp);
  }
}

function refusal(opts: LockOptions, holder: LockHolder): UserError {
  return new UserError(`${opts.what} ${opts.busy ?? 'is in use by'} ${describeHolder(holder)}; wait for it to finish (or stop it), ${opts.fix}`);
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

function releaseLock(path: string): void {
  const entry = held.get(path);
  if (!entry || --entry.count > 0) return;
  held.delete(path);
  entry.cancelExit();
  removeIfOurs(path, entry);
}
