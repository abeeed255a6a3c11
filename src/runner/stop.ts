// A run asked to stop from outside (SIGTERM, SIGINT, SIGHUP: `timeout`, systemd, a container
// runtime or Ctrl-C signal the whole process group). Such a stop is never an engine failure:
// it never becomes a skipped point, a failed group or a complete one; the run ends non-zero
// with its finished points kept, and a resumed run measures the rest.

/** The signals that ask a process to stop; SIGKILL (ours, the OOM killer's) is a crash. */
const STOP_SIGNALS: ReadonlySet<string> = new Set(['SIGTERM', 'SIGINT', 'SIGHUP']);

/** Thrown where an engine or server died of a stop signal, or after the runner got one. Not a
 * HostError, so no handler of engine failures records it. */
export class RunStopped extends Error {
  constructor(
    readonly signal: NodeJS.Signals,
    what: string,
  ) {
    super(`stopped by ${signal} (${what}); finished points are kept, run the same command again to measure the rest`);
    this.name = 'RunStopped';
  }
}

let requested: NodeJS.Signals | null = null;

/** The runner got a stop signal: from now on no engine death is recorded as a failure. */
export function requestStop(signal: NodeJS.Signals): void {
  requested ??= signal;
}

export function stopRequested(): NodeJS.Signals | null {
  return requested;
}

/** The stop signal a process died of, or null (an exit code, SIGKILL, a segfault). */
export function stopSignalOf(signal: NodeJS.Signals | null): NodeJS.Signals | null {
  return signal !== null && STOP_SIGNALS.has(signal) ? signal : null;
}

/** The shell's convention: 128 + the signal's number (130 for SIGINT, 143 for SIGTERM). */
export function stopExitCode(signal: NodeJS.Signals): number {
  return signal === 'SIGINT' ? 130 : signal === 'SIGHUP' ? 129 : 143;
}
