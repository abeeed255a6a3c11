// What a prepare holds while it runs (docs/runs.md, "Locks"): the dataset's lock in the
// data directory, so one prepare per dataset runs at a time, and its temporary directory
// `<name>.tmp-<pid>`, removed on every way out (an error, SIGINT / SIGTERM) and, when a
// process died without removing it (SIGKILL, a power cut), by the next prepare.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { atExit } from '../util/at-exit.ts';
import { UserError } from '../util/errors.ts';
import { acquireLock, describeHolder, liveHolder } from '../util/lock.ts';
import { isRunning, startedAtMs } from '../util/proc.ts';

export function datasetLockPath(dataDir: string, name: string): string {
  return join(dataDir, `${name}.lock`);
}

/** Runs body holding the lock of dataset name in dataDir; refused in one line when another
 * vecbench prepares it. */
export async function whilePreparing<T>(dataDir: string, name: string, body: () => Promise<T>): Promise<T> {
  const lock = acquireLock(datasetLockPath(dataDir, name), {
    what: `dataset ${name} in ${dataDir}`,
    busy: 'is being prepared by',
    fix: 'or use another --data directory',
  });
  try {
    return await body();
  } finally {
    lock.release();
  }
}

/** For users of a prepared set: refuses while another vecbench prepares it again (--force),
 * as its files are being replaced. Takes no lock, so readers never block each other. */
export function refuseWhileBeingPrepared(dataDir: string, name: string): void {
  const holder = liveHolder(datasetLockPath(dataDir, name));
  if (holder)
    throw new UserError(
      `dataset ${name} in ${dataDir} is being prepared by ${describeHolder(holder)}; wait for it to finish (or stop it), or use another --data directory`,
    );
}

/** Clock error of a process start time from /proc (whole-second boot time, 10 ms ticks). */
const START_SLACK_MS = 2000;

/** Whether the process that made a `<name>.tmp-<pid>` directory still runs: its PID runs and
 * started before the directory was last written (a PID handed out again starts later). */
function ownerRuns(pid: number, dir: string): boolean {
  if (!isRunning(pid)) return false;
  const started = startedAtMs(pid);
  return started === null || started <= statSync(dir).mtimeMs + START_SLACK_MS;
}

/** Removes temporary directories of prepares of this dataset whose process is gone; refuses
 * to race one whose process still runs. */
export function clearStalePrepares(dataDir: string, name: string): void {
  if (!existsSync(dataDir)) return;
  const prefix = `${name}.tmp-`;
  for (const entry of readdirSync(dataDir)) {
    if (!entry.startsWith(prefix) || !/^\d+$/.test(entry.slice(prefix.length))) continue;
    const pid = Number(entry.slice(prefix.length));
    const dir = join(dataDir, entry);
    if (pid !== process.pid && ownerRuns(pid, dir)) {
      throw new UserError(`dataset ${name} is being prepared by another vecbench (pid ${pid}) in ${dir}; wait for it to finish (or stop it) and prepare again`);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A prepare's temporary directory beside its final one: removed by discard(), or when the
 * process exits before publish() renamed it into place. */
export class TempDatasetDir {
  readonly path: string;
  private readonly cancelExit: () => void;

  constructor(readonly finalDir: string) {
    this.path = `${finalDir}.tmp-${process.pid}`;
    rmSync(this.path, { recursive: true, force: true });
    mkdirSync(this.path, { recursive: true });
    this.cancelExit = atExit(() => rmSync(this.path, { recursive: true, force: true }));
  }

  /** Replaces the final directory with this one. */
  publish(): void {
    rmSync(this.finalDir, { recursive: true, force: true });
    renameSync(this.path, this.finalDir);
    this.cancelExit();
  }

  discard(): void {
    rmSync(this.path, { recursive: true, force: true });
    this.cancelExit();
  }
}
