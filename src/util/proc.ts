// Who a process is, from /proc: a PID alone names a process only while it lives, and the
// kernel hands it out again later, so a holder is a PID plus its start time.
import { readFileSync } from 'node:fs';

/** Fields of /proc/PID/stat after the command name (which may hold spaces and ')'). */
export function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** The process's start time in clock ticks after boot (field 22 of /proc/PID/stat); null when
 * there is no such process. */
export function startTicks(pid: number): number | null {
  const fields = statFields(pid);
  return fields ? Number(fields[19]) : null;
}

/** Whether a process exists and is not a zombie (a zombie has exited; only its entry is left). */
export function isRunning(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== null && fields[0] !== 'Z';
}

/** Whether the process that recorded (pid, start ticks) still runs; a null start (not
 * recorded) trusts the PID alone. */
export function isSameProcessRunning(pid: number, start: number | null): boolean {
  return isRunning(pid) && (start === null || startTicks(pid) === start);
}

/** USER_HZ: the unit of /proc's tick counts, 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/** The process's start as epoch milliseconds (boot time + start ticks; about a second of
 * error, as /proc/stat's btime is whole seconds); null when there is no such process. */
export function startedAtMs(pid: number): number | null {
  const ticks = startTicks(pid);
  if (ticks === null) return null;
  try {
    const btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
    return btime ? Number(btime[1]) * 1000 + (ticks / TICKS_PER_SECOND) * 1000 : null;
  } catch {
    return null;
  }
}
