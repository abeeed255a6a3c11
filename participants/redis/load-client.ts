// The load generator's client for Redis vector sets (EngineSession.loadClient; redis-q8 shares
// it): built in each client worker thread, it opens its own @redis/client connections to the
// participant's server, one per in-flight request (VSIM holds its connection while Redis's
// thread works, so requests sharing one would queue behind each other), handed out from a free
// list. It sends the session's own command (adapter.ts vsimArgs: the participant's query, FILTER
// translation and knobs), built once per query before the timed loop.
import { createClient } from '@redis/client';
import type * as sdk from '../../src/sdk/index.ts';
import { clientOptions, parseKnobs, vsimArgs, type RedisLoadOptions } from './adapter.ts';

/** The null ceiling its points are held against (`vecbench ceiling --protocols redis`). */
export const protocol = 'redis';

/** What this client uses of an @redis/client connection. */
interface RedisConnection {
  connect(): Promise<unknown>;
  close(): Promise<unknown>;
  sendCommand(args: (string | Buffer)[]): Promise<unknown>;
  on(event: 'error', listener: (e: Error) => void): unknown;
}

interface Connection {
  c: RedisConnection;
  /** Commands sent and not answered (more than one only after a time-out gave up on one). */
  busy: number;
}

export const createLoadClient: sdk.CreateLoadClient = async (options, ctx) => {
  const o = options as RedisLoadOptions;
  const all: Connection[] = [];
  try {
    for (let i = 0; i < Math.max(1, ctx.maxInFlight); i++) {
      const c = createClient(clientOptions(o.connection)) as unknown as RedisConnection;
      c.on('error', () => {}); // a broken connection: its next command reports it
      all.push({ c, busy: 0 });
    }
    await Promise.all(all.map((x) => x.c.connect()));
  } catch (e) {
    await Promise.all(all.map((x) => x.c.close().catch(() => {})));
    throw e;
  }
  const free = [...all];
  let next = 0;
  let knobs = parseKnobs({});

  const prepare = (r: sdk.SearchRequest): (string | Buffer)[] => {
    if (r.vector.length !== o.d) throw new Error(`query vector has ${r.vector.length} dimensions, the set ${o.d}`);
    // A copy: the request's vector is a view into memory shared with other threads.
    return vsimArgs({ ...r, vector: r.vector.slice() }, knobs);
  };

  const client: sdk.LoadClient = {
    async setKnobs(k: sdk.Knobs) {
      knobs = parseKnobs(k);
    },
    prepare,
    async search(r, prepared) {
      const args = (prepared as (string | Buffer)[] | undefined) ?? prepare(r);
      // None free only after a time-out gave up on a request still under way: queue behind it.
      const conn = free.pop() ?? all[next++ % all.length];
      conn.busy++;
      try {
        const reply = (await conn.c.sendCommand(args)) as unknown as (string | Buffer)[];
        const ids = new Array<number>(reply.length);
        for (let i = 0; i < reply.length; i++) ids[i] = Number(reply[i]);
        return ids;
      } finally {
        if (--conn.busy === 0) free.push(conn);
      }
    },
    async close() {
      await Promise.all(all.map((x) => x.c.close().catch(() => {})));
    },
  };
  return client;
};
