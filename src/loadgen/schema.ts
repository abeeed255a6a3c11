// Result sections of the load generator (docs/loadgen.md, "Load generator"): the closed-loop
// concurrency sweep in `extra.concurrency` and the open-loop ramp in `extra.open_loop`,
// validated before they are stored and when a report reads them. Row fields are flat numbers so
// the page's generic charts can draw them (x: in_flight / offered_qps).
import { z } from 'zod';

const knobs = z.record(z.string(), z.union([z.number(), z.string()]));

const clientSchema = z.object({
  /** in-process: the host's event loop drives the engine in its own process; workers: worker
   * threads each build the participant's load client (a network engine); host-thread: a network
   * engine without loadClient(), driven through its session from the host's one thread. */
  mode: z.enum(['in-process', 'workers', 'host-thread']),
  workers: z.number().int().nonnegative(),
  /** What issued the requests (the load client module, or the host event loop). */
  client: z.string(),
  /** The engine's searches overlap (else one at a time, in-flight capped at 1). */
  concurrent: z.boolean(),
  machine_cores: z.number().int().positive(),
  /** The client's own maximum rate at in-flight 1 measured against a null engine in this run:
   * the host loop's (in-process mode) or the protocol's (workers); null when there is none
   * (host-thread, or a client naming no protocol). */
  ceiling_qps: z.number().nullable(),
  /** workers: what the load client speaks (its module's `protocol` export). */
  protocol: z.string().optional(),
  /** workers: the protocol's null ceiling at each in-flight level it was measured at (the same
   * client against a server of that protocol doing no search work: `vecbench ceiling`). */
  protocol_ceilings: z.array(z.object({ in_flight: z.number().int().positive(), qps: z.number() })).optional(),
  /** The thresholds behind the client-limited flag. */
  rule: z.string(),
  /** --client-hosts: the hosts that ran the client threads (`workers` counts theirs). */
  client_hosts: z.array(z.string()).optional(),
});

/** Latency percentiles besides p99 (which comes first, for the charts), from HDR histograms. */
const ms = z.number().nullable();
const latencyCols = {
  p50_ms: ms,
  p95_ms: ms,
  p999_ms: ms,
  max_ms: ms,
  mean_ms: ms,
};

const sweepPointSchema = z.object({
  in_flight: z.number().int().positive(),
  qps: z.number(),
  /** null: no request succeeded. */
  p99_ms: ms,
  engine_cpu_pct: z.number().nullable(),
  client_cpu_pct: z.number().nullable(),
  /** How busy the client's busiest thread was: % of the time it ran or waited on a run queue
   * for a core (the client-limited flag reads it); null in process. */
  client_busy_pct: z.number().nullable(),
  recall: z.number().nullable(),
  ...latencyCols,
  requests: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  timeouts: z.number().int().nonnegative(),
  duration_s: z.number(),
  /** client_cpu_pct is estimated (in-process: qps / the null ceiling) rather than measured. */
  client_cpu_estimated: z.boolean(),
  /** --client-hosts: each host's share of the point; the point's latencies come from their
   * histograms added up, its counts from theirs summed, client_cpu_pct from their CPU summed. */
  client_hosts: z
    .array(
      z.object({
        host: z.string(),
        in_flight: z.number().int().positive(),
        requests: z.number().int().nonnegative(),
        ok: z.number().int().nonnegative(),
        cpu_cores: z.number().nullable(),
        busiest_thread: z.number().nullable(),
      }),
    )
    .optional(),
  /** What the client could sustain at this point's cost: qps / client cores x the client's cores. */
  client_capacity_qps: z.number().nullable(),
  first_error: z.string().optional(),
  flags: z.array(z.string()),
});
export type SweepPoint = z.infer<typeof sweepPointSchema>;

export const concurrencySchema = z.object({
  format: z.literal('vecbench-concurrency/1'),
  group: z.string(),
  knobs,
  /** How the knobs were chosen. */
  knobs_reason: z.string(),
  client: clientSchema,
  requests_per_point: z.number().int().positive(),
  points: z.array(sweepPointSchema),
  /** The in-flight level after which QPS grew by less than 10 %, and its QPS. */
  saturation: z.object({ in_flight: z.number().int(), qps: z.number() }).nullable(),
  /** Steps where more in-flight requests gave at least 10 % LESS throughput. */
  anti_scaling: z.array(z.object({ from_in_flight: z.number().int(), to_in_flight: z.number().int(), qps_from: z.number(), qps_to: z.number() })),
  notes: z.array(z.string()),
});
export type ConcurrencySection = z.infer<typeof concurrencySchema>;

const openStepSchema = z.object({
  offered_qps: z.number(),
  achieved_qps: z.number(),
  /** null: no request succeeded. */
  p99_ms: ms,
  engine_cpu_pct: z.number().nullable(),
  client_cpu_pct: z.number().nullable(),
  /** How busy the client's busiest thread was: % of the time it ran or waited on a run queue
   * for a core (the client-limited flag reads it); null in process. */
  client_busy_pct: z.number().nullable(),
  recall: z.number().nullable(),
  ...latencyCols,
  /** How late requests actually left their intended time (p99): a client that falls behind. */
  send_lag_p99_ms: z.number(),
  requests: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  timeouts: z.number().int().nonnegative(),
  duration_s: z.number(),
  client_cpu_estimated: z.boolean(),
  within_budget: z.boolean(),
  first_error: z.string().optional(),
  flags: z.array(z.string()),
});
export type OpenStep = z.infer<typeof openStepSchema>;

export const openLoopSchema = z.object({
  format: z.literal('vecbench-open-loop/1'),
  group: z.string(),
  knobs,
  knobs_reason: z.string(),
  client: clientSchema,
  /** Arrivals: Poisson, seeded; latency from each request's intended send time. */
  arrivals: z.literal('poisson'),
  seed: z.number().int(),
  budget_p99_ms: z.number(),
  step_s: z.number(),
  /** Where the offered rates came from: given, or a ramp over the closed-loop peak. */
  rates_from: z.string(),
  steps: z.array(openStepSchema),
  /** The highest offered rate whose p99 stayed within the budget (no errors, not client-limited). */
  max_qps_within_budget: z.number().nullable(),
  /** The first offered rate the engine could not keep up with (achieved < 90 % of offered). */
  saturated_at_qps: z.number().nullable(),
  notes: z.array(z.string()),
});
export type OpenLoopSection = z.infer<typeof openLoopSchema>;
