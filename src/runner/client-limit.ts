// When a measured point says more about the client than the engine (docs/method.md §5: the client must
// never be the limit). One rule for the sweep, the open loop and the ordinary points:
// - a client with threads of its own (worker threads, or the host's thread driving a network
//   engine) is limited when its busiest thread was running or waiting for a core (run + run-queue
//   wait, so a client starved by other work on the machine counts as busy) for CLIENT_CPU_LIMIT
//   of the time: an event loop that never waits for I/O is the limit; or,
//   in the open loop, when requests leave later than SEND_LAG_LIMIT_MS after their intended time
//   at p99 (it could not keep its own schedule);
// - an in-process engine shares its thread with the client, whose cost per request is known
//   from the null ceiling (the same loop against an engine that answers at once): the point is
//   limited when its rate reaches CEILING_FRACTION of that ceiling, i.e. when the client's share
//   of the thread's time reaches that fraction;
// - a network engine driven from worker threads is held against its protocol's null ceiling too
//   (the same client and protocol against a server that does no work: src/loadgen/ceiling.ts
//   protocolCeilings, at the same in-flight level): limited when its rate reaches
//   CEILING_FRACTION of it. This reads the protocol's own costs (the server side of the protocol
//   shares the machine's cores with the client), which the busy-thread rule cannot see.
const CLIENT_CPU_LIMIT = 0.9;
const CEILING_FRACTION = 0.5;
const SEND_LAG_LIMIT_MS = 5;

export const CLIENT_LIMIT_RULE = `client-limited when the client's busiest thread ran or waited for a core ${CLIENT_CPU_LIMIT * 100} % of the time, when open-loop requests leave more than ${SEND_LAG_LIMIT_MS} ms late at p99 (client threads of their own), or when the point's rate reaches ${CEILING_FRACTION * 100} % of the null-engine ceiling (in process: the host loop's; worker threads: the protocol's, at the same in-flight level)`;

interface ClientLoad {
  /** 'in-process': the client shares the engine's thread; 'threads': it has its own. */
  mode: 'in-process' | 'threads';
  qps: number;
  /** The null ceiling at this in-flight level: the host loop's (in process) or the protocol's
   * (threads); null or absent when unknown. */
  ceilingQps?: number | null;
  /** Threads: the busiest client thread's (run + run-queue wait) / wall time, 0..1. */
  busiestThread?: number | null;
  /** Open loop: p99 of how late requests left. */
  sendLagP99Ms?: number;
}

export function isClientLimited(x: ClientLoad): boolean {
  const nearCeiling = x.ceilingQps != null && x.ceilingQps > 0 && x.qps >= CEILING_FRACTION * x.ceilingQps;
  if (x.mode === 'in-process') return nearCeiling;
  if (nearCeiling) return true;
  if (x.busiestThread != null && x.busiestThread >= CLIENT_CPU_LIMIT) return true;
  return x.sendLagP99Ms !== undefined && x.sendLagP99Ms > SEND_LAG_LIMIT_MS;
}
