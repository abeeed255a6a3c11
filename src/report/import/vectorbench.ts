// VectorBench's published result JSON -> a vecbench ResultFile (origin 'imported').
//
// A VectorBench file holds one participant on one dataset: `participant`, `name`, `system`,
// `version`, `dataset`, `hardware`, `index.params`, and `groups[]`. A VectorBench group is one
// (filter, k, view) — `view` is 'throughput' or 'latency', keys look like `none/10` — or an
// exact-search run of it (`exact: true`, its key prefixed with the word exact, e.g.
// exact/none/10). Here the groups of one (filter, k) become one vecbench group: each point keeps
// its view, and exact-search points keep their knobs plus a `search` knob of value EXACT (the
// word exact) with the flag `exact-search`, which the cells read as
// a row of their own (src/report/exact-search.ts), apart from the ANN curve. Recall is kept as VectorBench measured it:
// `recall` is tie-aware (our headline), `recall_strict` strict. What the file does not record
// (threshold recall, p99.9 latency, id checks...) is listed in extra.import.not_recorded and
// shown as "not recorded" on the page; the number stored in its place is 0.
import { basename } from 'node:path';
import { z } from 'zod';
import { groupOrder } from '../cells.ts';
import { EXACT } from '../exact-search.ts';
import { RESULT_FORMAT, resultSchema, type ResultFile, type ResultPoint } from '../../results/schema.ts';
import { UserError } from '../../util/errors.ts';
import { checkImportedName, importedName, importedReadings, NOT_RECORDED, plainKnobs, type DatasetInfo } from './common.ts';

const VECTORBENCH = 'vectorbench';

const num = z.number().refine(Number.isFinite, 'must be a finite number');

const latencySchema = z.object({ n: num, min: num, avg: num, p50: num, p95: num, p99: num, max: num }).partial().passthrough();

const pointSchema = z
  .object({
    ladder_index: z.number().int().nonnegative(),
    knobs: z.record(z.string(), z.unknown()).default({}),
    // null where VectorBench recorded no recall: the point is skipped (with a note), as
    // VectorBench itself skips it.
    recall: num.nullable(),
    recall_strict: num.optional(),
    tail: z.unknown().optional(),
    short_results: z.number().int().nonnegative().optional(),
    qps: num,
    latency_ms: latencySchema.optional(),
    queries: z.number().int().positive().optional(),
    duration: num.optional(),
  })
  .passthrough();

const groupSchema = z
  .object({
    key: z.string().min(1),
    filter: z.string().min(1).optional(),
    k: z.number().int().positive().optional(),
    exact: z.boolean().optional(),
    view: z.enum(['throughput', 'latency']).optional(),
    clients: z.number().int().positive().optional(),
    status: z.string().optional(),
    reason: z.string().optional(),
    startup: z.unknown().optional(),
    points: z.array(pointSchema).default([]),
  })
  .passthrough();

const vectorBenchSchema = z
  .object({
    participant: z.string().min(1).optional(),
    name: z.string().min(1).optional(),
    system: z.string().min(1),
    version: z.union([z.string(), z.number()]).optional(),
    dataset: z.union([z.string().min(1), z.object({ name: z.string().min(1) }).passthrough()]),
    hardware: z.unknown().optional(),
    index: z.object({ params: z.unknown().optional() }).passthrough().optional(),
    groups: z.array(groupSchema),
  })
  .passthrough()
  .refine((f) => f.participant !== undefined || f.name !== undefined, { message: 'needs a participant or a name', path: ['participant'] });
type VectorBenchFile = z.infer<typeof vectorBenchSchema>;

/** True when parsed JSON looks like a VectorBench result file (used to pick the importer). */
export function looksLikeVectorBench(raw: unknown): boolean {
  if (typeof raw !== 'object' || raw === null) return false;
  const o = raw as Record<string, unknown>;
  return Array.isArray(o.groups) && 'system' in o && ('participant' in o || 'name' in o) && o.format === undefined;
}

/** Our status for one of VectorBench's. */
function mapStatus(s: string | undefined, hasPoints: boolean): { status: ResultFile['groups'][number]['status']; reason?: string } {
  const v = (s ?? '').toLowerCase().replace(/[\s-]+/g, '_');
  if (v === '' || ['measured', 'ok', 'done', 'complete', 'completed', 'success'].includes(v))
    return {
      status: hasPoints || v !== '' ? 'measured' : 'failed',
      reason: hasPoints || v !== '' ? undefined : 'no status and no points in the imported file',
    };
  // VectorBench's n/a is a group it did not ask (e.g. "median 999 matching rows < 1000"), not
  // an engine unable to filter.
  if (['not_asked', 'skipped_selectivity', 'too_selective', 'n/a', 'na'].includes(v))
    return { status: 'not_asked', reason: s && v !== 'not_asked' ? `VectorBench status "${s}"` : undefined };
  if (['unsupported', 'not_supported'].includes(v)) return { status: 'unsupported' };
  if (['failed', 'error', 'timeout', 'crashed'].includes(v)) return { status: 'failed' };
  return { status: hasPoints ? 'measured' : 'failed', reason: `VectorBench status "${s}"` };
}

