// The runner's side of a participant host: spawns it, sends requests, enforces time limits
// and kills it when anything goes wrong.
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UserError } from '../util/errors.ts';
import type { HostMessage, HostReply, HostRequest } from './protocol.ts';

const HOST = join(dirname(fileURLToPath(import.meta.url)), 'host.ts');
const live = new Set<ChildProcess>();

/** Kill every host still running (on exit or a signal): no engine outlives its run. */
export function killAllHosts(): void {
  for (const c of live) c.kill('SIGKILL');
  live.clear();
}
process.on('exit', killAllHosts);

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

export class HostClient {
  private readonly child: ChildProcess;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: HostReply) => void; reject: (e: Error) => void }>();
  private exited: string | null = null;
  /** Why the runner killed it (e.g. its server died), for the pending requests' error. */
  private killReason: string | null = null;

  constructor(
    readonly name: string,
    private readonly onProgress?: (p: { what: string; done: number; total: number }) => void,
  ) {
    this.child = fork(HOST, [], {
      // An absolute loader URL, so the host starts whatever the current directory is.
      execArgv: ['--import', import.meta.resolve('tsx')],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    live.add(this.child);
    this.child.on('message', (m) => this.onMessage(m as HostMessage));
    this.child.on('exit', (code, signal) => {
      live.delete(this.child);
      this.exited = this.killReason ?? (signal ? `killed by ${signal}` : `exited with code ${code}`);
      for (const p of this.pending.values()) p.reject(new HostError(`participant ${name}: engine process ${this.exited}`));
      this.pending.clear();
    });
  }

  get alive(): boolean {
    return this.exited === null;
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
    if (this.exited) return Promise.reject(new HostError(`participant ${this.name}: engine process ${this.exited}`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.kill();
        reject(new HostError(`participant ${this.name}: ${req.type} took longer than ${timeoutS}s; the engine process was stopped`, false, true));
      }, timeoutS * 1000);
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
        reject(new HostError(`participant ${this.name}: engine process ${this.exited ?? `cannot take requests (${err.message})`}`));
      });
    });
  }

  /** Kills the host; `reason` replaces "killed by SIGKILL" in the pending requests' errors. */
  kill(reason?: string): void {
    if (this.exited) return;
    if (reason) this.killReason = reason;
    this.child.kill('SIGKILL');
  }

  async close(): Promise<void> {
    if (this.exited) return;
    try {
      await this.request({ type: 'close' }, 60);
    } catch {
      this.kill();
    }
  }
}

export { UserError };
