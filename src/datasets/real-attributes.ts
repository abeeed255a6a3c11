// Real attributes (docs/method.md §1): a `label` (a category the row really has: an image's
// class, a package's section) and a `measure` (a number it really has: a package's installed
// size). Unlike the hashed columns they agree with the vectors the way real metadata does, so the
// label / otherlabel / measure10 / label+measure10 groups show what derived attributes cannot.
//
// A dataset without them carries label 0 and measure 0 on every row, and its queries carry -1:
// the groups' filters then keep no row and are not asked (as the language groups of a set with
// one language).
import type { AttrName } from '../contracts.ts';
import { otherLanguages } from './attributes.ts';

/** What a dataset's real attributes are, recorded in its manifest. */
export interface RealAttributeInfo {
  /** The name of each label value (value i is labels[i]). */
  labels: string[];
  /** What `measure` is, with its unit (e.g. "installed size, KiB"). */
  measure: string;
}

/** The real attributes of the base rows and of the queries, before the query-side bounds. */
export interface RealAttributeValues {
  info: RealAttributeInfo;
  rows: { label: Int32Array; measure: Int32Array };
  queries: { label: Int32Array; measure: Int32Array };
}

/** The per-query attributes the real groups are built from. */
export interface RealQueryAttributes {
  label: Int32Array;
  other_label: Int32Array;
  /** The bounds [lo, hi) of the tenth of the base rows' measures that holds the query's own. */
  measure_lo: Int32Array;
  measure_hi: Int32Array;
}

const NO_REAL_VALUE = -1;
/** A set without real attributes stores none of these files (its hash stays as it was before
 * they existed) and gets "none" at load. */
export const REAL_ROW_ATTRIBUTES: ReadonlySet<AttrName> = new Set(['label', 'measure']);
export const REAL_QUERY_ATTRIBUTES: ReadonlySet<string> = new Set<keyof RealQueryAttributes>(['label', 'other_label', 'measure_lo', 'measure_hi']);
/** The measure groups keep the tenth of the rows around the query's own measure. */
const MEASURE_SLICES = 10;

/** Checks the sizes a source gave against the rows and queries it wrote. */
export function checkRealSizes(values: RealAttributeValues, rows: number, nq: number): void {
  const got = [values.rows.label.length, values.rows.measure.length, values.queries.label.length, values.queries.measure.length];
  if (got[0] !== rows || got[1] !== rows || got[2] !== nq || got[3] !== nq)
    throw new Error(`real attributes: ${got.join(' / ')} labels / measures of rows / queries for ${rows} rows and ${nq} queries`);
}

export function noRealRows(n: number): { label: Int32Array; measure: Int32Array } {
  return { label: new Int32Array(n), measure: new Int32Array(n) };
}

export function noRealQueries(nq: number): RealQueryAttributes {
  const none = () => new Int32Array(nq).fill(NO_REAL_VALUE);
  return { label: none(), other_label: none(), measure_lo: none(), measure_hi: none() };
}

/** Slice bounds of the rows' measures: MEASURE_SLICES + 1 ascending values, the first the
 * smallest measure, the last one past the largest. Ties keep a value in one slice, so a slice
 * holds about a tenth of the rows, more where many rows share a value. */
export function measureBounds(measure: Int32Array): Int32Array {
  const sorted = Int32Array.from(measure).sort();
  const n = sorted.length;
  const bounds = new Int32Array(MEASURE_SLICES + 1);
  for (let s = 0; s < MEASURE_SLICES; s++) bounds[s] = sorted[Math.floor((s * n) / MEASURE_SLICES)];
  bounds[MEASURE_SLICES] = sorted[n - 1] + 1;
  return bounds;
}

/** The query-side attributes: the query's own label, another label chosen by hash (seeded by the
 * query index, so every engine gets the same), and the measure slice holding the query's own.
 * The sources check that every label is one of info.labels. */
export function realQueryAttributes(values: RealAttributeValues): RealQueryAttributes {
  const { label, measure } = values.queries;
  const nq = label.length;
  const labels = values.info.labels.length;
  const out = noRealQueries(nq);
  out.label.set(label);
  // Another value by a hash of the query index, as the language groups pick another language.
  if (labels > 1) out.other_label.set(otherLanguages(label, labels, 9));
  const bounds = measureBounds(values.rows.measure);
  for (let q = 0; q < nq; q++) {
    // The last slice whose lower bound is at or below the query's measure (the first when below all).
    let s = 0;
    while (s + 1 < MEASURE_SLICES && bounds[s + 1] <= measure[q]) s++;
    // Below every row, the first slices may be empty (tied bounds): take the first that is not.
    while (s + 1 < MEASURE_SLICES && bounds[s] === bounds[s + 1]) s++;
    out.measure_lo[q] = bounds[s];
    out.measure_hi[q] = bounds[s + 1];
  }
  return out;
}
