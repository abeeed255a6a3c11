// The page's load & resources section (node side): each result's extra sections flattened
// into tables and curves.
import { esc, fmtBytes, fmtLeaf, fmtNum, fmtSecondsShort, isRecord, nm } from './html-text.ts';
import { participantOrder, throughputDriven } from './tables-html.ts';
import type { ExtraCurve } from './types.ts';
import { resourcesOf, resourcesTables } from './resources-html.ts';
import type { ResultFile } from '../../results/schema.ts';

/** Scalars and arrays of records found in an extra section, by dotted path. */
interface Flat {
  leaves: Map<string, unknown>;
  arrays: Map<string, Record<string, unknown>[]>;
}

function flatten(v: unknown, path: string, into: Flat, depth = 0): void {
  if (Array.isArray(v)) {
    if (v.length > 0 && v.every(isRecord)) into.arrays.set(path, v as Record<string, unknown>[]);
    else into.leaves.set(path, v.every((x) => typeof x !== 'object') ? v.join(', ') : JSON.stringify(v));
    return;
  }
  if (isRecord(v) && depth < 4) {
    for (const [k, x] of Object.entries(v)) flatten(x, path ? `${path}.${k}` : k, into, depth + 1);
    return;
  }
  into.leaves.set(path, isRecord(v) ? JSON.stringify(v) : v);
}

const X_KEYS = [
  'concurrency',
  'clients',
  'in_flight',
  'inflight',
  'threads',
  'target_rate',
  'rate',
  'arrival_rate',
  'target_qps',
  'offered_qps',
  'writes_per_s',
  'k',
];

const KNOWN_SECTIONS: [string, string][] = [
  ['resources', 'Memory (anon / file, build / serving), disk and cold start'],
  ['concurrency', 'Concurrency sweep'],
  ['open_loop', 'Open-loop latency'],
  ['churn', 'Live churn'],
  ['quality', 'Answer quality'],
];
/** Extra sections shown elsewhere on the page (the import facts go with each participant). */
const NOT_GENERAL = new Set(['import']);

