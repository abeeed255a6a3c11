// Runbooks (docs/method.md §7): a small declarative list of steps that load an engine, change its rows
// and read it back. Written as JSON, validated here with errors that name the step and the
// field. Three runbooks are built in: freshness, mixed and delete-reinsert.
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { z } from 'zod';
import { parseGroupKey } from '../datasets/groups.ts';
import { UserError } from '../util/errors.ts';

const rowRange = z
  .tuple([z.number().int().nonnegative(), z.number().int().nonnegative()])
  .refine(([from, to]) => from < to, 'write rows as [from, to) with from < to');
const share = z.number().gt(0, 'must be > 0').lte(1, 'must be <= 1');
const batch = z.number().int().positive().max(100_000).default(1000);
/** Which ladder point a read uses: an index, the first or last, or the first point whose
 * recall on the live set reaches a target (measured just before the step that needs it). */
const pointSpec = z.union([z.literal('first'), z.literal('last'), z.number().int().nonnegative(), z.object({ recall: z.number().gt(0).lte(1) }).strict()]);
export type PointSpec = z.infer<typeof pointSpec>;
const DEFAULT_POINT: PointSpec = { recall: 0.95 };
const label = z.string().min(1).max(60).optional();

const loadStep = z
  .object({
    op: z.literal('load'),
    /** Base rows to ingest and index (default: all of them). */
    rows: rowRange.optional(),
    batch: z.number().int().positive().optional(),
  })
  .strict();

const insertStep = z
  .object({
    op: z.literal('insert'),
    /** Base rows (ids from..to-1) that are not live now. */
    rows: rowRange.optional(),
    /** This many new rows (ids past n, vectors between a random base row and a near one). */
    new: z.number().int().positive().optional(),
    /** New rows: this share of the dataset's n base rows. */
    new_share: share.optional(),
    batch,
    label,
  })
  .strict()
  .refine((s) => [s.rows, s.new, s.new_share].filter((x) => x !== undefined).length === 1, 'give exactly one of rows, new, new_share');

const upsertStep = z
  .object({
    op: z.literal('upsert'),
    /** Base row ids from..to-1 get a moved vector (a deleted one comes back). */
    rows: rowRange.optional(),
    /** This share of the live rows (seeded draw) gets a moved vector. */
    share: share.optional(),
    batch,
    label,
  })
  .strict()
  .refine((s) => (s.rows === undefined) !== (s.share === undefined), 'give exactly one of rows, share');

const deleteStep = z
  .object({
    op: z.literal('delete'),
    rows: rowRange.optional(),
    /** This share of the live rows, drawn with the runbook's seed. */
    share: share.optional(),
    batch,
    label,
  })
  .strict()
  .refine((s) => (s.rows === undefined) !== (s.share === undefined), 'give exactly one of rows, share');

const searchStep = z
  .object({
    op: z.literal('search'),
    /** FILTER/K, e.g. none/10 or cat10/10. */
    group: z.string().default('none/10'),
    queries: z.number().int().positive().max(100_000).default(200),
    point: pointSpec.default(DEFAULT_POINT),
    /** Requests in flight (1: the latency view). */
    clients: z.number().int().positive().max(1024).default(1),
    label,
  })
  .strict();

const waitStep = z.object({ op: z.literal('wait'), label }).strict();
const diskStep = z.object({ op: z.literal('disk'), label }).strict();

const freshnessStep = z
  .object({
    op: z.literal('freshness'),
    /** Single-row inserts, each polled until visible. */
    writes: z.number().int().positive().max(100_000).default(150),
    /** Visible = the written id is among the first k hits of a search for its own vector. */
    k: z.number().int().positive().max(1000).default(10),
    timeout_ms: z.number().positive().max(600_000).default(5000),
    /** Stop after this many writes in a row were never visible (an engine that never shows them). */
    give_up_after: z.number().int().positive().default(10),
    /** The most accurate point by default, so a miss is about visibility, not recall. */
    point: pointSpec.default('last'),
    label,
  })
  .strict();

