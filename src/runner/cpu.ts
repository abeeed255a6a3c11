// CPU time of processes from /proc/PID/stat (utime + stime, all threads), so a point can say how
// busy the engine and the client were while it ran. For a server the whole process tree counts
// (PostgreSQL runs a backend process per connection).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { processTree } from './resources.ts';

let ticksPerSecond: number | null = null;
function clockTicks(): number {
  if (ticksPerSecond === null) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const v = Number(r.stdout?.trim());
    ticksPerSecond = Number.isFinite(v) && v > 0 ? v : 100;
  }
  return ticksPerSecond;
}

/** CPU seconds (user + system) a process has used so far, or null when it is gone. */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are fields 14, 15.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / clockTicks();
  } catch {
    return null;
  }
}

/** CPU seconds of a process including its waited-for children (cutime + cstime). */
function processCpuWithChildren(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / clockTicks();
  } catch {
    return null;
  }
}

/** CPU seconds of a process tree: every live process's own time plus the time of children that
 * already exited and were reaped (a server's short-lived backends, e.g. a PostgreSQL connection
 * that closed, are counted in their parent's cutime). */
function treeCpuSeconds(root: number): number | null {
  if (processCpuSeconds(root) === null) return null;
  let sum = 0;
  for (const pid of processTree(root)) sum += processCpuWithChildren(pid) ?? 0;
  return sum;
}

interface CpuTarget {
  pid: number | undefined;
  /** Count the descendants too (a server's worker processes). */
  tree: boolean;
}

/** Measures the cores a process used over an interval: cpu seconds / wall seconds. */
export class CpuMeter {
  private readonly t0 = performance.now();
  private readonly c0: number | null;
  constructor(private readonly target: CpuTarget) {
    this.c0 = this.read();
  }

  private read(): number | null {
    const { pid, tree } = this.target;
    if (pid === undefined) return null;
    return tree ? treeCpuSeconds(pid) : processCpuSeconds(pid);
  }

  /** Cores used since construction (1.0 = one core busy all along), or null if unmeasurable.
   * Tick granularity is 10 ms: intervals shorter than ~1 s read coarsely. */
  cores(): number | null {
    const c1 = this.read();
    const wall = (performance.now() - this.t0) / 1000;
    if (this.c0 === null || c1 === null || wall <= 0) return null;
    return Math.max(0, c1 - this.c0) / wall;
  }
}

/** Per thread of a process: seconds it ran plus waited on a run queue, runnable but not running
 * (/proc/PID/task/TID/schedstat). Null when schedstat is unavailable or the process is gone. */
function threadDemandSeconds(pid: number): Map<string, number> | null {
  try {
    const out = new Map<string, number>();
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        out.set(tid, (run + wait) / 1e9);
      } catch {
        /* the thread ended meanwhile */
      }
    }
    return out;
  } catch {
    return null;
  }
}

/**
 * How busy a client's busiest thread was over an interval: (run + run-queue wait) / wall time.
 * An event-loop thread at 1.0 never waited for I/O: it is the limit, whether it spent the time
 * running or waiting for a core that other work on the machine held (its CPU time alone would
 * understate that on a busy machine). Summing over threads would not do: every thread that
 * wakes briefly also queues.
 */
export class DemandMeter {
  private readonly t0 = performance.now();
  private readonly d0: Map<string, number> | null;
  constructor(private readonly pid: number | undefined) {
    this.d0 = pid === undefined ? null : threadDemandSeconds(pid);
  }

  /** The busiest thread's fraction (0..1), or null if unmeasurable. */
  busiestThread(): number | null {
    if (this.pid === undefined || this.d0 === null) return null;
    const d1 = threadDemandSeconds(this.pid);
    const wall = (performance.now() - this.t0) / 1000;
    if (d1 === null || wall <= 0) return null;
    let max = 0;
    for (const [tid, v] of d1) max = Math.max(max, (v - (this.d0.get(tid) ?? 0)) / wall);
    return Math.min(1, max);
  }
}
