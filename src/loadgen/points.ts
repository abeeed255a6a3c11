// The client-limited flag on the ordinary ladder points (src/runner/measure-group.ts): the
// host's own thread drives them, so for a server the host's CPU is the client's CPU (one thread
// available); for an in-process engine the point's rate is held against the null ceiling of the
// host's loop at the same in-flight level (measured once per engine handle and level).
import { DemandMeter } from './cpu.ts';
import { isClientLimited } from './flags.ts';
import type { LoadEngine } from './sweep.ts';

const ceilings = new WeakMap<LoadEngine, Map<number, number>>();

/** Starts measuring the client's CPU for one ordinary point (the host process). */
export function startPointMeter(engine: LoadEngine): DemandMeter {
  return new DemandMeter(engine.loadPids().host);
}

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

/** ['client-limited'] when the point's client neared its limit, else []. */
export async function pointClientFlags(engine: LoadEngine, server: boolean, meter: DemandMeter, qps: number, clients: number, k: number, timeoutS: number): Promise<string[]> {
  const limited = server
    ? isClientLimited({ mode: 'threads', qps, busiestThread: meter.busiestThread() })
    : isClientLimited({ mode: 'in-process', qps, ceilingQps: await hostCeiling(engine, clients, k, timeoutS) });
  return limited ? ['client-limited'] : [];
}
