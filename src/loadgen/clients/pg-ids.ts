// The load generator's PostgreSQL fast path, shared by the load client of a participant whose
// server speaks PostgreSQL and the fidelity bench's client (so the bench measures the path
// `vecbench run` uses). Measured against pgbench on a 2-core machine, where every microsecond
// of client CPU is taken from the server, pg's general machinery (pool checkout, Query and
// Result objects, a message object and an event per protocol message, every field decoded to a
// string) cost twice the client CPU per query that PostgreSQL's own client spends. So:
// - one dedicated connection per in-flight request, handed out from a free list;
// - pg connects and authenticates (trust, md5, SCRAM, TLS: all its own); then this module takes
//   the connection's byte stream over and reads the backend messages itself, keeping only what a
//   search needs: the first column of each row, read as an integer straight from the bytes;
// - each execution is encoded once, before the timed loop (LoadClient.prepare): Bind + Execute +
//   Sync of a named prepared statement with pg-protocol's serializer, written in one socket
//   write; the statement is parsed (Parse) on a connection's first use, in the same write;
// - session settings (knob SETs, plan_cache_mode) that must hold for an execution travel in the
//   same write, as unnamed extended-protocol statements, on the connections that lack them: no
//   extra round trip per point.
import { Socket } from 'node:net';
import pg from 'pg';
import { serialize } from 'pg-protocol';

interface PgConnectionOptions {
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

/** Session settings, encoded ahead of time (compared by identity: one object per setting). */
export interface PgSetup {
  bytes: Buffer;
  /** How many statements (each answers with its own ParseComplete). */
  statements: number;
}

const EXECUTE_SYNC = Buffer.concat([serialize.execute(), serialize.sync()]);

/** Encodes an execution of statement `name` (`text`) with these parameters: Buffers bind in
 * binary (e.g. a vector type's binary receive form), numbers and strings as text. */
export function encodeExecution(name: string, text: string, values: readonly (Buffer | string | number | null)[]): PgExecution {
  const bind = serialize.bind({ statement: name, values: values.map((v) => (typeof v === 'number' ? String(v) : v)) });
  return { name, text, bytes: Buffer.concat([bind, EXECUTE_SYNC]) };
}

/** Session settings as unnamed extended-protocol statements (Parse + Bind + Execute each; one
 * statement per Parse), to go ahead of an execution before its Sync. */
export function encodeSetup(statements: readonly string[]): PgSetup {
  return {
    bytes: Buffer.concat(statements.flatMap((sql) => [serialize.parse({ text: sql }), serialize.bind(), serialize.execute()])),
    statements: statements.length,
  };
}

/** One execution sent on a connection and not answered yet. */
interface Pending {
  resolve: (ids: number[]) => void;
  reject: (e: Error) => void;
  ids: number[];
  error: Error | null;
  /** The setup sent with it (applied when the batch succeeds), or null. */
  setup: PgSetup | null;
  /** The statement it parsed on first use (recorded when its ParseComplete arrives), or null. */
  parsedName: string | null;
  parsedText: string;
  /** ParseCompletes still to come before the named statement's own. */
  parsesBefore: number;
}

/** The error PostgreSQL sent: its message, SQLSTATE code and severity. */
class PgServerError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly severity: string,
  ) {
    super(message);
  }
}

/** Reads the fields of an ErrorResponse body (type byte + C string, ..., 0). */
function serverError(b: Buffer, start: number, end: number): PgServerError {
  const fields: Record<string, string> = {};
  let i = start;
  while (i < end && b[i] !== 0) {
    const type = String.fromCharCode(b[i]);
    const z = b.indexOf(0, i + 1);
    if (z < 0 || z >= end) break;
    fields[type] = b.toString('utf8', i + 1, z);
    i = z + 1;
  }
  return new PgServerError(fields.M ?? 'PostgreSQL reported an error without a message', fields.C ?? '', fields.S ?? fields.V ?? 'ERROR');
}

