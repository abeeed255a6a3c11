// The wire of load from several client hosts (remote.ts, remote-worker.ts): one JSON message a
// line over TCP, zod-validated both ways, typed arrays as base64, and the protocol version both
// ends must share. Apart from both ends so each imports the messages without the other.
import type { Socket } from 'node:net';
import { z } from 'zod';
import { UserError } from '../util/errors.ts';
import { VECBENCH_VERSION } from '../version.ts';

/** Coordinator and worker must be the same vecbench: the point's meaning depends on both. */
export const PROTOCOL_VERSION = `vecbench-load-worker/1 vecbench ${VECBENCH_VERSION}`;

const b64 = z.string();
export const toB64 = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
export function fromB64<T>(s: string, C: { new (b: ArrayBuffer): T; BYTES_PER_ELEMENT: number }): T {
  const buf = Buffer.from(s, 'base64');
  // A copy: Buffer's pool slice is not aligned for every element size.
  const ab = new ArrayBuffer(buf.length);
  new Uint8Array(ab).set(buf);
  return new C(ab);
}

/** Caps on what one end accepts from the other (docs/security.md): a longer line, more client
 * threads, more requests in flight or more connections are refused in one line each. */
export const LIMITS = {
  /** Bytes of one message; the init's queries are the largest (10,000 x 1,024 floats fit). */
  lineBytes: 128 * 2 ** 20,
  workersPerCore: 4,
  maxInFlight: 100_000,
  connections: 8,
} as const;

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);

export const requestSchema = z.discriminatedUnion('type', [
  /** First, and answered only with the secret's proof (remote-auth.ts). */
  z.object({ type: z.literal('hello'), id: z.number(), version: z.string(), nonce: hex64, proof: hex64 }),
  z.object({ type: z.literal('ping'), id: z.number() }),
  z.object({
    type: z.literal('init'),
    id: z.number(),
    /** The load client by name (remote-auth.ts clientModuleFor), never a path or URL. */
    spec: z.object({ client: z.string().max(200), options: z.unknown() }).strict(),
    /** Client threads; absent: the worker host's default (pool.ts defaultWorkers). */
    workers: z.number().int().positive().optional(),
    maxInFlight: z.number().int().positive().max(LIMITS.maxInFlight),
    d: z.number().int().positive(),
    queries: b64,
  }),
  z.object({ type: z.literal('knobs'), id: z.number(), knobs: z.record(z.string(), z.unknown()) }),
  z.object({
    type: z.literal('closed'),
    id: z.number(),
    k: z.number().int().positive(),
    queries: z.array(z.number().int().nonnegative()),
    filters: z.array(z.unknown()),
    inFlight: z.number().int().positive(),
    timeoutMs: z.number().positive(),
    /** On the worker's own clock (clock.ts nowMs). */
    startAtMs: z.number(),
  }),
  z.object({ type: z.literal('close'), id: z.number() }),
]);
export type RemoteRequest = z.infer<typeof requestSchema>;
export type RemoteRequestBody = RemoteRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

const partSchema = z.object({
  latenciesMs: b64,
  sendLagMs: b64,
  status: b64,
  ids: b64,
  offsets: b64,
  errors: z.number(),
  timeouts: z.number(),
  firstError: z.string().nullable(),
  histogram: z.string(),
  /** Worker clock: when the point started and its last request finished. */
  startMs: z.number(),
  endMs: z.number(),
  cpuCores: z.number().nullable(),
  busiestThread: z.number().nullable(),
});
export type RemotePart = z.infer<typeof partSchema>;

export const replySchema = z.discriminatedUnion('type', [
  /** The worker's first line on every connection. */
  z.object({ type: z.literal('challenge'), id: z.literal(0), nonce: hex64 }),
  z.object({ type: z.literal('hello'), id: z.number(), version: z.string(), cores: z.number(), proof: hex64 }),
  z.object({ type: z.literal('pong'), id: z.number(), nowMs: z.number() }),
  z.object({ type: z.literal('ready'), id: z.number(), workers: z.number() }),
  z.object({ type: z.literal('ok'), id: z.number() }),
  z.object({ type: z.literal('part'), id: z.number(), part: partSchema }),
  z.object({ type: z.literal('error'), id: z.number(), message: z.string() }),
]);
export type RemoteReply = z.infer<typeof replySchema>;

export const send = (s: Socket, m: object) => s.write(`${JSON.stringify(m)}\n`);

/** Calls onLine for each line the socket sends; a line longer than LIMITS.lineBytes calls
 * onTooLong once instead and nothing more is read (a peer cannot make this end hold it). */
export function readLines(sock: Socket, onLine: (line: string) => void, onTooLong: () => void): void {
  let parts: Buffer[] = [];
  let held = 0;
  let stopped = false;
  sock.on('data', (chunk: Buffer) => {
    if (stopped) return;
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl >= 0; nl = chunk.indexOf(10, from)) {
      if (held + nl - from > LIMITS.lineBytes) break;
      parts.push(chunk.subarray(from, nl));
      const line = Buffer.concat(parts).toString('utf8');
      parts = [];
      held = 0;
      from = nl + 1;
      onLine(line);
      if (stopped) return;
    }
    const rest = chunk.length - from;
    if (held + rest > LIMITS.lineBytes || chunk.indexOf(10, from) >= 0) {
      stopped = true;
      parts = [];
      onTooLong();
      return;
    }
    if (rest > 0) {
      parts.push(chunk.subarray(from));
      held += rest;
    }
  });
}
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** "host:port" -> its parts; the fix is named when it is not one. */
export function parseHostPort(v: string, what: string, anyPort = false): { host: string; port: number } {
  const i = v.lastIndexOf(':');
  const port = Number(v.slice(i + 1));
  const host = v.slice(0, i).replace(/^\[|\]$/g, '');
  if (i <= 0 || !Number.isInteger(port) || port < (anyPort ? 0 : 1) || port > 65535)
    throw new UserError(`${what}: "${v}" is not HOST:PORT (write e.g. 10.0.0.2:7100)`);
  return { host, port };
}
