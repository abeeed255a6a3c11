// The load generator's PostgreSQL fast path, shared by pgvector's load client and the fidelity
// bench's client (so the bench measures the path `vecbench run` uses). Measured against pgbench,
// the per-request work of pg.Pool + Client.query (pool checkout, the Query and Result objects,
// field parsers built per result, the Describe round of every execution) cost more client time
// at in-flight 1 than PostgreSQL's own client spends, so here:
// - one dedicated pg.Client per in-flight request, handed out from a free list (no checkout
//   promise, no pool queue); pg still does the connecting, authentication and message parsing;
// - each execution is encoded once, before the timed loop (LoadClient.prepare): Bind + Execute +
//   Sync of a named prepared statement with pg-protocol's serializer, written in one socket write;
//   the statement is parsed (Parse) on a connection's first use, in the same write;
// - the execution is a pg "Submittable" (the extension point pg-cursor uses): it keeps only the
//   first column of each row, as a number (the ids), and resolves at ReadyForQuery;
// - session settings (knob SETs, plan_cache_mode) that must hold for an execution travel in the
//   same write, as unnamed extended-protocol statements, on the connections that lack them: no
//   extra round trip per point.
import pg from 'pg';
import { serialize } from 'pg-protocol';

export interface PgConnectionOptions {
  host: string;
  port: number;
  user: string;
  database: string;
  password?: string;
}

/** One execution of a named prepared statement, encoded ahead of time. */
export interface PgExecution {
  name: string;
  text: string;
  /** Bind + Execute + Sync. */
  bytes: Buffer;
}

const EXECUTE_SYNC = Buffer.concat([serialize.execute(), serialize.sync()]);

/** Encodes an execution of statement `name` (`text`) with these parameters: Buffers bind in
 * binary (e.g. pgvector's vector_recv form), numbers and strings as text, as pg binds them. */
export function encodeExecution(name: string, text: string, values: readonly (Buffer | string | number | null)[]): PgExecution {
  const bind = serialize.bind({ statement: name, values: values.map((v) => (typeof v === 'number' ? String(v) : v)) });
  return { name, text, bytes: Buffer.concat([bind, EXECUTE_SYNC]) };
}

/** Session settings as unnamed extended-protocol statements (Parse + Bind + Execute each; one
 * statement per Parse), to go ahead of an execution before its Sync. */
export function encodeSetup(statements: readonly string[]): Buffer {
  return Buffer.concat(statements.flatMap((sql) => [serialize.parse({ text: sql }), serialize.bind(), serialize.execute()]));
}

interface Connection {
  client: pg.Client;
  /** The setup last applied on it (null: none or unknown). */
  setup: Buffer | null;
  /** Executions sent and not answered yet (more than one only after a time-out gave up on one). */
  busy: number;
}

/** pg's connection as a Submittable sees it (pg's own typings do not describe it). */
interface WireConnection {
  stream: { writable: boolean; write(b: Buffer): boolean };
  parsedStatements: Record<string, string | undefined>;
}

/** A pg Submittable running one encoded execution on `conn` and collecting the first column as
 * numbers; `conn` goes back to `free` when it is answered. (No closures made per execution:
 * they cost more than this whole object under tsx, which names every one.) */
class IdExecution {
  readonly name: string;
  readonly text: string;
  private readonly ids: number[] = [];
  private failed = false;

  constructor(
    private readonly exec: PgExecution,
    private readonly setup: Buffer | null,
    private readonly conn: Connection,
    private readonly free: Connection[],
    private readonly resolve: (ids: number[]) => void,
    private readonly reject: (e: Error) => void,
  ) {
    this.name = exec.name;
    this.text = exec.text;
  }

  private release(): void {
    if (--this.conn.busy === 0) this.free.push(this.conn);
  }

  submit(connection: WireConnection): Error | undefined {
    if (!connection.stream.writable) return new Error('the PostgreSQL connection is closed');
    const parsed = connection.parsedStatements[this.name];
    if (parsed !== undefined && parsed !== this.text) return new Error(`statement ${this.name} is prepared with another text on this connection`);
    const parts: Buffer[] = [];
    if (this.setup) parts.push(this.setup);
    // pg records the statement as parsed when ParseComplete arrives (it reads name and text).
    if (parsed === undefined) parts.push(serialize.parse({ name: this.name, text: this.text }));
    parts.push(this.exec.bytes);
    connection.stream.write(parts.length === 1 ? parts[0] : Buffer.concat(parts));
    return undefined;
  }

  handleDataRow(msg: { fields: (string | null)[] }): void {
    this.ids.push(Number(msg.fields[0]));
  }

  handleReadyForQuery(): void {
    if (this.failed) return;
    if (this.setup) this.conn.setup = this.setup;
    this.release();
    this.resolve(this.ids);
  }

  handleError(err: Error): void {
    if (this.failed) return;
    this.failed = true;
    // A failed batch rolls its SETs back: apply them again next time.
    this.conn.setup = null;
    this.release();
    this.reject(err);
  }

  handleRowDescription(): void {}
  handleCommandComplete(): void {}
  handlePortalSuspended(): void {}
  handleEmptyQuery(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}
}

/** `count` dedicated connections; at most `count` executions outstanding at once. */
export class PgIdConnections {
  private readonly free: Connection[];
  private next = 0;

  private constructor(private readonly all: Connection[]) {
    this.free = [...all];
  }

  /** Opens them all now (connecting inside a timed point would add to its latencies). */
  static async open(o: PgConnectionOptions, count: number): Promise<PgIdConnections> {
    const all: Connection[] = [];
    try {
      // A few at a time: PostgreSQL forks a backend per connection.
      for (let i = 0; i < count; i += 8) {
        const batch = Array.from({ length: Math.min(8, count - i) }, () => new pg.Client({ host: o.host, port: o.port, user: o.user, database: o.database, password: o.password, connectionTimeoutMillis: 10_000 }));
        for (const client of batch) {
          client.on('error', () => {}); // a broken connection: its next execution reports it
          all.push({ client, setup: null, busy: 0 });
        }
        await Promise.all(batch.map((c) => c.connect()));
      }
    } catch (e) {
      await Promise.all(all.map((c) => c.client.end().catch(() => {})));
      throw e;
    }
    return new PgIdConnections(all);
  }

  get size(): number {
    return this.all.length;
  }

  /** Runs the execution on a free connection; `setup` (encodeSetup) is applied first where the
   * connection does not have it yet. Resolves with the first column of its rows. */
  execute(exec: PgExecution, setup: Buffer | null = null): Promise<number[]> {
    // None free only when the caller gave up on executions still under way (a time-out): queue
    // behind one of them (pg sends it when that one is answered).
    const conn = this.free.pop() ?? this.all[this.next++ % this.all.length];
    conn.busy++;
    const send = setup !== null && conn.setup !== setup ? setup : null;
    return new Promise<number[]>((resolve, reject) => {
      conn.client.query(new IdExecution(exec, send, conn, this.free, resolve, reject) as unknown as pg.Submittable);
    });
  }

  /** Runs plain SQL on every connection (none may be executing). */
  async onEvery(sql: string): Promise<void> {
    await Promise.all(this.all.map((c) => c.client.query(sql)));
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((c) => c.client.end().catch(() => {})));
  }
}