/** A text-format integer field as a number, read from its bytes (anything else through Number). */
function intField(b: Buffer, start: number, end: number): number {
  let i = start;
  let neg = false;
  if (b[i] === 45 /* - */) {
    neg = true;
    i++;
  }
  let v = 0;
  for (; i < end; i++) {
    const c = b[i] - 48;
    if (c < 0 || c > 9) return Number(b.toString('latin1', start, end));
    v = v * 10 + c;
  }
  return neg ? -v : v;
}

/** One connection, read by this module once pg has opened it. */
class Connection {
  /** The setup last applied on it (null: none or unknown). */
  setup: PgSetup | null = null;
  private readonly parsed = new Map<string, string>();
  private readonly pending: Pending[] = [];
  private rest: Buffer | null = null;
  private closedError: Error | null = null;
  /** Whether this module reads the socket yet (pg does until it has authenticated). */
  private mine = false;

  constructor(
    readonly client: pg.Client,
    private readonly stream: Socket,
    private readonly onIdle: (c: Connection) => void,
  ) {}

  /** Bytes read from the socket into its one reused buffer (net.Socket's onread: no Buffer and
   * no stream events per read). Until the take-over they go to pg, as the 'data' it listens for. */
  onRead(n: number, buf: Buffer): void {
    if (this.mine) this.read(buf.subarray(0, n));
    else this.stream.emit('data', Buffer.from(buf.subarray(0, n)));
  }

  /** pg has connected and authenticated: from now on this reads the socket. pg keeps listening
   * for the stream's end and errors. */
  takeOver(): void {
    this.mine = true;
    const stream = this.stream;
    const closed = (why: string) => {
      this.closedError ??= new Error(why);
      for (const p of this.pending.splice(0)) p.reject(this.closedError);
    };
    stream.on('close', () => closed('the PostgreSQL connection closed'));
    stream.on('error', (e: Error) => closed(`the PostgreSQL connection failed: ${e.message}`));
  }

  send(exec: PgExecution, setup: PgSetup | null, resolve: (ids: number[]) => void, reject: (e: Error) => void): void {
    if (this.closedError || !this.stream.writable) {
      reject(this.closedError ?? new Error('the PostgreSQL connection is closed'));
      return;
    }
    const known = this.parsed.get(exec.name);
    if (known !== undefined && known !== exec.text) {
      reject(new Error(`statement ${exec.name} is prepared with another text on this connection`));
      if (this.pending.length === 0) this.onIdle(this);
      return;
    }
    // A statement still being parsed by an earlier, unanswered batch is not parsed again.
    const parsing = known === undefined && this.pending.some((p) => p.parsedName === exec.name);
    const parse = known === undefined && !parsing;
    this.pending.push({
      resolve,
      reject,
      ids: [],
      error: null,
      setup,
      parsedName: parse ? exec.name : null,
      parsedText: exec.text,
      parsesBefore: setup ? setup.statements : 0,
    });
    if (!setup && !parse) this.stream.write(exec.bytes);
    else
      this.stream.write(
        Buffer.concat([...(setup ? [setup.bytes] : []), ...(parse ? [serialize.parse({ name: exec.name, text: exec.text })] : []), exec.bytes]),
      );
  }

  /** Backend messages: type byte, int32 length (counting itself), body. */
  private read(chunk: Buffer): void {
    let b = chunk;
    if (this.rest) {
      b = Buffer.concat([this.rest, chunk]);
      this.rest = null;
    }
    let i = 0;
    const n = b.length;
    while (n - i >= 5) {
      const len = b.readInt32BE(i + 1);
      const end = i + 1 + len;
      if (end > n) break;
      this.message(b[i], b, i + 5, end);
      i = end;
    }
    // (A copy: `chunk` is the socket's reused read buffer.)
    if (i < n) this.rest = Buffer.from(b.subarray(i));
  }

