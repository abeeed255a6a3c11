// Shared pieces of the importers: names that cannot collide with our own participants,
// the dataset identity from a prepared dataset's manifest, and ladder renumbering.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { manifestSchema } from '../../datasets/layout.ts';
import type { ResultFile, ResultPoint } from '../../results/schema.ts';
import { sha256 } from '../../util/hash.ts';

export type DatasetInfo = ResultFile['dataset'];

/** Written where a source did not record a text field. */
export const NOT_RECORDED = 'not recorded';

/** A participant or dataset name safe as a file name: letters, digits, . _ - only. */
export function safeName(raw: string): string {
  const s = raw.trim().replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+|-+$/g, '');
  return s.length > 0 ? s.slice(0, 80) : 'unnamed';
}

/** Imported participants are named NAME@HARNESS: '@' never appears in a participants/
 * directory name vecbench runs, so an import can never overwrite a measured result. */
export function importedName(raw: string, harness: string): string {
  return `${safeName(raw)}@${harness}`;
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
  const hash = sha256(JSON.stringify(Object.entries(m.data.files).sort().map(([f, e]) => [f, e.sha256])));
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
  return points
    .map((p) => ({ ...p, ladder_index: index.get(knobId(p))! }))
    .sort((a, b) => a.ladder_index - b.ladder_index || a.view.localeCompare(b.view));
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
    Object.entries(raw).map(([k, v]) => [k, typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' ? v : JSON.stringify(v) ?? 'null']),
  );
}
