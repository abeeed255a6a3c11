// One host process of a participant in another language and the frames in flight to it: the
// transport of the participant protocol (docs/protocol.md, "The participant protocol"); what the
// frames mean is foreign.ts.
//
// Frames, both ways, little-endian:
//   u32 size of the rest | u32 request id | u32 header bytes H | H bytes JSON | payload bytes
import { type ChildProcess, spawn } from 'node:child_process';
import { UserError } from '../util/errors.ts';

/** A frame larger than this is a broken or hostile peer, never a real reply. */
const MAX_FRAME = 1 << 30;

/** How to start the host: the program and its arguments, resolved when first needed (a missing
 * virtual environment or jar is a SetupNeeded naming the provisioner). */
export interface HostCommand {
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface Reply {
  header: Record<string, unknown>;
  payload: Buffer;
}

interface Pending {
  op: string;
  resolve(r: Reply): void;
  reject(e: Error): void;
}

/** One host process and the frames in flight to it. */
export class ForeignHost {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private failure: Error | null = null;
  private readonly stderrTail: string[] = [];
  private readonly exited: Promise<void>;
  private closing = false;

  constructor(
    readonly name: string,
    cmd: HostCommand,
    private readonly log: (m: string) => void,
  ) {
    this.child = spawn(cmd.command, cmd.args, { cwd: cmd.cwd, env: cmd.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        const why = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        if (!this.closing || this.pending.size > 0) this.fail(new Error(`${this.name}: its host ${why}${this.tail()}`));
        resolve();
      });
    });
    this.child.on('error', (e) => this.fail(new UserError(`${this.name}: cannot start its host ${cmd.command}: ${e.message}`)));
    this.child.stdin!.on('error', () => {
      /* the exit handler says why */
    });
    this.child.stdout!.on('data', (chunk: Buffer) => this.onData(chunk));
    // Idle, the host does not keep this process alive (a session nobody closed, after a failed
    // test or a crashed caller, must not hang it; the host dies with its stdin); a request in
    // flight does.
    this.setActive(false);
    let partial = '';
    this.child.stderr!.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        this.stderrTail.push(line);
        if (this.stderrTail.length > 5) this.stderrTail.shift();
        this.log(line);
      }
    });
  }

  private setActive(active: boolean): void {
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as unknown as { ref?(): void; unref?(): void }[]) {
      if (active) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private tail(): string {
    const last = this.stderrTail.at(-1);
    return last ? `; its last words: ${last.slice(0, 300)}` : '';
  }

  private fail(e: Error): void {
    if (this.failure) return;
    this.failure = e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.setActive(false);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  private onData(chunk: Buffer): void {
    this.buffered.push(chunk);
    this.bufferedBytes += chunk.length;
    for (;;) {
      if (this.bufferedBytes < 4) return;
      const head = this.buffered.length === 1 ? this.buffered[0] : Buffer.concat(this.buffered);
      this.buffered = [head];
      const size = head.readUInt32LE(0);
      if (size < 8 || size > MAX_FRAME) {
        this.fail(new Error(`${this.name}: its host sent a frame of ${size} bytes: not the participant protocol`));
        return;
      }
      if (head.length < 4 + size) return;
      const frame = head.subarray(4, 4 + size);
      const rest = head.subarray(4 + size);
      this.buffered = rest.length > 0 ? [rest] : [];
      this.bufferedBytes = rest.length;
      this.onFrame(frame);
      if (this.failure) return;
    }
  }

  private onFrame(frame: Buffer): void {
    const id = frame.readUInt32LE(0);
    const hlen = frame.readUInt32LE(4);
    if (8 + hlen > frame.length) {
      this.fail(new Error(`${this.name}: its host sent a header longer than its frame`));
      return;
    }
    let header: Record<string, unknown>;
    try {
      header = JSON.parse(frame.toString('utf8', 8, 8 + hlen)) as Record<string, unknown>;
      if (header === null || typeof header !== 'object' || Array.isArray(header)) throw new Error('not an object');
    } catch (e) {
      this.fail(new Error(`${this.name}: its host sent a header that is not a JSON object (${(e as Error).message})`));
      return;
    }
    const p = this.pending.get(id);
    this.pending.delete(id);
    if (this.pending.size === 0) this.setActive(false);
    if (!p) {
      this.fail(new Error(`${this.name}: its host answered request ${id}, which is not in flight`));
      return;
    }
    if (typeof header.error === 'string') {
      // The engine's own words, one line, marked as its: a bad knob is the user's to fix.
      const message = `${this.name}: ${header.error.replace(/\s*\n\s*/g, ' | ').slice(0, 1000)}`;
      p.reject(header.user === true ? new UserError(message) : new Error(message));
      return;
    }
    p.resolve({ header, payload: frame.subarray(8 + hlen) });
  }

  /** Sends one request; resolves with the reply, rejects with the host's error in one line. */
  call(op: string, fields: Record<string, unknown> = {}, payload: ArrayBufferView[] = []): Promise<Reply> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    if (this.nextId > 0xffffffff) this.nextId = 1;
    const header = Buffer.from(JSON.stringify({ op, ...fields }), 'utf8');
    const bodyBytes = payload.reduce((s, v) => s + v.byteLength, 0);
    const prefix = Buffer.allocUnsafe(12);
    prefix.writeUInt32LE(8 + header.length + bodyBytes, 0);
    prefix.writeUInt32LE(id, 4);
    prefix.writeUInt32LE(header.length, 8);
    return new Promise<Reply>((resolve, reject) => {
      if (this.pending.size === 0) this.setActive(true);
      this.pending.set(id, { op, resolve, reject });
      const stdin = this.child.stdin!;
      stdin.write(prefix);
      stdin.write(header);
      for (const v of payload) stdin.write(Buffer.from(v.buffer, v.byteOffset, v.byteLength));
    });
  }

  /** Asks the host to close its engine and exit; kills it when it does not within timeoutS. */
  async close(timeoutS = 600): Promise<void> {
    if (this.failure === null) {
      try {
        await this.call('close');
      } finally {
        this.closing = true;
        this.child.stdin!.end();
      }
    }
    this.closing = true;
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutS * 1000);
    await this.exited;
    clearTimeout(timer);
  }

  kill(): void {
    this.closing = true;
    this.child.kill('SIGKILL');
  }
}
