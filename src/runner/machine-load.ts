// Whether the machine was busy with processes outside the benchmark while a point ran. A
// latency or throughput measured while something else held a core is not the engine's number,
// so the runner must not let such a point set a table cell silently.
//
// The machine-wide CPU time comes from /proc/stat's aggregate "cpu" line; "ours" is the CPU time
// of the benchmark's own process trees (the runner, and a server that daemonised away from it);
// the rest, less what the hypervisor stole, is other processes' work.
import { readdirSync, readFileSync } from 'node:fs';
import { processCpuSeconds } from './cpu.ts';
import { processTree } from './resources.ts';

/** The /proc/PID/stat fields this module needs, in clock ticks (starttime: ticks after boot). */
interface ProcStat {
  name: string;
  utime: number;
  stime: number;
  cutime: number;
  cstime: number;
  starttime: number;
}

function readProcStat(pid: number): ProcStat | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // the process is gone
  }
  // The command name may hold spaces and parentheses: the fields resume after the last ')'.
  const close = stat.lastIndexOf(')');
  const f = stat.slice(close + 2).split(' ');
  return {
    name: stat.slice(stat.indexOf('(') + 1, close),
    utime: Number(f[11]),
    stime: Number(f[12]),
    cutime: Number(f[13]),
    cstime: Number(f[14]),
    starttime: Number(f[19]),
  };
}

let ticksPerSecond: number | null = null;
/** CLK_TCK. cpu.ts holds it privately; its processCpuSeconds divides our own tick count by it,
 * so the ratio recovers it. The reads before and after catch a tick landing in between. */
function clockTicks(): number {
  if (ticksPerSecond !== null) return ticksPerSecond;
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = readProcStat(process.pid);
    const seconds = processCpuSeconds(process.pid);
    const after = readProcStat(process.pid);
    if (!before || !after || !seconds) continue;
    const ticks = before.utime + before.stime;
    if (ticks > 0 && ticks === after.utime + after.stime) return (ticksPerSecond = Math.round(ticks / seconds));
  }
  return (ticksPerSecond = 100); // Linux's USER_HZ everywhere in practice
}

/** Machine-wide CPU seconds since boot, summed over every CPU. */
interface CpuTotals {
  /** user + nice + system + irq + softirq + steal (guest time is already inside user/nice). */
  busyS: number;
  /** Time the hypervisor ran something else while a virtual CPU wanted to run. */
  stealS: number;
  /** Every category, idle and iowait included: CPUs x seconds since boot. */
  totalS: number;
}

/** The aggregate "cpu" line of /proc/stat in seconds, or null when it cannot be read. */
export function readCpuTotals(): CpuTotals | null {
  let text: string;
  try {
    text = readFileSync('/proc/stat', 'utf8');
  } catch {
    return null;
  }
  const line = text.split('\n', 1)[0];
  if (!line.startsWith('cpu ')) return null;
  // user nice system idle iowait irq softirq steal [guest guest_nice]: guest and guest_nice are
  // left out of the total because the kernel already counts them in user and nice.
  const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = line.slice(4).trim().split(/\s+/).map(Number);
  if ([user, nice, system, idle, iowait, irq, softirq, steal].some((v) => !Number.isFinite(v))) return null;
  const tick = clockTicks();
  return {
    busyS: (user + nice + system + irq + softirq + steal) / tick,
    stealS: steal / tick,
    totalS: (user + nice + system + idle + iowait + irq + softirq + steal) / tick,
  };
}

/**
 * CPU seconds of the union of the roots' process trees: each process's own time plus its reaped
 * children's, counted once even when trees overlap (a server root that is also the runner's
 * descendant). Null when /proc cannot be listed.
 */
export function ownCpuSeconds(roots: number[]): number | null {
  const pids = new Set<number>();
  try {
    for (const root of roots) {
      // A root inside an earlier tree adds nothing, and skipping it saves a walk of /proc.
      if (pids.has(root)) continue;
      for (const pid of processTree(root)) pids.add(pid);
    }
  } catch {
    return null;
  }
  let ticks = 0;
  for (const pid of pids) {
    const s = readProcStat(pid);
    if (s) ticks += s.utime + s.stime + s.cutime + s.cstime;
  }
  return ticks / clockTicks();
}

