// What a point reads of its answers, declared once: each reading's stored name, label, kind
// and better direction. The result schema, the computation (src/metrics/readings.ts: one
// function a reading, over the point's per-query scores), the importers (what a foreign file
// did not record), the page's point tips and the docs read this list, so adding a reading to
// every point is one entry here and its computation there. Plain data, no zod: the page's
// script imports it.

/** A share (0..1) of the point's queries or ids, or a count of them. */
type ReadingKind = 'fraction' | 'share' | 'count';

export interface Reading {
  /** How the page and the docs name it. */
  label: string;
  /** What it means, in one line (docs/contracts.md lists it). */
  means: string;
  kind: ReadingKind;
  better: 'higher' | 'lower';
  /** Added after results were first stored: absent in older ones, which are still read (the
   * page says "not recorded"). Every reading added from now on is. */
  optional?: true;
  /** Shown in the page's point tip. */
  tip?: boolean;
  /** Carried into the table's cells as a share of the point's queries (a count divided by
   * them): the cell's field `name`, `short` beside the cell in the terminal table. */
  cell?: { name: string; short: string };
}

export const READINGS = {
  recall: { label: 'recall (tie-aware)', means: 'mean tie-aware recall@k: the headline reading', kind: 'fraction', better: 'higher' },
  recall_strict: { label: 'recall strict', means: 'mean recall@k counting only the exact top-k ids', kind: 'fraction', better: 'higher', tip: true },
  recall_threshold: {
    label: 'recall threshold',
    means: "mean share of the k ids within the k-th neighbour's distance (ann-benchmarks' reading)",
    kind: 'fraction',
    better: 'higher',
    tip: true,
  },
  short_results: {
    label: 'short results',
    means: 'queries answered with fewer than min(k, matching rows) ids',
    kind: 'count',
    better: 'lower',
    tip: true,
    cell: { name: 'short_share', short: 'short' },
  },
  empty_results: {
    label: 'empty results',
    means: 'queries answered with no id at all, though rows matched (an engine that gave up, or failed quietly)',
    kind: 'count',
    better: 'lower',
    optional: true,
    tip: true,
    cell: { name: 'empty_share', short: 'empty' },
  },
  low_recall_share: {
    label: 'queries under recall 0.5',
    means: 'share of queries whose tie-aware recall is below 0.5',
    kind: 'share',
    better: 'lower',
    tip: true,
    cell: { name: 'low_recall_share', short: 'low' },
  },
  unknown_ids: { label: 'unknown ids', means: 'returned ids that are no row of the dataset', kind: 'count', better: 'lower' },
  duplicate_ids: { label: 'duplicate ids', means: 'ids returned twice in one answer', kind: 'count', better: 'lower' },
  filter_violations: { label: 'filter violations', means: "returned rows that fail the query's filter", kind: 'count', better: 'lower' },
} as const satisfies Record<string, Reading>;

export type ReadingName = keyof typeof READINGS;
export const READING_NAMES = Object.keys(READINGS) as ReadingName[];

type Required = { [K in ReadingName]: (typeof READINGS)[K] extends { optional: true } ? never : K }[ReadingName];
/** A stored point's readings: the optional ones absent in results written before them. */
export type StoredReadings = Record<Required, number> & Partial<Record<Exclude<ReadingName, Required>, number>>;

/** The readings of a stored point, every declared one it holds (for the page's data). */
export function readingsOf(p: StoredReadings): StoredReadings {
  const out: Partial<Record<ReadingName, number>> = {};
  for (const name of READING_NAMES) if (p[name] !== undefined) out[name] = p[name];
  return out as StoredReadings;
}

/** The readings a table cell carries, each as a share of the point's queries, in declared order. */
export const CELL_SHARES = READING_NAMES.flatMap((reading) => {
  const r = READINGS[reading] as Reading;
  return r.cell ? [{ reading, name: r.cell.name, short: r.cell.short, label: r.label }] : [];
});

/** A point's share of `reading` (a count over its queries), or undefined where it lacks it. */
export function shareOf(p: StoredReadings & { queries: number }, reading: ReadingName): number | undefined {
  const v = p[reading];
  if (v === undefined) return undefined;
  return (READINGS[reading] as Reading).kind === 'count' ? v / p.queries : v;
}

/** Every declared reading, as this version computes them (a stored point of an older result
 * lacks the optional ones: its schema says so). */
export type Readings = Record<ReadingName, number>;
