// The shape of a derived cell (src/report/cells.ts derives them; the tables, `report --json`
// and the page read them).
import type { CellStatus } from '../metrics/frontier.ts';
import type { Search } from './exact-search.ts';
import type { READINGS, ReadingName } from '../results/readings.ts';

export type { View } from '../metrics/curve.ts';
import type { View } from '../metrics/curve.ts';

export interface BuildReading {
  build: number;
  status: CellStatus;
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

/** The shares a cell carries, one field a reading declared with `cell` (src/results/readings.ts):
 * short_share, empty_share, low_recall_share; null without points (or where its points lack it). */
export type CellShares = {
  [K in ReadingName as (typeof READINGS)[K] extends { cell: { name: infer N extends string } } ? N : never]: number | null;
};

export type DerivedCell = DerivedCellFields & CellShares;

interface DerivedCellFields {
  dataset: string;
  participant: string;
  origin: 'measured' | 'imported';
  group: string;
  filter: string;
  k: number;
  target: number;
  /** Which view the cell reads: throughput (QPS, higher is better) or latency (p50 ms, one
   * request at a time, lower is better). */
  view: View;
  /** Which points the cell reads: the ANN search, or the participant's exact-search points. */
  search: Search;
  status: CellStatus;
  /** Throughput (QPS) or p50 latency (ms) read on the frontier, or null. */
  value: number | null;
  /** 95 % interval of value (from the point(s) it was read on; spanning builds; under the cold
   * protocol also the group's spread, `spread`), or null. */
  ci_low: number | null;
  ci_high: number | null;
  /** Cold protocol: how far one point's figure scatters around its group's curve beyond its own
   * interval (log scale, a standard deviation; src/metrics/curve-spread.ts), folded into every
   * point's interval before the cell is read; absent where not estimated (warm, too few points). */
  spread?: number;
  /** value / best value in the row (dataset, group, target, view); null without a value. For
   * latency the best is the lowest, so leads are 1 or more. */
  lead: number | null;
  /** 95 % interval of the lead (null for the row's best, the reference). Paired: bootstrapped
   * over pairs of passes taken close in time (src/metrics/paired.ts). Unpaired: the bound
   * [ci_low / best's ci_high, ci_high / best's ci_low]. */
  lead_ci: [number, number] | null;
  /** How lead and lead_ci were read: from paired passes, or from the two cells' own intervals
   * (cells measured apart, rounds that do not line up, no passes); null for the best. */
  lead_method: 'paired' | 'unpaired' | null;
  /** Why an unpaired lead could not be paired. */
  lead_note?: string;
  /** No lead counts (for the best: some other cell ties it). Paired: the lead's interval holds 1;
   * unpaired: the two cells' intervals overlap. */
  tie: boolean;
  /** Best recall reached in the group, or null. */
  max_recall: number | null;
  /** Recall of the point(s) the value was read on. */
  read_recall: number[];
  /** Bytes the engine read from storage per query where the cell was read (interpolated like
   * the shares); null where its points measured none (in RAM, warm). */
  read_bytes_per_query: number | null;
  /** How the participant was driven in this view ("32 in flight", "2 threads", "1 at a time"). */
  driven: string | null;
  /** Points of the group's curve left off the frontier, by flag. */
  excluded: Record<string, number>;
  /** Per build (only with more than one build). */
  builds?: BuildReading[];
  /** Why a cell has no value when the group itself has a reason (not asked, unsupported, failed). */
  reason?: string;
  /** Why a cell is read above its target, too wide or not reached (calibration's account). */
  why?: string;
  /** How the engine answered at the point(s) the cell was read on (docs/measurement.md, "Plans"):
   * the strategy label, `(declared)` when the adapter states it rather than a plan showing it;
   * null where the points carry none. */
  strategy?: string | null;
}