const mixStep = z
  .object({
    insert: z.number().nonnegative().default(0),
    upsert: z.number().nonnegative().default(0),
    delete: z.number().nonnegative().default(0),
  })
  .strict()
  .refine((m) => m.insert + m.upsert + m.delete > 0, 'at least one of insert, upsert, delete must be > 0');

const mixedStep = z
  .object({
    op: z.literal('mixed'),
    duration_s: z.number().positive().max(86_400).default(60),
    /** Target single-row writes per second (open loop: a late writer does not burst). */
    write_rate: z.number().positive().max(1_000_000).default(150),
    readers: z.number().int().positive().max(1024).default(6),
    /** Shares of the writes (normalised). */
    mix: mixStep.default({ insert: 0.5, upsert: 0, delete: 0.5 }),
    group: z.string().default('none/10'),
    point: pointSpec.default(DEFAULT_POINT),
    /** Distinct queries the readers cycle through. */
    queries: z.number().int().positive().max(100_000).default(1000),
    /** Width of one window of the curves over time. */
    window_s: z.number().positive().default(5),
    /** Reads scored against the live ground truth per window. */
    recall_samples: z.number().int().positive().max(100_000).default(100),
    label,
  })
  .strict();

const STEP_SCHEMAS = {
  load: loadStep,
  insert: insertStep,
  upsert: upsertStep,
  delete: deleteStep,
  search: searchStep,
  wait: waitStep,
  disk: diskStep,
  freshness: freshnessStep,
  mixed: mixedStep,
} as const;
type StepOp = keyof typeof STEP_SCHEMAS;
const STEP_OPS = Object.keys(STEP_SCHEMAS) as StepOp[];

type LoadStep = z.infer<typeof loadStep>;
export type InsertStep = z.infer<typeof insertStep>;
export type UpsertStep = z.infer<typeof upsertStep>;
export type DeleteStep = z.infer<typeof deleteStep>;
export type SearchStep = z.infer<typeof searchStep>;
type WaitStep = z.infer<typeof waitStep>;
type DiskStep = z.infer<typeof diskStep>;
export type FreshnessStep = z.infer<typeof freshnessStep>;
export type MixedStep = z.infer<typeof mixedStep>;
export type Step = LoadStep | InsertStep | UpsertStep | DeleteStep | SearchStep | WaitStep | DiskStep | FreshnessStep | MixedStep;

export interface Runbook {
  name: string;
  description?: string;
  /** Seeds the draws of delete / upsert shares, the mixed writer and the new vectors. */
  seed: number;
  steps: Step[];
}

const runbookShape = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'use lower-case letters, digits, ".", "_" or "-"'),
    description: z.string().optional(),
    seed: z.number().int().nonnegative().default(1),
    steps: z.array(z.unknown()).min(1, 'a runbook needs at least one step'),
  })
  .strict();

