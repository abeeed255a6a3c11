// `vecbench datasets`: every registry entry with its size, metric, source and whether it is
// prepared, plus prepared sets no entry names (`prepare custom` sets).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DatasetSource } from '../dataset-source.ts';
import { SOURCES } from '../registry.ts';
import { parseWikiName, WIKI_FULL_ROWS, WIKI_PREFIX } from './remote.ts';

interface PreparedInfo {
  name: string;
  n: number;
  d: number;
  nq: number;
  metric: string;
  kind: string;
}

function preparedSets(dataDir: string): PreparedInfo[] {
  if (!existsSync(dataDir)) return [];
  const out: PreparedInfo[] = [];
  for (const entry of readdirSync(dataDir).sort()) {
    if (entry.startsWith('.') || entry.includes('.tmp-')) continue;
    const path = join(dataDir, entry, 'manifest.json');
    if (!existsSync(path)) continue;
    try {
      const m = JSON.parse(readFileSync(path, 'utf8')) as {
        name: string;
        n: number;
        d: number;
        nq: number;
        metric: string;
        source?: { kind?: string; generator?: string };
      };
      out.push({ name: entry, n: m.n, d: m.d, nq: m.nq, metric: m.metric, kind: m.source?.kind ?? m.source?.generator ?? '?' });
    } catch {
      out.push({ name: entry, n: 0, d: 0, nq: 0, metric: '?', kind: 'unreadable manifest' });
    }
  }
  return out;
}

function sourceOf(name: string): DatasetSource | null {
  for (const s of SOURCES) {
    try {
      if (s.matches(name)) return s;
    } catch {
      // a matcher that rejects a malformed name does not own it
    }
  }
  return null;
}

/** The size an entry will have once prepared (wiki: from the name). */
function plannedSize(s: DatasetSource, name: string): string {
  const wiki = parseWikiName(name);
  if (wiki)
    return `${(wiki.n === 'full' ? WIKI_FULL_ROWS - wiki.nq : wiki.n).toLocaleString('en-US')} x 1024, ${wiki.nq.toLocaleString('en-US')} queries, text`;
  return s.size ?? '-';
}

const fmtSize = (p: PreparedInfo) => `${p.n.toLocaleString('en-US')} x ${p.d}, ${p.nq.toLocaleString('en-US')} queries`;

/** The listing as text lines: NAME  SIZE  METRIC  SOURCE  PREPARED. */
export function datasetListing(dataDir: string): string {
  const prepared = preparedSets(dataDir);
  const byName = new Map(prepared.map((p) => [p.name, p]));
  const rows: string[][] = [];
  const shown = new Set<string>();
  for (const s of SOURCES) {
    // Concrete names an entry stands for; patterns list their prepared instances.
    let names: string[];
    if (s.pattern.startsWith(WIKI_PREFIX)) names = ['1m', '10m', 'full'].map((x) => WIKI_PREFIX + x);
    else if (sourceOf(s.pattern) === s) names = [s.pattern];
    else names = [];
    for (const p of prepared) if (!names.includes(p.name) && sourceOf(p.name) === s && s.pattern !== 'custom') names.push(p.name);
    if (names.length === 0) {
      rows.push([s.pattern, s.size ?? '-', s.metric ?? '-', 'no', s.origin ?? s.describe]);
      continue;
    }
    for (const name of names) {
      const p = byName.get(name);
      shown.add(name);
      rows.push([name, p ? fmtSize(p) : plannedSize(s, name), p?.metric ?? s.metric ?? '-', p ? 'yes' : 'no', s.origin ?? s.describe]);
    }
  }
  for (const p of prepared) {
    if (shown.has(p.name) || sourceOf(p.name)) continue;
    rows.push([p.name, fmtSize(p), p.metric, 'yes', p.kind === 'custom' ? 'custom (your files)' : p.kind]);
  }
  const head = ['NAME', 'SIZE', 'METRIC', 'PREPARED', 'SOURCE'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  // The source text can be long: it is the last column, never padded.
  const line = (r: string[]) =>
    r
      .map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i]) : c))
      .join('  ')
      .trimEnd();
  return `${[line(head), ...rows.map(line)].join('\n')}\n\nprepared sets live in ${dataDir}; prepare one with: vecbench prepare <name>\n`;
}
