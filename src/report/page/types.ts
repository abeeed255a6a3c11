// The data the results page carries for its curves: the stored points, as they are in the
// result files, grouped per (dataset, participant, group). Shared by src/report/html.ts
// (which writes it into the page) and src/report/page/app.ts (which draws it). Type-only:
// nothing here runs in either place.
import type { DerivedCell } from '../cells.ts';
import type { ResultPoint } from '../../results/schema.ts';
import type { StoredReadings } from '../../results/readings.ts';

/** A stored point as the page draws it: its readings (every one src/results/readings.ts
 * declares that the point holds) and the fields below. */
export type PagePoint = StoredReadings & PagePointFields;

interface PagePointFields {
  ladder_index: number;
  knobs: Record<string, number | string>;
  view: 'latency' | 'throughput';
  clients: number;
  queries: number;
  qps: number;
  latency_ms: { mean: number; p50: number; p95: number; p99: number; p999: number; max: number };
  /** Conditions a reader must know; some keep the point off the frontier (cells.ts isExcluded). */
  flags: string[];
  // Stable-point fields, copied as stored: absent in results measured before them.
  /** Timed passes over the point's query set. */
  passes?: number;
  /** 95 % bootstrap intervals of QPS, recall and the latency percentiles. */
  ci?: NonNullable<ResultPoint['ci']>;
  /** The target recall the point's knobs were calibrated to. */
  calibrated_for?: number;
  /** Which index build (--builds N), from 0. */
  build?: number;
  /** How the participant was driven: "32 in flight", "2 threads", "1 at a time". */
  driven?: string;
  /** An exact-search point (src/report/exact-search.ts): drawn on a frontier of its own. */
  exact?: true;
}

export interface PageSeries {
  dataset: string;
  participant: string;
  origin: 'measured' | 'imported';
  group: string;
  filter: string;
  k: number;
  status: string;
  reason?: string;
  points: PagePoint[];
}

export interface PageData {
  /** Datasets in display order; the first is selected when the page opens. */
  datasets: string[];
  /** Per dataset, its participants in display order (fixes each one's colour). */
  participants: Record<string, { name: string; origin: 'measured' | 'imported' }[]>;
  /** Per dataset, its group keys in display order. */
  groups: Record<string, string[]>;
  series: PageSeries[];
  /** The derived cells (src/report/cells.ts deriveCells), drawn as the table's readings. */
  cells: DerivedCell[];
  /** Per "dataset|participant": point fields the source did not record (imported files). */
  notRecorded: Record<string, string[]>;
  /** Curves found in result files' extra sections (e.g. a concurrency sweep), one chart each. */
  extraCurves: ExtraCurve[];
  /** Live-churn curves (absent in pages without churn results). */
  churnCurves?: ChurnCurve[];
}

export interface ExtraCurve {
  /** Matches the data-extra-chart attribute of the element the chart goes into. */
  id: string;
  dataset: string;
  x: string;
  y: string;
  logX: boolean;
  /** Each point's figures as the SVG's own title (in the document, shown on hover) instead of
   * Plot's drawn tip: for charts whose values are checked against the stored points. */
  titled?: boolean;
  /** flagged: the row carries the "client-limited" flag (drawn as a red ring). */
  series: { participant: string; origin: 'measured' | 'imported'; points: { x: number; y: number; flagged?: boolean }[] }[];
}

/** A live-churn curve over the reads-under-writes step (src/report/page/churn-html.ts): one line
 * per participant, each window's value at the window's middle (seconds from the step's start). */
export interface ChurnCurve {
  /** Matches the data-churn-chart attribute of the element the chart goes into. */
  id: string;
  dataset: string;
  metric: 'recall' | 'latency_p95_ms' | 'write_rate';
  label: string;
  series: { participant: string; points: { t: number; y: number }[] }[];
}
