// What the runbook's steps share: the target the requests go to, the executor's options, the
// context a step module runs in (RunbookExecutor provides it), and small result helpers. Kept
// apart from executor.ts so the freshness and mixed steps, each in its own file, import it
// without importing the executor back.
import type { FilterExpr, Knobs, RowAttributes } from '../contracts.ts';
import { ATTRIBUTES } from '../contracts.ts';
import type { GroupKey } from '../datasets/groups.ts';
import type { Dataset } from '../datasets/layout.ts';
import { mean, percentile } from '../metrics/stats.ts';
import type { makeRng } from '../util/hash.ts';
import type { LiveStore } from './live.ts';
import type { ChurnCaps, ChurnHostReply, ChurnHostRequest } from './protocol.ts';
import type { PointSpec } from './runbook.ts';
import type { Leak, Spread } from './schema.ts';

/** Where the runbook's requests go: a participant host over IPC, or a session in this process. */
export interface ChurnTarget {
  request<T extends ChurnHostReply['type']>(req: ChurnHostRequest, timeoutS: number): Promise<Extract<ChurnHostReply, { type: T }>>;
  /** Bytes allocated by the engine's data directories, measured by the harness (null: no
   * directory known), beside the engine's own diskBytes(). */
  dirBytes?(): number | null;
}

export interface ExecOptions {
  loadTimeoutS: number;
  /** Time limit of one write, search, compaction or disk step; freshness and mixed get their
   * own length on top. */
  stepTimeoutS: number;
  onStep?: (index: number, total: number, what: string) => void;
}

/** A step the participant cannot do: recorded as unsupported with the reason. */
export class Unsupported extends Error {}

export interface PointChoice {
  ladder_index: number;
  knobs: Knobs;
  rule: string;
  calibration?: { ladder_index: number; recall: number }[];
}

/** The executor's state and helpers a step module uses. */
export interface StepContext {
  readonly store: LiveStore;
  readonly ds: Dataset;
  readonly target: ChurnTarget;
  readonly caps: ChurnCaps;
  readonly opts: ExecOptions;
  /** The step (1-based) that made each write version; version 0 is the load. */
  readonly versionStep: number[];
  rng(stepIndex: number): ReturnType<typeof makeRng>;
  addLeak(leak: Leak): void;
  takeQueries(count: number): number[];
  queryVectors(queries: number[]): Float32Array;
  supportReason(g: GroupKey, filters: (FilterExpr | null)[]): string | null;
  filtersFor(g: GroupKey, queries: number[]): (FilterExpr | null)[];
  choosePoint(g: GroupKey, spec: PointSpec, stepIndex: number): Promise<PointChoice>;
}

export function spread(values: number[]): Spread | null {
  const xs = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  return { p50: percentile(xs, 50), p95: percentile(xs, 95), max: xs[xs.length - 1], mean: mean(xs) };
}

export function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

export function sliceAttrs(attrs: RowAttributes, from: number, to: number): RowAttributes {
  return Object.fromEntries(ATTRIBUTES.map((a) => [a, attrs[a].slice(from, to)])) as RowAttributes;
}