  private message(type: number, b: Buffer, start: number, end: number): void {
    const p = this.pending[0];
    switch (type) {
      case 68: // D DataRow: int16 fields, then int32 length + bytes per field; the first is the id
        if (p && b.readInt16BE(start) > 0) {
          const len = b.readInt32BE(start + 2);
          p.ids.push(len < 0 ? NaN : intField(b, start + 6, start + 6 + len));
        }
        return;
      case 49: // 1 ParseComplete
        if (p && p.parsedName !== null && p.parsesBefore-- === 0) this.parsed.set(p.parsedName, p.parsedText);
        return;
      case 69: // E ErrorResponse (the server then skips to the Sync)
        if (p) p.error ??= serverError(b, start, end);
        return;
      case 90: // Z ReadyForQuery: the batch is over
        if (!p) return;
        this.pending.shift();
        if (p.error) {
          // A failed batch rolls its SETs back: apply them again next time.
          this.setup = null;
          p.reject(p.error);
        } else {
          if (p.setup) this.setup = p.setup;
          p.resolve(p.ids);
        }
        if (this.pending.length === 0) this.onIdle(this);
        return;
      default:
        // BindComplete, CommandComplete, RowDescription, NoData, notices, parameter status...
        return;
    }
  }
}

/** `count` dedicated connections; at most `count` executions outstanding at once. */
export class PgIdConnections {
  private readonly free: Connection[] = [];
  private readonly all: Connection[] = [];
  private next = 0;

  private constructor() {}

  /** Opens them all now (connecting inside a timed point would add to its latencies). */
  static async open(o: PgConnectionOptions, count: number): Promise<PgIdConnections> {
    const self = new PgIdConnections();
    const clients: pg.Client[] = [];
    try {
      // A few at a time: PostgreSQL forks a backend per connection.
      for (let i = 0; i < count; i += 8) {
        const batch: Connection[] = [];
        for (let j = i; j < Math.min(count, i + 8); j++) {
          let conn: Connection | null = null;
          // (Node's Socket constructor takes `onread` as net.connect does; @types/node lists it
          // only among the connect options.)
          const socket = new Socket({
            onread: { buffer: Buffer.allocUnsafe(64 * 1024), callback: (n: number, buf: Buffer) => void conn!.onRead(n, buf) },
          } as ConstructorParameters<typeof Socket>[0]);
          const client = new pg.Client({
            host: o.host,
            port: o.port,
            user: o.user,
            database: o.database,
            password: o.password,
            connectionTimeoutMillis: 10_000,
            stream: () => socket,
          });
          client.on('error', () => {}); // a broken connection: its executions report it
          clients.push(client);
          conn = new Connection(client, socket, (c) => self.free.push(c));
          batch.push(conn);
        }
        await Promise.all(batch.map((c) => c.client.connect()));
        for (const conn of batch) {
          conn.takeOver();
          self.all.push(conn);
          self.free.push(conn);
        }
      }
    } catch (e) {
      await Promise.all(clients.map((c) => c.end().catch(() => {})));
      throw e;
    }
    return self;
  }

  get size(): number {
    return this.all.length;
  }

  /** Runs the execution on a free connection; `setup` (encodeSetup) is applied first where the
   * connection does not have it yet. Resolves with the first column of its rows. */
  execute(exec: PgExecution, setup: PgSetup | null = null): Promise<number[]> {
    // None free only when the caller gave up on executions still under way (a time-out): queue
    // behind one of them (the server answers in order).
    const conn = this.free.pop() ?? this.all[this.next++ % this.all.length];
    const send = setup !== null && conn.setup !== setup ? setup : null;
    return new Promise<number[]>((resolve, reject) => conn.send(exec, send, resolve, reject));
  }

  async close(): Promise<void> {
    // pg writes Terminate and ends the stream (its own listeners for that are still in place).
    await Promise.all(this.all.map((c) => c.client.end().catch(() => {})));
  }
}
