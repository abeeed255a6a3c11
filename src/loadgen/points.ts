// The null ceiling of the host's loop at an in-flight level, measured once per engine handle and
// level: the client-limited rule of the ordinary ladder points (src/runner/measure-group.ts)
// holds an in-process engine's rate against it.
import type { LoadEngine } from './load-options.ts';

const ceilings = new WeakMap<LoadEngine, Map<number, number>>();

/** The in-process ceiling of the host loop at `clients` in flight, cached per engine handle. */
export async function hostCeiling(engine: LoadEngine, clients: number, k: number, timeoutS: number): Promise<number> {
  let m = ceilings.get(engine);
  if (!m) ceilings.set(engine, (m = new Map()));
  let v = m.get(clients);
  if (v === undefined) {
    const n = 20_000;
    const r = await engine.request<'loadgen-result'>({ type: 'loadgen-ceiling', requests: n, inFlight: clients, k }, timeoutS);
    v = n / r.reply.wallS;
    m.set(clients, v);
  }
  return v;
}
