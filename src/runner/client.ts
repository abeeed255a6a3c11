// The runner's side of a participant host: spawns it, sends requests, enforces time limits
// and kills it when anything goes wrong.
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { HostMessage, HostReply, HostRequest } from './protocol.ts';
import { RunStopped, stopRequested, stopSignalOf } from './stop.ts';
import { besideSource, runnable } from '../util/code-paths.ts';

// The host's entry lies above the runner: it hands the host the features (src/features.ts).
const HOST = runnable(besideSource(import.meta.url, '../host-main.ts'));
const live = new Set<ChildProcess>();

/** Kill every host still running (on exit or a signal): no engine outlives its run. */
export function killAllHosts(): void {
  for (const c of live) c.kill('SIGKILL');
  live.clear();
}
process.on('exit', killAllHosts);

/** Fault injection for the crash tests (test/e2e/fault-injection.test.ts), so they kill at a
 * chosen moment rather than at a random time: VECBENCH_FAULT_REQUEST=TYPE:N SIGKILLs this process
 * right after its Nth request of TYPE (load, point, ...) is sent to an engine host,
 * TYPE:N:engine SIGKILLs that host instead, with the request in flight, and TYPE:N:slow lets
 * that request's time limit expire at once (an engine too slow for it). */
const FAULT = /^([a-z-]+):(\d+)(?::(engine|slow))?$/.exec(process.env.VECBENCH_FAULT_REQUEST ?? '');
const faultCounts = new Map<string, number>();
function faultFor(type: string): 'runner' | 'engine' | 'slow' | null {
  if (FAULT === null || FAULT[1] !== type) return null;
  const n = (faultCounts.get(type) ?? 0) + 1;
  faultCounts.set(type, n);
  if (n !== Number(FAULT[2])) return null;
  return (FAULT[3] as 'engine' | 'slow' | undefined) ?? 'runner';
}
function faultAfterSend(fault: 'runner' | 'engine' | 'slow' | null, type: string, child: ChildProcess): void {
  if (fault === 'engine') {
    // Said, so the test knows the moment came (a run can end before its Nth request).
    process.stderr.write(`vecbench: fault injection: engine process killed after ${type} request\n`);
    child.kill('SIGKILL');
  } else if (fault === 'runner') process.kill(process.pid, 'SIGKILL');
}

export class HostError extends Error {
  constructor(
    message: string,
    readonly userError = false,
    /** The request ran past its time limit (the engine was stopped). */
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/** How long a host whose pipe failed gets to report its exit (and so its signal). */
const EXIT_WAIT_MS = 2000;
/** How long a host's death waits for a stop signal the runner may be about to handle. */
export const SIGNAL_SETTLE_MS = 300;

export class HostClient {
  private readonly child: ChildProcess;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: HostReply) => void; reject: (e: Error) => void }>();
  private exited: string | null = null;
  /** The signal it died of, when one killed it. */
  private exitSignal: NodeJS.Signals | null = null;
  /** Its IPC channel failed or closed: it takes no more requests, even before its 'exit'. */
  private broken: string | null = null;
  private readonly exitSeen: Promise<void>;
  /** Why the runner killed it (e.g. its server died), for the pending requests' error. */
  private killReason: string | null = null;
  /** The stop signal that killed its server, when that is why the runner killed it. */
  private killStop: NodeJS.Signals | null = null;
  /** Killed by the harness because a request outlived its time-out (the engine was slow, not
   * broken: its files are as it wrote them). */
  timedOut = false;

