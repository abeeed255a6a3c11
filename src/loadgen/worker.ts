// A client worker thread of the load generator: builds the participant's load client from its
// spec (a module path and plain options, EngineSession.loadClient) and runs the request loops
// of driver.ts against it. Query vectors arrive once, in shared memory.
import { parentPort } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { isAbsolute } from 'node:path';
import type { CreateLoadClient, FilterExpr, LoadClient, SearchRequest } from '../contracts.ts';
import { closedLoop, openLoop, type DriveResult } from './driver.ts';
import type { WorkerReply, WorkerRequest } from './protocol.ts';
import { importable } from '../util/code-paths.ts';

let client: LoadClient | null = null;
let queries: Float32Array | null = null;
let d = 0;

const port = parentPort!;

function transferOf(r: DriveResult): ArrayBuffer[] {
  return [r.indices.buffer, r.latenciesMs.buffer, r.sendLagMs.buffer, r.status.buffer, r.ids.buffer, r.offsets.buffer] as ArrayBuffer[];
}

/** request i -> the client's search. Each distinct query's request (and what prepare makes of
 * it) is built before the clock starts, so the timed loop only looks them up (a query's filter
 * is the same wherever it appears in a point). */
function searchFn(m: { k: number; queries: Int32Array; filters: (FilterExpr | null)[] }): (i: number) => Promise<ArrayLike<number>> {
  const c = client!;
  const n = m.queries.length;
  const byQuery = new Map<number, { request: SearchRequest; prepared: unknown }>();
  const requests: SearchRequest[] = new Array(n);
  const prepared: unknown[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const q = m.queries[i];
    let e = byQuery.get(q);
    if (!e) {
      const request: SearchRequest = { vector: queries!.subarray(q * d, (q + 1) * d), k: m.k, filter: m.filters[i] };
      byQuery.set(q, (e = { request, prepared: c.prepare ? c.prepare(request) : undefined }));
    }
    requests[i] = e.request;
    prepared[i] = e.prepared;
  }
  return c.prepare ? (i) => c.search(requests[i], prepared[i]) : (i) => c.search(requests[i]);
}

async function handle(m: WorkerRequest): Promise<DriveResult | undefined> {
  switch (m.type) {
    case 'init': {
      const url = isAbsolute(m.spec.module) ? pathToFileURL(await importable(m.spec.module)).href : m.spec.module;
      const mod = (await import(url)) as { createLoadClient?: CreateLoadClient };
      if (typeof mod.createLoadClient !== 'function') throw new Error(`load client module ${m.spec.module} exports no createLoadClient`);
      client = await mod.createLoadClient(m.spec.options, { maxInFlight: m.maxInFlight });
      queries = m.queries;
      d = m.d;
      return undefined;
    }
    case 'knobs':
      await client!.setKnobs(m.knobs);
      return undefined;
    case 'closed': {
      const search = searchFn(m);
      const counter = new Int32Array(m.counter);
      const n = m.queries.length;
      // Every worker takes the next request from one shared counter: the in-flight total is
      // exact and no worker idles while another has requests left.
      const next = () => {
        const i = Atomics.add(counter, 0, 1);
        return i < n ? i : -1;
      };
      return closedLoop(search, { inFlight: m.inFlight, timeoutMs: m.timeoutMs, next, n });
    }
    case 'open': {
      const search = searchFn(m);
      return openLoop(search, { indices: m.indices, intendedMs: m.intendedMs, startAtMs: m.startAtMs, maxInFlight: m.maxInFlight, timeoutMs: m.timeoutMs });
    }
    case 'close':
      await client?.close();
      client = null;
      return undefined;
  }
}

port.on('message', (m: WorkerRequest) => {
  handle(m).then(
    (result) => {
      const reply: WorkerReply = { ok: true, result };
      port.postMessage(reply, result ? transferOf(result) : []);
      if (m.type === 'close') port.close();
    },
    (e: unknown) => port.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) } satisfies WorkerReply),
  );
});
