// Work a run has done on groups it has not finished: recall probes (ladder points, calibration)
// and timed passes, one JSON line each, appended and fsynced to
// <out>/<dataset>/.<participant>.progress as they complete. A run stopped during timing and
// resumed reads them back, so its groups continue where they were instead of probing and timing
// again (docs/runs.md, "Resume"). Not results: nothing here is read by the report; the file
// is removed when the participant's result is complete, and a run started afresh discards it.
//
// Each record is keyed by the group, the build, a hash of the group's query set and the knobs,
// so a record is only ever reused for the very measurement it came from. A torn or foreign line
// is skipped, never an error: the worst a damaged file costs is measuring that work again.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { writeAllDurable } from '../util/atomic.ts';

export function progressPath(outDir: string, dataset: string, participant: string): string {
  return join(outDir, dataset, `.${participant}.progress`);
}

const num = z.number().nullable();
const probeSchema = z.object({
  kind: z.literal('probe'),
  key: z.string(),
  summary: z.object({
    queries: z.number(),
    /** Every reading of src/results/readings.ts; absent in journals of before it (such a probe
     * is asked again). */
    readings: z.record(z.string(), z.number()).optional(),
    recall: z.number(),
    recallStrict: z.number(),
    recallThreshold: z.number(),
    shortResults: z.number(),
    lowRecallShare: z.number(),
    unknownIds: z.number(),
    duplicateIds: z.number(),
    filterViolations: z.number(),
    tenantLeaks: z.number(),
    firstLeak: z.object({ query: z.number(), query_tenant: z.number(), row: z.number(), row_tenant: z.number() }).nullable(),
  }),
  perQuery: z.array(z.number()),
  digests: z.array(z.number()).nullable(),
  /** The probe's wall time, s: the timing plan's estimate of a pass. */
  wallS: z.number().optional(),
});
const passSchema = z.object({
  kind: z.literal('pass'),
  key: z.string(),
  view: z.enum(['latency', 'throughput']),
  qps: z.number(),
  wall_s: z.number(),
  at_unix_s: z.number(),
  latency_ms: z.object({ mean: z.number(), p50: z.number(), p95: z.number(), p99: z.number(), p999: z.number(), max: z.number() }),
  other_cores: num,
  steal: num,
  host_ms: num,
  read_bytes: num,
  major_faults: num,
  busy: z.boolean(),
  /** Queries whose answer differed from the recall pass's in this pass. */
  varied: z.array(z.number().int()),
  /** The busiest search thread's share over the pass (null: unmeasured), and the threads used. */
  demand: num,
  threads_used: z.number().int().positive(),
});

export type ProbeRecord = Omit<z.infer<typeof probeSchema>, 'kind' | 'key'>;
export type PassRecord = Omit<z.infer<typeof passSchema>, 'kind' | 'key'>;

/** The key of one measurement: group, build, query set, knobs. */
export function progressKey(group: string, build: number, queries: number[], knobs: Record<string, unknown>): string {
  const q = createHash('sha256')
    .update(new Uint8Array(Int32Array.from(queries).buffer))
    .digest('hex')
    .slice(0, 16);
  const sorted = Object.fromEntries(Object.entries(knobs).sort(([a], [b]) => a.localeCompare(b)));
  return `${group}\u0000${build}\u0000${q}\u0000${JSON.stringify(sorted)}`;
}

/** The progress of one participant on one dataset: what an earlier run kept, and the file this
 * run appends to. */
export class ProgressJournal {
  private readonly probes = new Map<string, ProbeRecord>();
  private readonly passes = new Map<string, PassRecord[]>();
  /** Records read back from an earlier run. */
  readonly restored: { probes: number; passes: number } = { probes: 0, passes: 0 };

  constructor(readonly path: string) {}

  /** Reads what an earlier run kept (a resumed run); whether there was anything. */
  load(): boolean {
    if (!existsSync(this.path)) return false;
    for (const line of readFileSync(this.path, 'utf8').split('\n')) {
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        continue; // the torn last line of a killed append, or the empty tail
      }
      const probe = probeSchema.safeParse(raw);
      if (probe.success) {
        const { kind: _, key, ...rec } = probe.data;
        this.probes.set(key, rec);
        this.restored.probes++;
        continue;
      }
      const pass = passSchema.safeParse(raw);
      if (pass.success) {
        const { kind: _, key, ...rec } = pass.data;
        const k = `${key}\u0000${rec.view}`;
        this.passes.set(k, [...(this.passes.get(k) ?? []), rec]);
        this.restored.passes++;
      }
    }
    return this.restored.probes + this.restored.passes > 0;
  }

  probe(key: string): ProbeRecord | undefined {
    return this.probes.get(key);
  }

  /** The passes kept for one (measurement, view), oldest first. */
  passesOf(key: string, view: PassRecord['view']): PassRecord[] {
    return this.passes.get(`${key}\u0000${view}`) ?? [];
  }

  keepProbe(key: string, rec: ProbeRecord): void {
    this.probes.set(key, rec);
    this.append({ kind: 'probe', key, ...rec });
  }

  keepPass(key: string, rec: PassRecord): void {
    this.append({ kind: 'pass', key, ...rec });
  }

  /** The participant's result is complete, or a run starts afresh: nothing to continue. */
  discard(): void {
    rmSync(this.path, { force: true });
    this.probes.clear();
    this.passes.clear();
  }

  private append(entry: object): void {
    // Progress is an optimisation: a disk that refuses it loses a resume's head start, not a
    // result (the result file's own writes report a full disk).
    try {
      mkdirSync(dirname(this.path), { recursive: true });
      const fd = openSync(this.path, 'a');
      try {
        writeAllDurable(fd, Buffer.from(`${JSON.stringify(entry)}\n`));
      } finally {
        closeSync(fd);
      }
    } catch {
      /* see above */
    }
  }
}