export function generalSection(results: ResultFile[], datasets: string[], curves: ExtraCurve[]): string {
  const out: string[] = [`<section class="part" id="general"><h2>Load, size, resources</h2>`];
  for (const ds of datasets) {
    const parts = participantOrder(results, ds);
    const rs = parts.map((p) => results.find((r) => r.dataset.name === ds && r.participant === p.name)!);
    out.push(`<div class="ds-block" data-ds="${esc(ds)}">`);
    out.push(`<h3>Load and size</h3><div class="scroll"><table class="load"><thead><tr><th></th>`);
    for (const p of parts) out.push(`<th>${esc(p.name)}${p.origin === 'imported' ? '<span class="badge imported">imported</span>' : ''}</th>`);
    out.push(`</tr></thead><tbody>`);
    const row = (label: string, f: (r: ResultFile) => string) => out.push(`<tr><td>${esc(label)}</td>${rs.map((r) => `<td>${f(r)}</td>`).join('')}</tr>`);
    row('rows loaded', (r) => (r.load ? esc(r.load.rows.toLocaleString('en-US')) : nm));
    row('ingest', (r) => (r.load ? esc(fmtSecondsShort(r.load.ingest_s)) : nm));
    row('index build', (r) => (r.load ? esc(fmtSecondsShort(r.load.index_s)) : nm));
    row('ingest + index', (r) => (r.load ? esc(fmtSecondsShort(r.load.ingest_s + r.load.index_s)) : nm));
    row('disk size', (r) => (r.load && r.load.disk_bytes !== null ? esc(fmtBytes(r.load.disk_bytes)) : nm));
    row('first query of a group, median', (r) => {
      const xs = r.groups
        .map((g) => g.first_query_ms)
        .filter((x): x is number => typeof x === 'number')
        .sort((a, b) => a - b);
      return xs.length ? esc(`${fmtNum(xs[Math.floor(xs.length / 2)])} ms`) : nm;
    });
    row('groups measured', (r) => esc(`${r.groups.filter((g) => g.status === 'measured').length} of ${r.groups.length}`));
    row('throughput view driven', (r) => esc(throughputDriven(r)));
    if (rs.some((r) => (r.run.builds ?? 1) > 1)) row('index builds', (r) => esc(String(r.run.builds ?? 1)));
    out.push(`</tbody></table></div>`);

    const present = new Set(rs.flatMap((r) => Object.keys(r.extra ?? {})).filter((k) => !NOT_GENERAL.has(k)));
    if (rs.some((r) => resourcesOf(r) !== null)) present.add('resources');
    const sections: [string, string][] = [
      ...KNOWN_SECTIONS,
      ...[...present]
        .filter((k) => !KNOWN_SECTIONS.some(([s]) => s === k))
        .sort()
        .map((k): [string, string] => [k, k]),
    ];
    const absent: string[] = [];
    for (const [key, label] of sections) {
      if (!present.has(key)) {
        absent.push(label);
        continue;
      }
      if (key === 'churn') {
        // Runbook steps do not flatten into a table: the churn section has them.
        out.push(`<h3>${esc(label)}</h3><p class="note">In the <a href="#churn">live churn</a> section below.</p>`);
        continue;
      }
      out.push(`<h3>${esc(label)}</h3>`);
      // The resources (docs/method.md §6) in a section of their own: labelled tables, a row per participant.
      if (key === 'resources' && rs.some((r) => resourcesOf(r) !== null)) {
        out.push(
          resourcesTables(
            parts.map((p, i) => ({ participant: p.name, origin: p.origin, resources: resourcesOf(rs[i]) })),
            { bytes: fmtBytes, seconds: fmtSecondsShort, number: fmtNum },
          ),
        );
      }
      // Sections of other shapes (and resources kept under extra by older results) are shown as
      // stored, a row per field.
      const flats = rs.map((r) => {
        const f: Flat = { leaves: new Map(), arrays: new Map() };
        if (r.extra && key in r.extra) flatten(r.extra[key], '', f);
        return f;
      });
      const leafCell = (f: Flat, path: string) => {
        const v = f.leaves.get(path);
        return v === null || v === undefined ? nm : fmtLeaf(path.split('.').pop() ?? path, v);
      };
      const leafPaths = [...new Set(flats.flatMap((f) => [...f.leaves.keys()]))];
      if (leafPaths.length > 0) {
        out.push(`<div class="scroll"><table><thead><tr><th></th>${parts.map((p) => `<th>${esc(p.name)}</th>`).join('')}</tr></thead><tbody>`);
        for (const path of leafPaths) {
          out.push(`<tr><td>${esc(path || key)}</td>${flats.map((f) => `<td>${leafCell(f, path)}</td>`).join('')}</tr>`);
        }
        out.push(`</tbody></table></div>`);
      }
      const arrayPaths = [...new Set(flats.flatMap((f) => [...f.arrays.keys()]))];
      for (const path of arrayPaths) {
        const rowsOf = flats.map((f) => f.arrays.get(path) ?? []);
        const cols = [...new Set(rowsOf.flat().flatMap((r) => Object.keys(r)))];
        const xKey = X_KEYS.find((x) => cols.includes(x) && rowsOf.flat().every((r) => typeof r[x] === 'number'));
        if (xKey) {
          const yKeys = cols.filter((c) => c !== xKey && rowsOf.flat().some((r) => typeof r[c] === 'number')).slice(0, 6);
          const xs = rowsOf
            .flat()
            .map((r) => r[xKey] as number)
            .filter((x) => x > 0);
          const logX = xs.length > 0 && Math.max(...xs) / Math.min(...xs) >= 16;
          out.push(`<div class="chart-grid">`);
          for (const y of yKeys) {
            const id = `x${curves.length}`;
            curves.push({
              id,
              dataset: ds,
              x: xKey,
              y,
              logX,
              series: parts.map((p, i) => ({
                participant: p.name,
                origin: p.origin,
                points: rowsOf[i]
                  .filter((r) => typeof r[y] === 'number' && Number.isFinite(r[y]))
                  .map((r) => ({
                    x: r[xKey] as number,
                    y: r[y] as number,
                    ...(Array.isArray(r.flags) && r.flags.includes('client-limited') ? { flagged: true } : {}),
                  })),
              })),
            });
            out.push(
              `<figure class="chart-card"><figcaption>${esc(`${path ? `${path}: ` : ''}${y} by ${xKey}`)}</figcaption><div class="extra-chart" data-extra-chart="${id}"></div></figure>`,
            );
          }
          out.push(`</div>`);
        }
        out.push(
          `<details><summary>${esc(path || key)}: the stored rows</summary><div class="scroll"><table><thead><tr><th>participant</th>${cols.map((c) => `<th>${esc(c)}</th>`).join('')}</tr></thead><tbody>`,
        );
        parts.forEach((p, i) => {
          if (rowsOf[i].length === 0) out.push(`<tr><td>${esc(p.name)}</td><td colspan="${Math.max(1, cols.length)}">${nm}</td></tr>`);
          for (const r of rowsOf[i]) out.push(`<tr><td>${esc(p.name)}</td>${cols.map((c) => `<td>${c in r ? fmtLeaf(c, r[c]) : nm}</td>`).join('')}</tr>`);
        });
        out.push(`</tbody></table></div></details>`);
      }
    }
    if (absent.length > 0) out.push(`<p class="note">Not measured in these results: ${absent.map(esc).join('; ')}.</p>`);
    out.push(`</div>`);
  }
  out.push(`</section>`);
  return out.join('\n');
}