  constructor(
    readonly name: string,
    private readonly onProgress?: (p: { what: string; done: number; total: number }) => void,
    /** Where the engine's stdout and stderr go (appended); by default the runner's. */
    private readonly logFile?: string,
  ) {
    let fd: number | undefined;
    if (logFile) {
      mkdirSync(dirname(logFile), { recursive: true });
      fd = openSync(logFile, 'a');
    }
    try {
      this.child = fork(HOST.file, [], {
        // The build, or the sources through tsx's loader (an absolute URL, so the host starts
        // whatever the current directory is).
        execArgv: HOST.execArgv,
        serialization: 'advanced',
        stdio: fd === undefined ? ['ignore', 'inherit', 'inherit', 'ipc'] : ['ignore', fd, fd, 'ipc'],
      });
    } finally {
      // The child holds its own copy of the descriptor.
      if (fd !== undefined) closeSync(fd);
    }
    live.add(this.child);
    this.child.on('message', (m) => this.onMessage(m as HostMessage));
    this.child.on('disconnect', () => (this.broken ??= 'closed its channel'));
    this.exitSeen = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        live.delete(this.child);
        this.exitSignal = signal;
        this.exited = this.killReason ?? (signal ? `killed by ${signal}` : `exited with code ${code}`);
        // A group signal reaches the host and the runner at once, and a host may die of it
        // in any way (a signal, an exit code when a child of its own went first): give the
        // runner's own handler a moment, so that a stop is never recorded as an engine death.
        const settle = this.killReason === null && this.exitSignal !== 'SIGKILL' ? SIGNAL_SETTLE_MS : 0;
        setTimeout(() => {
          const err = this.deathError();
          for (const p of this.pending.values()) p.reject(err);
          this.pending.clear();
          resolve();
        }, settle);
      });
    });
  }

  /** The error of a request to a dead host: a stop signal (its own, its server's, the
   * runner's) stops the run; anything else is an engine failure. */
  private deathError(): Error {
    const why = this.exited ?? `cannot take requests (${this.broken})`;
    const signal = this.killStop ?? stopSignalOf(this.killReason ? null : this.exitSignal) ?? stopRequested();
    if (signal) return new RunStopped(signal, `participant ${this.name}: engine process ${why}`);
    return new HostError(`participant ${this.name}: engine process ${why}${this.logFile ? ` (its output: ${this.logFile})` : ''}`);
  }

  /** Waits (briefly) for a host that stopped taking requests to exit, so that its error
   * names how it died: a pipe fails before the exit of a host killed by a signal is seen. */
  private async settledDeathError(): Promise<Error> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exitSeen, new Promise<void>((r) => (timer = setTimeout(r, EXIT_WAIT_MS)))]);
    clearTimeout(timer);
    return this.deathError();
  }

  /** How the process ended (a time-out, a crash, a failed pipe), or null while it lives. A host
   * killed with a reason ends for that reason, also in the moment between its channel closing
   * and its exit being seen. */
  get end(): string | null {
    return this.exited ?? (this.broken === null ? null : (this.killReason ?? this.broken));
  }

  get alive(): boolean {
    return this.exited === null && this.broken === null;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private onMessage(m: HostMessage): void {
    if ('progress' in m) {
      this.onProgress?.(m.progress);
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if ('reply' in m) p.resolve(m.reply);
    else if ('error' in m) p.reject(new HostError(m.error, m.userError));
  }

  /** Sends one request; past timeoutS the host is killed and the promise rejects. */
  request<T extends HostReply['type']>(req: HostRequest, timeoutS: number): Promise<Extract<HostReply, { type: T }>> {
    if (!this.alive) return this.settledDeathError().then((e) => Promise.reject(e));
    const id = this.nextId++;
    const fault = faultFor(req.type);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.pending.delete(id);
          this.timedOut = true;
          this.kill(`stopped after a ${req.type} request took longer than ${timeoutS}s`);
          reject(new HostError(`participant ${this.name}: ${req.type} took longer than ${timeoutS}s; the engine process was stopped`, false, true));
        },
        fault === 'slow' ? 0 : timeoutS * 1000,
      );
      this.pending.set(id, {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r as Extract<HostReply, { type: T }>);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      // A host that died between the check above and this send makes the send fail (EPIPE)
      // asynchronously; without a callback that would be an uncaught 'error' event.
      this.child.send({ id, req }, (err) => {
        if (!err || !this.pending.has(id)) return;
        this.pending.delete(id);
        clearTimeout(timer);
        // A failed pipe: the host is dead for every later request (a retry starts a new one).
        this.broken ??= err.message;
        void this.settledDeathError().then(reject);
      });
      faultAfterSend(fault, req.type, this.child);
    });
  }

  /** Kills the host; `reason` replaces "killed by SIGKILL" in the pending requests' errors;
   * `stop` (its server died of a stop signal) makes them a RunStopped. */
  kill(reason?: string, stop?: NodeJS.Signals | null): void {
    if (this.exited) return;
    if (reason) this.killReason = reason;
    if (stop) this.killStop = stop;
    this.child.kill('SIGKILL');
  }

  async close(): Promise<void> {
    if (this.exited) return;
    if (!this.alive) {
      this.kill();
      return;
    }
    try {
      await this.request({ type: 'close' }, 60);
    } catch {
      this.kill();
    }
  }
}
