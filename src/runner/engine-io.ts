// What the engine's processes read from storage while a pass ran (docs/measurement.md, "Bytes
// read per query"): read_bytes of /proc/PID/io (bytes the block layer fetched for the process,
// not page-cache hits) and major page faults (field majflt of /proc/PID/stat: a page of a mapped
// file or swap that was not in memory), summed over the engine's process tree.
import { readFileSync } from 'node:fs';
import { statFields } from '../util/proc.ts';
import { processTree } from './resources.ts';

export interface IoReading {
  readBytes: number;
  majorFaults: number;
}

function readOne(pid: number): IoReading | null {
  try {
    const io = /^read_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    const majflt = Number(statFields(pid)?.[9]);
    if (!io || !Number.isFinite(majflt)) return null;
    return { readBytes: Number(io[1]), majorFaults: majflt };
  } catch {
    return null;
  }
}

/** The engine's processes: the server's tree, or the host process's tree (the host of an
 * in-process engine, and the process of an engine in another language that it started: reads
 * of a Python or Java engine happen in that child, which the host's own counters missed). */
export function engineProcesses(pids: { engine: number | undefined }): number[] {
  if (pids.engine === undefined) return [];
  return processTree(pids.engine);
}

/** Each process's counters, by pid (the processes that can be read). */
export type IoSnapshot = Map<number, IoReading>;

export function snapshotIo(pids: number[]): IoSnapshot {
  const out: IoSnapshot = new Map();
  for (const pid of pids) {
    const r = readOne(pid);
    if (r) out.set(pid, r);
  }
  return out;
}

/** What the processes read between two snapshots (the tree found again for the second): a
 * process in both counts its difference; one born in between counts whole (a server's backend
 * forked for a connection the pass opened, as a client pool does after an idle spell: while
 * only the processes found before were counted, such a server's latency points on the disk tier
 * read 0 bytes); one gone in between takes its counts with it. Null when neither snapshot could
 * read a process (a remote server, or /proc/PID/io closed to this user). */
export function ioBetween(before: IoSnapshot, after: IoSnapshot): IoReading | null {
  if (before.size === 0 && after.size === 0) return null;
  const sum = { readBytes: 0, majorFaults: 0 };
  for (const [pid, a] of after) {
    const b = before.get(pid);
    // A smaller counter than before is another process under a reused pid: born in between.
    const reused = b !== undefined && (a.readBytes < b.readBytes || a.majorFaults < b.majorFaults);
    sum.readBytes += a.readBytes - (b && !reused ? b.readBytes : 0);
    sum.majorFaults += a.majorFaults - (b && !reused ? b.majorFaults : 0);
  }
  return sum;
}