/** filter and k of a VectorBench group, from its fields or its key (`none/10`, or the same
 * prefixed with the word exact: exact/none/10). */
function groupIdentity(g: VectorBenchFile['groups'][number]): { filter: string; k: number; exact: boolean } {
  const parts = g.key.split('/');
  const exactKey = parts[0] === EXACT;
  const rest = exactKey ? parts.slice(1) : parts;
  const filter = g.filter ?? rest[0];
  const k = g.k ?? Number(rest[rest.length - 1]);
  if (!filter || !Number.isInteger(k) || k <= 0)
    throw new UserError(`VectorBench group "${g.key}" has no filter/k (expected a key like none/10 or fields filter and k)`);
  return { filter, k, exact: g.exact === true || exactKey };
}

function hardwareOf(raw: unknown): ResultFile['hardware'] {
  const h = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const str = (...keys: string[]) => {
    for (const k of keys) if (typeof h[k] === 'string' && h[k]) return h[k] as string;
    return typeof raw === 'string' && keys.includes('cpu') ? raw : NOT_RECORDED;
  };
  const int = (...keys: string[]) => {
    for (const k of keys) if (typeof h[k] === 'number' && Number.isFinite(h[k])) return h[k] as number;
    return 0;
  };
  return {
    cpu: str('cpu', 'cpu_model', 'processor', 'model'),
    cores: Math.max(0, Math.round(int('cores', 'cpus', 'cpu_count', 'vcpus'))),
    memory_bytes: int('memory_bytes', 'memory', 'ram_bytes'),
    os: str('os', 'platform', 'kernel'),
    node: str('node', 'runtime'),
  };
}

interface VectorBenchOptions {
  /** The vecbench dataset the figures belong to (from --dataset or the file's dataset name
   * when it is prepared here); else the file's own description is used. */
  dataset?: DatasetInfo;
  vecbenchVersion: string;
  now?: Date;
}

