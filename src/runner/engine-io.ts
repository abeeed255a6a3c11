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

/** The engine's processes: the server's tree, or the host process of an in-process engine. */
export function engineProcesses(pids: { engine: number | undefined; engineTree: boolean }): number[] {
  if (pids.engine === undefined) return [];
  return pids.engineTree ? processTree(pids.engine) : [pids.engine];
}

/** The counters summed over the processes that can be read; null when none can (a remote
 * server, or /proc/PID/io closed to this user). */
export function readIo(pids: number[]): IoReading | null {
  let any = false;
  const sum = { readBytes: 0, majorFaults: 0 };
  for (const pid of pids) {
    const r = readOne(pid);
    if (!r) continue;
    any = true;
    sum.readBytes += r.readBytes;
    sum.majorFaults += r.majorFaults;
  }
  return any ? sum : null;
}

/** after - before per counter, or null when either is missing. A process of the tree that exited
 * in between takes its counts with it, so a negative difference reads as unknown. */
export function ioDelta(before: IoReading | null, after: IoReading | null): IoReading | null {
  if (!before || !after) return null;
  const d = { readBytes: after.readBytes - before.readBytes, majorFaults: after.majorFaults - before.majorFaults };
  return d.readBytes < 0 || d.majorFaults < 0 ? null : d;
}