/** One measured interval. Null fields: the counters could not be read. */
export interface LoadSample {
  wallS: number;
  /** Cores used on average by processes outside our trees (1.0 = one core all along). */
  otherCores: number | null;
  /** Share (0..1) of the machine's CPU time the hypervisor stole. */
  steal: number | null;
}

interface Reading {
  at: number;
  totals: CpuTotals | null;
  ours: number | null;
}

function read(ownRoots: () => number[]): Reading {
  return { at: performance.now(), totals: readCpuTotals(), ours: ownCpuSeconds(ownRoots()) };
}

/** Raw CPU-second deltas of one or more intervals, clamped only when turned into a sample so
 * that summed passes do not accumulate each pass's rounding to zero. */
interface Deltas {
  wallS: number;
  busyS: number | null;
  stealS: number | null;
  totalS: number | null;
  oursS: number | null;
}

function deltas(a: Reading, b: Reading): Deltas {
  const t =
    a.totals && b.totals ? { busy: b.totals.busyS - a.totals.busyS, steal: b.totals.stealS - a.totals.stealS, total: b.totals.totalS - a.totals.totalS } : null;
  return {
    wallS: (b.at - a.at) / 1000,
    busyS: t?.busy ?? null,
    stealS: t?.steal ?? null,
    totalS: t?.total ?? null,
    oursS: a.ours !== null && b.ours !== null ? b.ours - a.ours : null,
  };
}

function toSample(d: Deltas): LoadSample {
  const otherCores = d.busyS !== null && d.stealS !== null && d.oursS !== null && d.wallS > 0 ? Math.max(0, (d.busyS - d.stealS - d.oursS) / d.wallS) : null;
  const steal = d.stealS !== null && d.totalS !== null && d.totalS > 0 ? Math.min(1, Math.max(0, d.stealS / d.totalS)) : null;
  return { wallS: d.wallS, otherCores, steal };
}

/**
 * Measures what other processes did to the machine between start() and stop(). `ownRoots()`
 * names the roots of our process trees (the runner's pid, a server's pid) and is asked at both
 * ends; a root that exits or is replaced in between (a restarted server) takes its CPU time
 * out of "ours", so that interval overstates the others. A start/stop pair reads /proc/stat and
 * walks /proc once per root at each end: a few ms (more with many processes on the machine).
 */
export class MachineLoadMeter {
  private begin: Reading | null = null;
  private sum: Deltas = { wallS: 0, busyS: 0, stealS: 0, totalS: 0, oursS: 0 };

  constructor(private readonly ownRoots: () => number[]) {}

  start(): void {
    this.begin = read(this.ownRoots);
  }

  /** The interval since start(); it is also added to total(). */
  stop(): LoadSample {
    if (!this.begin) throw new Error('MachineLoadMeter.stop() called without start()');
    const d = deltas(this.begin, read(this.ownRoots));
    this.begin = null;
    const add = (x: number | null, y: number | null) => (x === null || y === null ? null : x + y);
    this.sum = {
      wallS: this.sum.wallS + d.wallS,
      busyS: add(this.sum.busyS, d.busyS),
      stealS: add(this.sum.stealS, d.stealS),
      totalS: add(this.sum.totalS, d.totalS),
      oursS: add(this.sum.oursS, d.oursS),
    };
    return toSample(d);
  }

  /** Every start/stop interval so far taken together: what a point is judged on (one
   * unreadable interval makes the affected field null). */
  total(): LoadSample {
    return toSample(this.sum);
  }
}

// Thresholds. On the 2-core machine the benchmark runs on, a quarter of a core is an eighth of
// the machine, enough to move a latency percentile, and well above what a quiet machine shows
// (a few hundredths of a core). The counters move in clock ticks (10 ms): Δbusy can be a tick
// off per CPU at each end and Δours a tick per process, ~0.05 CPU seconds together, which over a
// pass of 0.2 s is the threshold itself. So the runner judges a point on the sum of its passes
// (MachineLoadMeter.total()), not on one short pass. Steal above 5% of the CPU time means the
// host is oversubscribed: the virtual CPUs lose whole time slices to other machines.
export const BUSY_OTHER_CORES = 0.25;
export const BUSY_STEAL = 0.05;

export const BUSY_RULE = `A point counts as measured on a busy machine when processes outside the benchmark used more than ${BUSY_OTHER_CORES} of a core on average over its timed passes, or the hypervisor stole more than ${BUSY_STEAL * 100}% of the CPU time.`;

