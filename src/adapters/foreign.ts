// Participants whose engine exists only in another language (Python, Java, ...): the adapter is
// a short TypeScript file (settings schema, what the engine can filter, how to start its host)
// and the engine is driven by a host process in the engine's own language that speaks the
// participant protocol over its stdin and stdout. docs/contracts.md, "The participant
// protocol", is the specification; sdk/python/vecbench_host.py and sdk/java/VecbenchHost.java
// are the reference hosts.
//
// To the runner such a participant is like any other: the protocol carries the same operations
// as EngineSession, so the contract suite, ladders, calibration, churn, resources (the host
// process is a child of the participant host, inside its measured process tree) and cold start
// need nothing of their own. Searches overlap: requests carry ids and the foreign host answers
// them in any order from its own threads.
//
// Frames, both ways, little-endian:
//   u32 size of the rest | u32 request id | u32 header bytes H | H bytes JSON | payload bytes
import { type ChildProcess, spawn } from 'node:child_process';
import type { ZodType } from 'zod';
import {
  ATTRIBUTES,
  type AttrName,
  type DatasetInfo,
  type EngineSession,
  type FilterExpr,
  type Knobs,
  type OpenContext,
  type Participant,
  type RowBatch,
  type SearchRequest,
  type Strategy,
} from '../contracts.ts';
import { besideSource } from '../util/code-paths.ts';
import { UserError } from '../util/errors.ts';

/** The directory of the Python reference host (vecbench_host.py): a Python host puts it on its
 * path (the adapter passes it as VECBENCH_PYTHON_SDK). */
export function pythonSdkDir(): string {
  return besideSource(import.meta.url, '../sdk/python');
}

/** The protocol's version: a host answering another one is refused at hello. */
const PROTOCOL_VERSION = 1;
/** A frame larger than this is a broken or hostile peer, never a real reply. */
const MAX_FRAME = 1 << 30;

/** Operations a host may serve beyond the required ones (hello, open, ingest, build, knobs,
 * search, close): each maps onto an optional EngineSession member. */
const OPTIONAL_OPS = ['explain', 'disk_bytes', 'insert', 'upsert', 'delete', 'compact', 'search_many'] as const;
type OptionalOp = (typeof OPTIONAL_OPS)[number];

/** How to start the host: the program and its arguments, resolved when first needed (a missing
 * virtual environment or jar is a SetupNeeded naming the provisioner). */
