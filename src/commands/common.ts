// Shared option parsing for the command modules.
import { InvalidArgumentError } from 'commander';
import { join, relative, resolve, isAbsolute } from 'node:path';
import { acquireLock, type HeldLock } from '../util/lock.ts';

export const dataDir = (o: { data?: string }) => resolve(o.data ?? process.env.VECBENCH_DATA ?? '.vecbench/data');
export const outDir = (o: { out?: string }) => resolve(o.out ?? 'results');

/** The lock of a results directory (docs/runs.md, "Locks"). */
export const OUT_LOCK_FILE = '.vecbench.lock';

/** Every command that writes into --out holds its lock until it exits: one writer at a time.
 * Commands that only read it take none. */
export function lockOutDir(out: string): HeldLock {
  return acquireLock(join(out, OUT_LOCK_FILE), { what: `results directory ${out}`, fix: 'or pass another --out' });
}

/** Whether path is dir or lies inside it. */
export function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export function positiveInt(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive integer`);
    return n;
  };
}

export function list(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