export function convertVectorBench(raw: unknown, source: string, opts: VectorBenchOptions): ResultFile {
  const parsed = vectorBenchSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(`${source}: not a VectorBench result file: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const f = parsed.data;
  const displayName = f.participant ?? f.name!;
  const participant = importedName(source, f.participant !== undefined ? 'participant' : 'name', displayName, VECTORBENCH);
  const now = (opts.now ?? new Date()).toISOString();
  const notRecorded = new Set<string>(['query_slice', 'latency_ms.p999', 'median_matches', 'query_seed']);

  // Dataset: ours when known, else what the file says.
  const fileDs = typeof f.dataset === 'string' ? { name: f.dataset } : (f.dataset as Record<string, unknown> & { name: string });
  const dsField = (k: string): unknown => (fileDs as Record<string, unknown>)[k];
  const dsNum = (k: string) => {
    const v = dsField(k);
    return typeof v === 'number' && Number.isFinite(v) ? v : 0;
  };
  const dsStr = (k: string) => {
    const v = dsField(k);
    return typeof v === 'string' ? v : NOT_RECORDED;
  };
  checkImportedName(source, typeof f.dataset === 'string' ? 'dataset' : 'dataset.name', fileDs.name);
  const dataset: DatasetInfo = opts.dataset ?? {
    name: fileDs.name,
    n: Math.round(dsNum('n')),
    d: Math.round(dsNum('d')),
    nq: Math.round(dsNum('nq')),
    metric: dsStr('metric'),
    hash: dsStr('hash'),
  };

  // One vecbench group per (filter, k).
  const byKey = new Map<string, { filter: string; k: number; parts: VectorBenchFile['groups'] }>();
  for (const [i, g] of f.groups.entries()) {
    const id = groupIdentity(g);
    if (g.filter !== undefined) checkImportedName(source, `groups.${i}.filter`, id.filter);
    else checkImportedName(source, `groups.${i}.key`, id.filter, g.key);
    const key = `${id.filter}/${id.k}`;
    const entry = byKey.get(key) ?? { filter: id.filter, k: id.k, parts: [] };
    entry.parts.push(g);
    byKey.set(key, entry);
  }
  const startup: Record<string, unknown> = {};
  const tails: { group: string; view: string; ladder_index: number; exact: boolean; tail: unknown }[] = [];
  let maxClients = 1;
  const groups: z.input<typeof resultSchema>['groups'] = [];
  for (const [key, { filter, k, parts }] of byKey) {
    const points: ResultPoint[] = [];
    const skipped: ResultFile['groups'][number]['skipped'] = [];
    // Exact-search points follow the ANN ladder so ladder indices stay distinct per view.
    const annTop = Math.max(-1, ...parts.filter((g) => !groupIdentity(g).exact).flatMap((g) => g.points.map((p) => p.ladder_index)));
    for (const g of parts) {
      const { exact } = groupIdentity(g);
      const view = g.view ?? 'throughput';
      const clients = g.clients ?? 1;
      if (view === 'throughput') maxClients = Math.max(maxClients, clients);
      if (g.startup !== undefined) startup[g.key] = g.startup;
      for (const p of g.points) {
        const ladderIndex = exact ? annTop + 1 + p.ladder_index : p.ladder_index;
        if (p.recall === null) {
          skipped.push({
            ladder_index: ladderIndex,
            knobs: exact ? { ...plainKnobs(p.knobs), search: EXACT } : plainKnobs(p.knobs),
            reason: `${g.key} (${view} view): recall is null in the imported file; the point is skipped, as VectorBench skips it`,
          });
          continue;
        }
        const lat = p.latency_ms ?? {};
        if (p.latency_ms === undefined) notRecorded.add('latency_ms');
        // The readings VectorBench records; every other declared one is not recorded.
        const readings = importedReadings({ recall: p.recall, recall_strict: p.recall_strict, short_results: p.short_results }, notRecorded);
        if (p.queries === undefined && lat.n === undefined) notRecorded.add('queries');
        const queries = p.queries ?? (lat.n !== undefined && Number.isInteger(lat.n) && lat.n > 0 ? lat.n : 1);
        if (p.tail !== undefined) tails.push({ group: key, view, ladder_index: ladderIndex, exact, tail: p.tail });
        points.push({
          ladder_index: ladderIndex,
          knobs: exact ? { ...plainKnobs(p.knobs), search: EXACT } : plainKnobs(p.knobs),
          view,
          clients: view === 'latency' ? 1 : clients,
          queries,
          query_slice: [0, 0],
          ...readings,
          qps: p.qps,
          duration_s: p.duration ?? (p.qps > 0 ? queries / p.qps : 0),
          latency_ms: { mean: lat.avg ?? 0, p50: lat.p50 ?? 0, p95: lat.p95 ?? 0, p99: lat.p99 ?? 0, p999: 0, max: lat.max ?? 0 },
          flags: exact ? ['imported', 'exact-search'] : ['imported'],
        });
      }
    }
    const statuses = parts.map((g) =>
      mapStatus(
        g.status,
        g.points.some((p) => p.recall !== null),
      ),
    );
    const st = statuses.find((s) => s.status === 'measured') ?? statuses[0];
    const reason = parts.map((g) => g.reason).find((r) => r !== undefined) ?? st.reason;
    groups.push({
      key,
      filter,
      k,
      status: st.status,
      ...(reason !== undefined && st.status !== 'measured' ? { reason } : {}),
      median_matches: 0,
      points: points.sort((a, b) => a.ladder_index - b.ladder_index || a.view.localeCompare(b.view)),
      skipped,
    });
  }
  groups.sort((a, b) => groupOrder(a.key)[0] - groupOrder(b.key)[0] || groupOrder(a.key)[1] - groupOrder(b.key)[1] || a.key.localeCompare(b.key));

  const extraFields = Object.fromEntries(
    Object.entries(f).filter(([k]) => !['participant', 'name', 'system', 'version', 'dataset', 'hardware', 'index', 'groups'].includes(k)),
  );
  return resultSchema.parse({
    format: RESULT_FORMAT,
    participant,
    engine: f.system,
    engine_version: f.version !== undefined ? String(f.version) : NOT_RECORDED,
    origin: 'imported',
    dataset,
    settings: {
      index: f.index?.params ?? f.index ?? {},
      ladders: [],
      notes: `imported from VectorBench (${basename(source)})${f.name && f.participant && f.name !== f.participant ? `; VectorBench name: ${f.name}` : ''}`,
    },
    filter_strategy: typeof f.filter_strategy === 'string' ? f.filter_strategy : `${NOT_RECORDED} (imported from VectorBench)`,
    hardware: hardwareOf(f.hardware),
    run: {
      vecbench_version: opts.vecbenchVersion,
      started: typeof f.started === 'string' ? f.started : now,
      updated: now,
      query_seed: 0,
      clients: maxClients,
      complete: true,
    },
    load: null,
    groups,
    extra: {
      import: {
        harness: 'VectorBench',
        file: basename(source),
        imported: now,
        participant: displayName,
        ...(f.name !== undefined ? { name: f.name } : {}),
        ...(typeof f.dataset === 'object' ? { dataset: f.dataset } : { dataset: f.dataset }),
        ...(f.hardware !== undefined ? { hardware: f.hardware } : {}),
        ...(Object.keys(startup).length ? { startup } : {}),
        ...(tails.length ? { tails } : {}),
        ...(Object.keys(extraFields).length ? { other_fields: extraFields } : {}),
        not_recorded: [...notRecorded].sort(),
      },
    },
  } satisfies z.input<typeof resultSchema>);
}
