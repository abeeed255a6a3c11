// Shared pieces of the importers: names checked by the runner's rule that cannot collide
// with our own participants, the dataset identity from a prepared dataset's manifest, and
// ladder renumbering.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { manifestSchema } from '../../datasets/layout.ts';
import { READING_NAMES, READINGS, type Reading, type ReadingName, type Readings } from '../../results/readings.ts';
import type { ResultFile, ResultPoint } from '../../results/schema.ts';
import { UserError } from '../../util/errors.ts';
import { sha256 } from '../../util/hash.ts';
import { SAFE_NAME_RULE, isSafeName, shownName } from '../../util/names.ts';

export type DatasetInfo = ResultFile['dataset'];

/** Written where a source did not record a text field. */
export const NOT_RECORDED = 'not recorded';

/**
 * A name an imported file gives (a dataset, a participant, a group's filter), checked with the
 * runner's rule (src/util/names.ts): it becomes a directory or file name under --out, so one
 * that could leave it ('../..', an absolute path, a NUL, an overlong name) is refused, never
 * rewritten. `field` is where the file holds it (dataset.name, groups.2.filter...), `written`
 * what it says there when the name is part of it (a group key).
 */
export function checkImportedName(source: string, field: string, name: string, written = name): string {
  if (!isSafeName(name))
    throw new UserError(`${source}: ${field} ${shownName(written)} cannot be a name under --out: use ${SAFE_NAME_RULE}; correct it in the file`);
  return name;
}

/** Imported participants are named NAME@HARNESS: '@' never appears in a participants/
 * directory name vecbench runs, so an import can never overwrite a measured result. NAME is
 * checked (checkImportedName). */
export function importedName(source: string, field: string, raw: string, harness: string): string {
  return `${checkImportedName(source, field, raw)}@${harness}`;
}

/** The identity of a prepared dataset (shape, metric and the data hash the runner records),
 * read from its manifest alone so that a large dataset's vectors are not loaded. The hash is
 * the one src/datasets/layout.ts loadDataset computes: sha256 over the sorted (file, sha256)
 * pairs of the manifest. */
export function preparedDatasetInfo(dataDir: string, name: string): DatasetInfo | null {
  const path = join(dataDir, name, 'manifest.json');
  if (!existsSync(path)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
  const m = manifestSchema.safeParse(raw);
  if (!m.success) return null;
  const hash = sha256(
    JSON.stringify(
      Object.entries(m.data.files)
        .sort()
        .map(([f, e]) => [f, e.sha256]),
    ),
  );
  return { name: m.data.name, n: m.data.n, d: m.data.d, nq: m.data.nq, metric: m.data.metric, hash };
}

function compareKnobValue(a: number | string | undefined, b: number | string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return -1;
  if (b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), 'en', { numeric: true });
}

/** Orders points by their knob values (keys in first-seen order) and numbers the ladder
 * from 0 in that order, keeping each point's latency/throughput pair on one index. */
export function renumberLadder(points: ResultPoint[]): ResultPoint[] {
  const keys = [...new Set(points.flatMap((p) => Object.keys(p.knobs)))];
  const knobId = (p: ResultPoint) => JSON.stringify(keys.map((k) => p.knobs[k] ?? null));
  const distinct = [...new Map(points.map((p) => [knobId(p), p.knobs])).entries()].sort(([, a], [, b]) => {
    for (const k of keys) {
      const c = compareKnobValue(a[k], b[k]);
      if (c !== 0) return c;
    }
    return 0;
  });
  const index = new Map(distinct.map(([id], i) => [id, i]));
  return points.map((p) => ({ ...p, ladder_index: index.get(knobId(p))! })).sort((a, b) => a.ladder_index - b.ladder_index || a.view.localeCompare(b.view));
}

/** Parses "key=value" / "key: value" pairs out of a free-form name such as
 * "Annoy(n_trees=100,search_k=100)"; numbers stay numbers. */
export function knobsFromName(name: string): Record<string, number | string> {
  const knobs: Record<string, number | string> = {};
  const re = /([A-Za-z_][\w.-]*)['"]?\s*[=:]\s*['"]?([\w.+-]+)/g;
  for (let m = re.exec(name); m !== null; m = re.exec(name)) {
    const n = Number(m[2]);
    knobs[m[1]] = m[2] !== '' && Number.isFinite(n) ? n : m[2];
  }
  return knobs;
}

/** JSON-safe knob values: numbers and strings stay, anything else becomes its JSON text. */
export function plainKnobs(raw: Record<string, unknown>): Record<string, number | string> {
  return Object.fromEntries(
    Object.entries(raw).map(([k, v]) => [k, typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' ? v : (JSON.stringify(v) ?? 'null')]),
  );
}

/** A foreign point's readings (src/results/readings.ts): those the other harness recorded, the
 * rest 0 (optional ones left out) and named in `notRecorded`, so a reading declared later is
 * not recorded in imports without a word here. */
export function importedReadings(given: Partial<Record<ReadingName, number>>, notRecorded: Set<string>): Readings {
  const out: Partial<Readings> = {};
  for (const name of READING_NAMES) {
    const v = given[name];
    if (v !== undefined) out[name] = v;
    else {
      notRecorded.add(name);
      if (!(READINGS[name] as Reading).optional) out[name] = 0;
    }
  }
  return out as Readings;
}