/** The rule above; an unreadable field does not make a sample busy. */
export function isBusy(sample: Pick<LoadSample, 'otherCores' | 'steal'>): boolean {
  return (sample.otherCores !== null && sample.otherCores > BUSY_OTHER_CORES) || (sample.steal !== null && sample.steal > BUSY_STEAL);
}

interface OtherProcess {
  pid: number;
  /** /proc/PID/comm (at most 15 characters). */
  command: string;
  /** Cores it used on average over the interval (utime + stime, every thread). */
  cores: number;
}

interface QuietCheck extends LoadSample {
  /** The processes outside our trees that used the most CPU, busiest first (at most 3). */
  top: OtherProcess[];
  /** Cores of otherCores that no process alive at the end accounts for: commands that ran and
   * exited during the check (a build's compiler runs), and interrupt handling. Their parents'
   * cutime does hold them, but with all their time before the check too, so it is not used. */
  shortLivedCores: number | null;
}

/** utime + stime of every process, keyed by pid and start time so a reused pid is a new entry. */
function snapshotProcesses(): Map<string, { pid: number; name: string; ticks: number }> {
  const out = new Map<string, { pid: number; name: string; ticks: number }>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    const s = readProcStat(pid);
    if (s) out.set(`${pid}:${s.starttime}`, { pid, name: s.name, ticks: s.utime + s.stime });
  }
  return out;
}

function treesOf(roots: number[]): Set<number> {
  const pids = new Set<number>();
  for (const root of roots) {
    if (pids.has(root)) continue;
    try {
      for (const pid of processTree(root)) pids.add(pid);
    } catch {
      /* /proc unreadable: nothing to exclude */
    }
  }
  return pids;
}

function commandOf(pid: number, fallback: string): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return fallback; // it exited since the snapshot
  }
}

/**
 * Watches the machine for `ms` and says how much other processes used, and which ones: for the
 * warning the runner prints before it starts measuring.
 */
export async function checkQuiet(ms = 1000, ownRoots: () => number[] = () => [process.pid]): Promise<QuietCheck> {
  const meter = new MachineLoadMeter(ownRoots);
  const ours = treesOf(ownRoots());
  const before = snapshotProcesses();
  meter.start();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const sample = meter.stop();
  const after = snapshotProcesses();
  for (const pid of treesOf(ownRoots())) ours.add(pid);
  const tick = clockTicks();
  const others: OtherProcess[] = [];
  for (const [key, p] of after) {
    if (ours.has(p.pid)) continue;
    // A process absent from the first snapshot started during the interval: all its time is in it.
    const used = p.ticks - (before.get(key)?.ticks ?? 0);
    if (used > 0 && sample.wallS > 0) others.push({ pid: p.pid, command: p.name, cores: used / tick / sample.wallS });
  }
  others.sort((a, b) => b.cores - a.cores);
  const top = others.slice(0, 3).map((p) => ({ ...p, command: commandOf(p.pid, p.command) }));
  const named = others.reduce((sum, p) => sum + p.cores, 0);
  const shortLivedCores = sample.otherCores === null ? null : Math.max(0, sample.otherCores - named);
  return { ...sample, top, shortLivedCores };
}

/** The one-line warning for a busy machine, or null when it is quiet. */
export function busyWarning(result: QuietCheck): string | null {
  if (!isBusy(result)) return null;
  const parts: string[] = [];
  if (result.otherCores !== null && result.otherCores > BUSY_OTHER_CORES) {
    const who = result.top.map((p) => `${p.command} [pid ${p.pid}] ${p.cores.toFixed(2)}`);
    // Below a twentieth of a core the remainder is tick noise, not worth naming.
    if (result.shortLivedCores !== null && result.shortLivedCores >= 0.05) who.push(`short-lived processes ${result.shortLivedCores.toFixed(2)}`);
    parts.push(`other processes use ${result.otherCores.toFixed(2)} cores${who.length > 0 ? ` (${who.join(', ')})` : ''}`);
  }
  if (result.steal !== null && result.steal > BUSY_STEAL) parts.push(`the hypervisor steals ${(result.steal * 100).toFixed(1)}% of the CPU time`);
  return `the machine is busy: ${parts.join('; ')}`;
}