function issueText(e: z.ZodError): string {
  const issue = e.issues[0];
  const path = issue.path.map(String).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** Validates a runbook object; `where` names its source in errors. */
export function parseRunbook(raw: unknown, where: string): Runbook {
  const top = runbookShape.safeParse(raw);
  if (!top.success) throw new UserError(`runbook ${where}: ${issueText(top.error)}`);
  const steps: Step[] = [];
  top.data.steps.forEach((s, i) => {
    const at = `runbook ${where}: step ${i + 1}`;
    const op = (s as { op?: unknown } | null)?.op;
    if (typeof op !== 'string' || !(op in STEP_SCHEMAS)) {
      throw new UserError(`${at}: unknown op ${JSON.stringify(op)}; the ops are ${STEP_OPS.join(', ')}`);
    }
    const parsed = STEP_SCHEMAS[op as StepOp].safeParse(s);
    if (!parsed.success) throw new UserError(`${at} (${op}): ${issueText(parsed.error)}`);
    const step = parsed.data as Step;
    if (step.op === 'load' && i !== 0) throw new UserError(`${at} (load): load must be the first step (it starts the engine)`);
    if ('group' in step) {
      try {
        parseGroupKey(step.group);
      } catch (e) {
        throw new UserError(`${at} (${op}): group: ${(e as Error).message}`);
      }
    }
    steps.push(step);
  });
  if (steps[0].op !== 'load') steps.unshift({ op: 'load' });
  return { name: top.data.name, description: top.data.description, seed: top.data.seed, steps };
}

/** Checks the row ranges against the dataset before any engine starts. */
export function checkRunbookRows(rb: Runbook, n: number, dataset: string): void {
  rb.steps.forEach((s, i) => {
    if ('rows' in s && s.rows !== undefined && s.rows[1] > n) {
      throw new UserError(
        `runbook ${rb.name}: step ${i + 1} (${s.op}): rows [${s.rows[0]}, ${s.rows[1]}) go past the ${n} rows of ${dataset}; use rows below ${n}`,
      );
    }
  });
}

/** Write-ack to search-visible latency over single-row inserts (docs/method.md §7). */
const FRESHNESS: Runbook = parseRunbook(
  {
    name: 'freshness',
    description: 'load the base set, then 150 single-row inserts, each followed by searches for its vector until it is among the top 10',
    seed: 7,
    steps: [{ op: 'load' }, { op: 'freshness', writes: 150 }, { op: 'search', group: 'none/10', label: 'after writes' }, { op: 'disk' }],
  },
  'freshness',
);

/** Reads under writes: one writer at 150 writes/s, six readers, 60 s. */
const MIXED: Runbook = parseRunbook(
  {
    name: 'mixed',
    description:
      'one writer at 150 single-row writes/s (half inserts of new rows, half deletes) and six readers for 60 s; recall against the live set over time',
    seed: 11,
    steps: [
      { op: 'load' },
      { op: 'search', group: 'none/10', label: 'before' },
      { op: 'mixed', duration_s: 60, write_rate: 150, readers: 6, group: 'none/10' },
      { op: 'search', group: 'none/10', label: 'after' },
      { op: 'search', group: 'cat10/10', label: 'after, filtered' },
    ],
  },
  'mixed',
);

/** Delete a random 20 %, insert 20 % new rows: no deleted id may come back. */
const DELETE_REINSERT: Runbook = parseRunbook(
  {
    name: 'delete-reinsert',
    description:
      'delete a random 20 % of the rows and insert 20 % new ones; deleted ids must never come back; recall after the cycle and after compaction; disk before and after',
    seed: 13,
    steps: [
      { op: 'load' },
      { op: 'search', group: 'none/10', label: 'before' },
      { op: 'disk', label: 'before' },
      { op: 'delete', share: 0.2 },
      { op: 'insert', new_share: 0.2 },
      { op: 'search', group: 'none/10', label: 'after cycle' },
      { op: 'search', group: 'cat10/10', label: 'after cycle, filtered' },
      { op: 'wait', label: 'compaction' },
      { op: 'search', group: 'none/10', label: 'after compaction' },
      { op: 'search', group: 'cat10/10', label: 'after compaction, filtered' },
      { op: 'disk', label: 'after' },
    ],
  },
  'delete-reinsert',
);

export const BUILT_IN: Record<string, Runbook> = { freshness: FRESHNESS, mixed: MIXED, 'delete-reinsert': DELETE_REINSERT };

/** A built-in name or a JSON file. */
export function loadRunbook(arg: string): Runbook {
  const built = BUILT_IN[arg];
  if (built) return built;
  if (!existsSync(arg)) {
    throw new UserError(
      `runbook "${arg}" is neither a built-in runbook (${Object.keys(BUILT_IN).join(', ')}) nor a file; give a JSON file's path or one of those names`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(arg, 'utf8'));
  } catch (e) {
    throw new UserError(`runbook ${arg}: not valid JSON (${(e as Error).message.split('\n')[0]}); fix the file`);
  }
  return parseRunbook(raw, basename(arg));
}