interface HostCommand {
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface ForeignParticipantSpec<S> {
  /** The participant's name, for messages. */
  name: string;
  /** The engine's human name (Participant.engine). */
  engine: string;
  settingsSchema: ZodType<S>;
  filters: Participant<S>['filters'];
  filterStrategy: string;
  /** True when the host's engine can reopen its files without ingest (cold start, threads). */
  reopen: boolean;
  host(): HostCommand;
  /** Optional: why these settings cannot run on this dataset (Participant.checkDataset). */
  checkDataset?(settings: S, dataset: DatasetInfo): string | null;
}

interface Reply {
  header: Record<string, unknown>;
  payload: Buffer;
}

interface Pending {
  op: string;
  resolve(r: Reply): void;
  reject(e: Error): void;
}

/** One host process and the frames in flight to it. */
class ForeignHost {
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
    if (!p) {
      this.fail(new Error(`${this.name}: its host answered request ${id}, which is not in flight`));
      return;
    }
    this.pending.delete(id);
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

// ---- payloads ----

function int32s(reply: Reply, what: string, name: string): Int32Array {
  const p = reply.payload;
  if (p.length % 4 !== 0) throw new Error(`${name}: its host answered ${what} with ${p.length} bytes, not whole int32s`);
  // A copy: the frame's buffer is shared with the next frames.
  const out = new Int32Array(p.length / 4);
  Buffer.from(out.buffer).set(p);
  return out;
}

/** The columns of a batch in ATTRIBUTES order, as the protocol sends them. */
function batchPayload(batch: RowBatch): ArrayBufferView[] {
  return [batch.ids, batch.vectors, ...ATTRIBUTES.map((a) => batch.attrs[a])];
}

function batchFields(batch: RowBatch, d: number): Record<string, unknown> {
  if (batch.vectors.length !== batch.ids.length * d) throw new Error(`a batch of ${batch.ids.length} rows has ${batch.vectors.length} floats, not x ${d}`);
  return { n: batch.ids.length, attrs: ATTRIBUTES as readonly AttrName[], ...(batch.text ? { text: batch.text } : {}) };
}

function requestFields(r: SearchRequest): { k: number; filter: FilterExpr | null } {
  return { k: r.k, filter: r.filter };
}

// ---- the session ----

function hostSession(host: ForeignHost, d: number, ops: Set<string>): EngineSession {
  const name = host.name;
  const has = (op: OptionalOp) => ops.has(op);
  const session: EngineSession & { readonly hostPid: number | undefined } = {
    /** The host process (tests kill it to see the session fail in one line). */
    hostPid: host.pid,
    async ingest(batch) {
      await host.call('ingest', batchFields(batch, d), batchPayload(batch));
    },
    async buildIndex() {
      await host.call('build');
    },
    async setKnobs(knobs: Knobs) {
      await host.call('knobs', { knobs });
    },
    async search(request) {
      if (request.vector.length !== d) throw new Error(`query vector has ${request.vector.length} dimensions, the index ${d}`);
      const reply = await host.call('search', requestFields(request), [request.vector]);
      const ids = int32s(reply, 'a search', name);
      if (ids.length > request.k) throw new Error(`${name}: its host returned ${ids.length} ids for k = ${request.k}`);
      return ids;
    },
    async close() {
      await host.close();
    },
    // The same frames and the same host process, answered without the engine (null_search).
    nullPath: () => ({
      setKnobs: async () => {},
      search: async (request) => int32s(await host.call('null_search', requestFields(request), [request.vector]), 'a null search', name),
    }),
  };
  if (has('explain'))
    session.explain = async (request) => {
      const r = await host.call('explain', requestFields(request), [request.vector]);
      if (typeof r.header.plan !== 'string') throw new Error(`${name}: its host's explain gave no plan text`);
      return r.header.plan;
    };
  // A host's plan text starts with "strategy: LABEL" and, when the label was read from the
  // engine's own planner rather than declared, "(observed)" after it.
  session.strategy = (request: SearchRequest, plan: string | null): Strategy => {
    const m = plan === null ? null : /^strategy: (.+?)( \(observed\))?$/m.exec(plan);
    if (m) return { label: m[1], observed: m[2] !== undefined };
    return { label: request.filter === null ? 'graph walk' : 'filtered graph walk', observed: false };
  };
  if (has('disk_bytes'))
    session.diskBytes = async () => {
      const r = await host.call('disk_bytes');
      if (typeof r.header.bytes !== 'number' || !(r.header.bytes >= 0)) throw new Error(`${name}: its host's disk_bytes gave no byte count`);
      return r.header.bytes;
    };
  for (const op of ['insert', 'upsert'] as const)
    if (has(op))
      session[op] = async (batch) => {
        await host.call(op, batchFields(batch, d), batchPayload(batch));
      };
  if (has('delete'))
    session.delete = async (ids) => {
      await host.call('delete', { n: ids.length }, [ids]);
    };
  if (has('compact'))
    session.compact = async () => {
      await host.call('compact');
    };
  return session;
}

/** hello: the protocol version, the engine's name and version, and the optional ops served. */
async function hello(host: ForeignHost): Promise<{ engine: string; version: string; ops: Set<string> }> {
  const r = await host.call('hello', { protocol: PROTOCOL_VERSION });
  const h = r.header;
  if (h.protocol !== PROTOCOL_VERSION)
    throw new Error(`${host.name}: its host speaks participant protocol ${String(h.protocol)}, this vecbench ${PROTOCOL_VERSION}; update one of them`);
  if (typeof h.engine !== 'string' || typeof h.version !== 'string' || !Array.isArray(h.ops))
    throw new Error(`${host.name}: its host's hello lacks engine, version or ops`);
  const unknown = (h.ops as unknown[]).filter((o) => !(OPTIONAL_OPS as readonly unknown[]).includes(o));
  if (unknown.length > 0) throw new Error(`${host.name}: its host serves unknown ops ${unknown.join(', ')}`);
  return { engine: h.engine, version: h.version, ops: new Set(h.ops as string[]) };
}

/** A Participant whose engine runs in a host process of another language. */
export function foreignParticipant<S>(spec: ForeignParticipantSpec<S>): Participant<S> {
  let versionCache: string | null = null;
  async function start(ctx: OpenContext<S>, reopen: boolean): Promise<EngineSession> {
    const host = new ForeignHost(spec.name, spec.host(), ctx.log);
    try {
      const h = await hello(host);
      const d = ctx.dataset;
      await host.call('open', {
        dataset: { name: d.name, n: d.n, d: d.d, metric: d.metric, has_text: d.hasText },
        settings: ctx.settings,
        work_dir: ctx.workDir,
        max_concurrency: ctx.maxConcurrency,
        reopen,
      });
      return hostSession(host, d.d, h.ops);
    } catch (e) {
      host.kill();
      throw e;
    }
  }
  const participant: Participant<S> = {
    engine: spec.engine,
    async engineVersion() {
      if (versionCache) return versionCache;
      const host = new ForeignHost(spec.name, spec.host(), () => {});
      try {
        const h = await hello(host);
        versionCache = h.version;
        return versionCache;
      } finally {
        await host.close(30).catch(() => host.kill());
      }
    },
    settingsSchema: spec.settingsSchema,
    filters: spec.filters,
    filterStrategy: spec.filterStrategy,
    concurrentSearch: true,
    open: (ctx) => start(ctx, false),
  };
  if (spec.reopen) participant.reopen = (ctx) => start(ctx, true);
  if (spec.checkDataset) participant.checkDataset = spec.checkDataset;
  return participant;
}
