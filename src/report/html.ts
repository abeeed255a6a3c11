// The results page (`vecbench report --html DIR`, and the end of `vecbench run`): one
// self-contained HTML file written from the stored result files.
//
// - The tables are static HTML written here from deriveCells (src/report/cells.ts), the one
//   implementation of the cell rule; the page never re-reads a cell. Every cell carries its
//   exact value in data attributes so the browser test can hold it against `report --json`.
// - The curves are drawn in the browser by a small script (src/report/page/app.ts) that is
//   bundled with Observable Plot and src/metrics/frontier.ts by esbuild into one IIFE and
//   inlined, with the stored points as JSON, so viewing the page needs no network (a
//   Content-Security-Policy forbids any fetch).
// - Uncertainty is shown where it was measured: a cell prints ± (half its 95 % interval) and ≈
//   for a tie (leadText), its title the exact bounds, each build's reading, the calibration's
//   account (why) and the flagged points left off the frontier; the curves draw interval bars.
//   Results measured before stable points carry none of it and render as before.
// - Everything that came from a result file or a participant's README is escaped here, or
//   set as text by the script.
// esbuild is pinned to the version tsx depends on (0.28.2), so one copy serves both and the
// bundled page script is built by the same compiler that runs the sources.
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  cellText,
  deriveCells,
  fmtMaxRecall,
  fmtPct,
  fmtQps,
  fmtShare,
  groupOrder,
  halfWidth,
  leadText,
  sharesText,
  TARGETS,
  type DerivedCell,
} from './cells.ts';
import type { ChurnCurve, ExtraCurve, PageData, PageSeries } from './page/types.ts';
import { PAGE_CSS } from './page/style.ts';
import { churnSection } from './page/churn-html.ts';
import { resourcesOf, resourcesTables } from './page/resources-html.ts';
import { EXACT, exactSearchTest } from './exact-search.ts';
import type { ResultFile } from '../results/schema.ts';
import { readAllResults } from '../results/store.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { UserError } from '../util/errors.ts';
import { redact, redactValue } from '../util/redact.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const APP_ENTRY = join(HERE, 'page', 'app.ts');
const DEFAULT_PARTICIPANTS_DIR = resolve(HERE, '../../participants');

interface PageOptions {
  /** Prepared datasets directory: the page shows each dataset's manifest when it is there. */
  dataDir?: string;
  /** Where participants/<name>/README.md live (default: the repository's participants/). */
  participantsDir?: string;
  /** Time printed in the header (default now). */
  generated?: Date;
}

// ---------- escaping ----------

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text or attribute value made inert: no tag, no entity, no quote survives. */
export function esc(v: unknown): string {
  return String(v).replace(/[&<>"']/g, (c) => ESC[c]);
}

/** JSON safe inside <script type="application/json">: no "</script", no "<!--". */
export function jsonForScript(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

// ---------- formatting ----------

const nm = '<span class="nm">not measured</span>';

function fmtBytes(b: number): string {
  if (!Number.isFinite(b)) return 'n/a';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = b;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  // Three digits; 1000-1023 of a unit would otherwise print in exponent form.
  return `${u === 0 || v >= 1000 ? v.toFixed(0) : v.toPrecision(3)} ${units[u]}`;
}

function fmtSecondsShort(s: number): string {
  if (!Number.isFinite(s)) return 'n/a';
  if (s >= 100) return `${s.toFixed(0)} s`;
  if (s >= 1) return `${s.toPrecision(3)} s`;
  return `${(s * 1000).toPrecision(3)} ms`;
}

function fmtNum(v: number): string {
  if (!Number.isFinite(v)) return 'n/a';
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
  return v.toPrecision(4).replace(/\.?0+$/, '');
}

/** A leaf value of an extra section, formatted from its key's unit suffix. */
function fmtLeaf(key: string, v: unknown): string {
  if (v === null || v === undefined) return nm;
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'number') {
    if (/(^|_)bytes$/.test(key)) return esc(fmtBytes(v));
    if (/_s$/.test(key)) return esc(fmtSecondsShort(v));
    if (/_ms$/.test(key)) return esc(`${fmtNum(v)} ms`);
    return esc(fmtNum(v));
  }
  return esc(typeof v === 'string' ? v : JSON.stringify(v));
}

const STATUS_TEXT: Record<string, string> = {
  calibrated: 'a measured point within ±0.005 of the target recall, at knobs calibrated for it: the best frontier value at its recall or above',
  point: 'a measured frontier point at the target recall',
  interpolated: 'read on the frontier between the two points around the target (log QPS, linear recall)',
  above: 'every frontier point is above the target: the value of the lowest-recall frontier point (marked ↑)',
  not_reached: 'the target recall was never reached: the best recall reached',
  collapsed: 'recall below 0.5 at every knob: the search collapsed (the share of short answers shown)',
  leak: 'SECURITY: a returned row belongs to another tenant than the query was confined to; the group fails',
  bracket_too_wide: 'the measured points around the target are more than 0.02 recall apart (and not adjacent knob values)',
  none: 'no usable measured point',
  not_asked: 'the filter keeps fewer than 10 x k rows: the group is not asked',
  unsupported: 'the participant cannot run this group',
};

/** The lead as the tables print it (leadText), with the page's multiplication sign. */
const leadShown = (c: DerivedCell) => leadText(c).replace('x', '×');

/** Points of the cell's group left off the frontier, by flag: "2 busy-machine, 1 client-limited". */
function excludedText(c: DerivedCell): string {
  return Object.entries(c.excluded)
    .map(([flag, n]) => `${n} ${flag}`)
    .join(', ');
}

/** The title's lines on the interval, the lead and the builds of a cell with a value. */
function valueTitle(c: DerivedCell): string[] {
  const lines: string[] = [];
  if (c.ci_low !== null && c.ci_high !== null) lines.push(`95 % interval: ${fmtNum(c.ci_low)} – ${fmtNum(c.ci_high)} QPS (±${fmtPct(halfWidth(c))})`);
  else lines.push('no interval recorded');
  const leadCi = c.lead_ci ? ` (interval ×${c.lead_ci[0].toFixed(2)} – ×${c.lead_ci[1].toFixed(2)})` : '';
  if (c.tie) lines.push(`intervals overlap the best: no lead counts (×${c.lead!.toFixed(2)}${leadCi})`);
  else lines.push(`lead ×${c.lead!.toFixed(2)}${leadCi}`);
  return lines;
}

/** Each build's reading, where the cell was read on several index builds. */
function buildsTitle(c: DerivedCell): string[] {
  if (!c.builds || c.builds.length === 0) return [];
  const each = c.builds.map((b) => {
    if (b.value === null) return `build ${b.build}: ${b.status.replace(/_/g, ' ')}`;
    const ci = b.ci_low !== null && b.ci_high !== null ? ` (${fmtNum(b.ci_low)} – ${fmtNum(b.ci_high)})` : '';
    return `build ${b.build}: ${fmtNum(b.value)}${ci}`;
  });
  return [`${c.builds.length} index builds: the median, its interval spanning theirs`, ...each];
}

/** One table cell from a derived cell; the exact numbers ride along in data attributes.
 * groupFailed: the group's run failed (its reason is then a failure, not the flags). */
function cellHtml(
  c: DerivedCell | undefined,
  participant: string,
  group: string,
  target: number,
  groupFailed = false,
  search: DerivedCell['search'] = 'ann',
): string {
  const key = `data-participant="${esc(participant)}" data-group="${esc(group)}" data-target="${target}"`;
  if (!c) return `<td class="cell st-missing" ${key} data-status="missing" data-search="${search}" title="no result for this group">—</td>`;
  const data =
    `${key} data-status="${c.status}" data-value="${c.value ?? ''}" data-lead="${c.lead ?? ''}" data-max-recall="${c.max_recall ?? ''}"` +
    ` data-short-share="${c.short_share ?? ''}" data-low-recall-share="${c.low_recall_share ?? ''}"` +
    ` data-ci-low="${c.ci_low ?? ''}" data-ci-high="${c.ci_high ?? ''}" data-tie="${c.tie ? 1 : 0}"${c.builds ? ` data-builds="${c.builds.length}"` : ''} data-search="${c.search}"` +
    ` data-strategy="${esc(c.strategy ?? '')}"`;
  const status = c.status === 'calibrated' ? `calibrated for ${target.toFixed(2)}: ${STATUS_TEXT.calibrated}` : (STATUS_TEXT[c.status] ?? c.status);
  const lines = [`${status}${c.reason ? ` — ${c.reason}` : ''}`];
  if (c.why) lines.push(`why: ${c.why}`);
  if (c.strategy) lines.push(`how the engine answered: ${c.strategy}`);
  if (c.short_share !== null) lines.push(`queries with a short answer: ${fmtShare(c.short_share)}; with recall below 0.5: ${fmtShare(c.low_recall_share)}`);
  if (c.value !== null) lines.push(...valueTitle(c));
  lines.push(...buildsTitle(c));
  const excluded = excludedText(c);
  if (excluded) lines.push(`left off the frontier: ${excluded}`);
  const title = esc(lines.join('\n'));
  // Short answers and low-recall queries beside the cell, where any is worth a look.
  const shares = sharesText(c);
  const sharesMark = shares ? `<span class="shares">${esc(shares.trim())}</span>` : '';
  // How the engine answered at the point(s) read (the plan check at every point).
  const strategyMark = c.strategy ? `<span class="strategy">${esc(c.strategy)}</span>` : '';
  // The count of flagged points, with its own title so hovering the mark explains it.
  const exclMark = excluded
    ? `<span class="excl" title="${esc(`points left off the frontier: ${excluded}`)}">⚑${Object.values(c.excluded).reduce((a, b) => a + b, 0)}</span>`
    : '';
  switch (c.status) {
    case 'calibrated':
    case 'point':
    case 'interpolated':
    case 'above': {
      // A tie claims no lead: it is not marked best.
      const cls = c.tie ? ' tie' : c.lead === 1 ? ' best' : '';
      const mark = c.status === 'above' ? '<span class="mark">↑</span>' : '';
      const ci = c.ci_low !== null && c.ci_high !== null ? `<span class="ci">±${esc(fmtPct(halfWidth(c)))}</span>` : '';
      return `<td class="cell st-${c.status}${cls}" ${data} title="${title}"><span class="v">${esc(fmtQps(c.value!))}</span>${mark}${ci}<span class="lead">${esc(leadShown(c))}</span>${sharesMark}${strategyMark}${exclMark}</td>`;
    }
    case 'not_reached':
      return `<td class="cell st-not_reached" ${data} title="${title}">${fmtMaxRecall(c.max_recall!)}${sharesMark}${exclMark}</td>`;
    case 'collapsed':
      return `<td class="cell st-collapsed" ${data} title="${title}">${esc(cellText(c))}${sharesMark}${exclMark}</td>`;
    case 'leak':
      return `<td class="cell st-leak" ${data} title="${title}">LEAK</td>`;
    case 'bracket_too_wide':
      return `<td class="cell st-bracket_too_wide" ${data} title="${title}">bracket too wide${exclMark}</td>`;
    case 'not_asked':
      return `<td class="cell st-not_asked" ${data} title="${title}">not asked</td>`;
    case 'unsupported':
      return `<td class="cell st-unsupported" ${data} title="${title}">unsupported</td>`;
    case 'none': {
      // Every point flagged is not a failure of the engine: say which it is.
      const allFlagged = !groupFailed && excluded !== '';
      return `<td class="cell st-none" ${data} title="${title}">${allFlagged ? 'all flagged' : c.reason ? 'failed' : 'no points'}${exclMark}</td>`;
    }
  }
}

// ---------- ordering ----------

function participantOrder(results: ResultFile[], dataset: string): { name: string; origin: 'measured' | 'imported' }[] {
  const seen = new Map<string, 'measured' | 'imported'>();
  for (const r of results) if (r.dataset.name === dataset) seen.set(r.participant, r.origin);
  return [...seen.entries()]
    .map(([name, origin]) => ({ name, origin }))
    .sort((a, b) => (a.origin === b.origin ? a.name.localeCompare(b.name) : a.origin === 'measured' ? -1 : 1));
}

function sortGroups(keys: Iterable<string>): string[] {
  return [...new Set(keys)].sort((a, b) => {
    const [ka, fa] = groupOrder(a);
    const [kb, fb] = groupOrder(b);
    return ka - kb || fa - fb || a.localeCompare(b);
  });
}

/** How a participant was driven in a view, from its points ("32 in flight"); null for results
 * measured before points recorded it. */
function drivenOf(r: ResultFile, view: 'throughput' | 'latency'): string | null {
  const seen = [...new Set(r.groups.flatMap((g) => g.points.filter((p) => p.view === view && p.driven).map((p) => p.driven!)))];
  return seen.length > 0 ? seen.join(' / ') : null;
}

/** The throughput view's driving as measured, or the run's client count where points do not say. */
function throughputDriven(r: ResultFile): string {
  return drivenOf(r, 'throughput') ?? `${r.run.clients} clients`;
}

// ---------- sections ----------

function tablesSection(results: ResultFile[], cells: DerivedCell[], datasets: string[]): string {
  const out: string[] = [];
  out.push(`<section class="part" id="tables"><h2>Throughput at target recall</h2>`);
  out.push(
    `<p class="note">Each cell is read on the participant's Pareto frontier of throughput-view points (see docs/method.md §4): a point calibrated for the target where there is one, else the QPS where the frontier crosses the target recall, interpolated in log QPS between the two frontier points around it; ×lead = value / the best value in the row. ±: half the 95 % interval of the value, relative to it (bootstrap over the passes; with several index builds the interval spans the builds'); hover a cell for the bounds. ≈: the cell's interval overlaps the best's, so no lead counts. Flagged points (a busy machine, a client at its limit, invalid results, harness overhead) are left off the frontier. Exact-search points (a participant's exact scan, or an imported harness's exact run) are read on their own, in a column marked exact beside the participant's: the index's column never borrows their recall. Cells are derived from the stored points only; the curves above are drawn from the same points.</p>`,
  );
  out.push(
    `<div class="status-key"><span class="best-key" style="background:var(--best)">best in row ×1.00</span><span class="tie-key">≈ intervals overlap the best: no lead counts</span><span>±3.1%: 95 % interval</span><span>⚑2: points left off the frontier</span><span style="background:var(--warnbg);color:var(--warn)">max 0.93: target never reached</span><span style="background:var(--wide)">bracket too wide</span><span class="nm">not asked</span><span style="color:#6b4e8a;font-style:italic">unsupported</span><span>↑ read above the target</span><span style="color:var(--bad)">failed / no points / all flagged</span></div>`,
  );
  for (const ds of datasets) {
    const parts = participantOrder(results, ds);
    const dc = cells.filter((c) => c.dataset === ds && c.view === 'throughput');
    const byKey = new Map(dc.map((c) => [`${c.participant}\u0000${c.search}\u0000${c.group}\u0000${c.target}`, c]));
    // A column per participant, and one after it for its exact-search points where it has some.
    const columns = parts.flatMap((p) =>
      dc.some((c) => c.participant === p.name && c.search === EXACT)
        ? [
            { ...p, search: 'ann' as const },
            { ...p, search: EXACT },
          ]
        : [{ ...p, search: 'ann' as const }],
    );
    const groups = sortGroups(dc.map((c) => c.group));
    const notAsked = groups.filter((g) => dc.filter((c) => c.group === g).every((c) => c.status === 'not_asked'));
    out.push(`<div class="ds-block" data-ds="${esc(ds)}">`);
    out.push(
      `<p class="note">${esc(ds)}: ${parts.length} participant(s). <label><input type="checkbox" class="toggle-not-asked"> show the ${notAsked.length} group(s) nobody was asked</label></p>`,
    );
    out.push(`<div class="scroll"><table class="cells" data-dataset="${esc(ds)}"><thead><tr><th>group</th><th>recall</th>`);
    for (const p of columns) {
      const r = results.find((x) => x.dataset.name === ds && x.participant === p.name)!;
      const exact = p.search === EXACT ? '<span class="badge exact" title="its exact-search points: a scan, not the index">exact</span>' : '';
      out.push(
        `<th scope="col"${p.search === EXACT ? ` data-search="${EXACT}"` : ''}>${esc(p.name)}${p.origin === 'imported' ? '<span class="badge imported">imported</span>' : ''}${exact}<span class="driven">${esc(throughputDriven(r))}</span></th>`,
      );
    }
    out.push(`</tr></thead><tbody>`);
    for (const g of groups) {
      const [filter, k] = g.split('/');
      const cls = notAsked.includes(g) ? ' all-not-asked' : '';
      TARGETS.forEach((t, i) => {
        out.push(`<tr class="${i === 0 ? 'first-of-group' : ''}${cls}" data-k="${esc(k)}" data-filter="${esc(filter)}">`);
        out.push(`<td class="grp">${i === 0 ? esc(g) : ''}</td><td class="tgt">${t.toFixed(2)}</td>`);
        for (const p of columns) {
          const failed = results.some((r) => r.dataset.name === ds && r.participant === p.name && r.groups.some((x) => x.key === g && x.status === 'failed'));
          out.push(cellHtml(byKey.get(`${p.name}\u0000${p.search}\u0000${g}\u0000${t}`), p.name, g, t, failed, p.search));
        }
        out.push(`</tr>`);
      });
    }
    out.push(`</tbody></table></div></div>`);
  }
  out.push(`</section>`);
  return out.join('\n');
}

/** Scalars and arrays of records found in an extra section, by dotted path. */
interface Flat {
  leaves: Map<string, unknown>;
  arrays: Map<string, Record<string, unknown>[]>;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
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

function generalSection(results: ResultFile[], datasets: string[], curves: ExtraCurve[]): string {
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

/** A small, safe subset of Markdown for participant READMEs: escaped first, then headings,
 * bullet lists, paragraphs, `code` and **bold**. Links keep their text and show the address. */
export function miniMarkdown(md: string): string {
  const inline = (s: string) =>
    esc(s)
      .replace(/`([^`]+)`/g, '<code>$1</code>')
      .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, '$1 ($2)');
  const out: string[] = [];
  let para: string[] = [];
  let list: string[] = [];
  const flush = () => {
    if (para.length) out.push(`<p>${inline(para.join(' '))}</p>`);
    if (list.length) out.push(`<ul>${list.map((li) => `<li>${inline(li)}</li>`).join('')}</ul>`);
    para = [];
    list = [];
  };
  for (const raw of md.split('\n')) {
    const line = raw.trimEnd();
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    const li = /^\s*[-*]\s+(.*)$/.exec(line);
    if (h) {
      flush();
      out.push(`<h4>${inline(h[2])}</h4>`);
    } else if (li) {
      if (para.length) {
        out.push(`<p>${inline(para.join(' '))}</p>`);
        para = [];
      }
      list.push(li[1]);
    } else if (line.trim() === '') {
      flush();
    } else if (list.length && /^\s+/.test(raw)) {
      list[list.length - 1] += ` ${line.trim()}`;
    } else {
      if (list.length) {
        out.push(`<ul>${list.map((x) => `<li>${inline(x)}</li>`).join('')}</ul>`);
        list = [];
      }
      para.push(line.trim());
    }
  }
  flush();
  return out.join('\n');
}

function pretty(v: unknown): string {
  return esc(JSON.stringify(v, null, 2) ?? 'null');
}

function participantsSection(results: ResultFile[], datasets: string[], participantsDir: string): string {
  const out: string[] = [`<section class="part" id="participants"><h2>Participants</h2>`];
  for (const ds of datasets) {
    out.push(`<div class="ds-block cards" data-ds="${esc(ds)}">`);
    for (const p of participantOrder(results, ds)) {
      const r = results.find((x) => x.dataset.name === ds && x.participant === p.name)!;
      const imp = isRecord(r.extra?.import) ? r.extra.import : null;
      out.push(`<article class="card"><h3>${esc(r.participant)}<span class="badge ${r.origin}">${r.origin}</span></h3><dl class="facts">`);
      const fact = (k: string, v: string) => out.push(`<dt>${esc(k)}</dt><dd>${v}</dd>`);
      fact('engine', esc(r.engine));
      fact('engine version', esc(r.engine_version));
      fact('filters', esc(r.filter_strategy));
      if (r.settings.notes) fact('notes', esc(r.settings.notes));
      if (r.settings.batch_size !== undefined) fact('batch size', esc(r.settings.batch_size));
      fact('hardware', esc(hardwareText(r.hardware)));
      fact(
        'run',
        esc(
          `vecbench ${r.run.vecbench_version}, started ${r.run.started}, updated ${r.run.updated}, ${r.run.complete ? 'complete' : 'INCOMPLETE'}, query seed ${r.run.query_seed}, ${r.run.protocol ?? 'warm'} protocol${(r.run.builds ?? 1) > 1 ? `, ${r.run.builds} index builds` : ''}`,
        ),
      );
      const latencyDriven = drivenOf(r, 'latency');
      fact('driven', esc(`throughput view: ${throughputDriven(r)}${latencyDriven ? `; latency view: ${latencyDriven}` : ''}`));
      if (r.run.timing) fact('passes per point', esc(`${r.run.timing.min_passes} to ${r.run.timing.max_passes}, at least ${r.run.timing.min_seconds} s`));
      out.push(`</dl>`);
      out.push(`<h4>Index settings</h4><pre>${pretty(r.settings.index)}</pre>`);
      if (r.settings.ladders.length) out.push(`<details><summary>knob ladders</summary><pre>${pretty(r.settings.ladders)}</pre></details>`);
      const failed = r.groups.filter((g) => g.status === 'failed');
      if (failed.length)
        out.push(`<h4>Failed groups</h4><ul>${failed.map((g) => `<li>${esc(g.key)}: ${esc(g.reason ?? 'no reason recorded')}</li>`).join('')}</ul>`);
      const skipped = r.groups.flatMap((g) => g.skipped.map((s) => `${g.key} ${JSON.stringify(s.knobs)}: ${s.reason}`));
      if (skipped.length) out.push(`<h4>Points left out</h4><ul>${skipped.map((s) => `<li>${esc(s)}</li>`).join('')}</ul>`);
      if (imp) {
        const runs = isRecord(imp.runs) ? Object.keys(imp.runs).length : 0;
        const head = [imp.harness, imp.file, runs ? `${runs} run file(s)` : null, typeof imp.note === 'string' ? imp.note : null].filter(
          (x) => typeof x === 'string' && x,
        );
        out.push(
          `<h4>Imported</h4><p class="note">${esc(head.join(' — '))}</p><details><summary>what the source file recorded</summary><pre>${pretty(imp)}</pre></details>`,
        );
      }
      const readme = join(participantsDir, r.participant, 'README.md');
      if (r.origin === 'measured' && existsSync(readme)) {
        // Short READMEs are shown open; long ones fold so the cards stay side by side.
        const md = readFileSync(readme, 'utf8');
        out.push(
          `<details${md.length <= 1500 ? ' open' : ''}><summary>facts from its README (participants/${esc(r.participant)}/README.md)</summary><div class="readme">${miniMarkdown(md)}</div></details>`,
        );
      } else if (r.origin === 'measured') {
        out.push(`<p class="note">No README.md in participants/${esc(r.participant)}.</p>`);
      }
      out.push(`</article>`);
    }
    out.push(`</div>`);
  }
  out.push(`</section>`);
  return out.join('\n');
}

/** Hardware in one line, saying "not recorded" for what an imported source left out. */
function hardwareText(h: ResultFile['hardware']): string {
  const known = (v: string) => v !== '' && !v.startsWith('not recorded');
  const parts = [
    known(h.cpu) ? h.cpu : 'CPU not recorded',
    h.cores > 0 ? `${h.cores} cores` : 'cores not recorded',
    h.memory_bytes > 0 ? `${fmtBytes(h.memory_bytes)} memory` : 'memory not recorded',
  ];
  if (known(h.os)) parts.push(h.os);
  if (known(h.node)) parts.push(`node ${h.node}`);
  return parts.join(', ');
}

function datasetSection(results: ResultFile[], datasets: string[], dataDir: string | undefined): string {
  const out: string[] = [`<section class="part" id="dataset"><h2>Dataset and hardware</h2>`];
  for (const ds of datasets) {
    const rs = results.filter((r) => r.dataset.name === ds);
    const shapes = [...new Set(rs.map((r) => JSON.stringify(r.dataset)))].map((s) => JSON.parse(s) as ResultFile['dataset']);
    out.push(`<div class="ds-block" data-ds="${esc(ds)}"><div class="cards"><article class="card"><h3>${esc(ds)}</h3><dl class="facts">`);
    const d0 = shapes[0];
    out.push(
      `<dt>rows x dim</dt><dd>${esc(`${d0.n.toLocaleString('en-US')} x ${d0.d}`)}</dd><dt>queries</dt><dd>${esc(d0.nq.toLocaleString('en-US'))}</dd><dt>metric</dt><dd>${esc(d0.metric)}</dd><dt>data hash</dt><dd><code>${esc(d0.hash)}</code></dd>`,
    );
    out.push(`</dl>`);
    if (shapes.length > 1) {
      out.push(
        `<p class="note" style="color:var(--bad)">The result files disagree about this dataset (different sizes or data hash): compare with care.</p><ul>`,
      );
      for (const s of shapes)
        out.push(
          `<li>${esc(
            rs
              .filter((r) => JSON.stringify(r.dataset) === JSON.stringify(s))
              .map((r) => r.participant)
              .join(', '),
          )}: ${esc(`${s.n} x ${s.d}, ${s.nq} queries, ${s.metric}, hash ${s.hash}`)}</li>`,
        );
      out.push(`</ul>`);
    }
    const mpath = dataDir ? join(dataDir, ds, 'manifest.json') : null;
    if (mpath && existsSync(mpath)) {
      try {
        const m = JSON.parse(readFileSync(mpath, 'utf8')) as Record<string, unknown>;
        out.push(`<h4>Manifest</h4><dl class="facts">`);
        for (const key of ['format', 'created', 'clusters', 'has_text']) if (key in m) out.push(`<dt>${esc(key)}</dt><dd>${esc(String(m[key]))}</dd>`);
        if (Array.isArray(m.langs)) out.push(`<dt>langs</dt><dd>${esc(m.langs.join(', '))}</dd>`);
        out.push(`</dl><h4>Source</h4><pre>${pretty(m.source)}</pre>`);
        if (isRecord(m.files)) {
          out.push(
            `<details><summary>files (${Object.keys(m.files).length})</summary><div class="scroll"><table><thead><tr><th>file</th><th>size</th><th>sha256</th></tr></thead><tbody>`,
          );
          for (const [f, e] of Object.entries(m.files)) {
            const entry = isRecord(e) ? e : {};
            out.push(
              `<tr><td>${esc(f)}</td><td>${esc(fmtBytes(Number(entry.bytes)))}</td><td><code>${esc(String(entry.sha256 ?? '').slice(0, 16))}…</code></td></tr>`,
            );
          }
          out.push(`</tbody></table></div></details>`);
        }
      } catch {
        out.push(`<p class="note">${esc(mpath)} is not readable JSON.</p>`);
      }
    } else {
      out.push(
        `<p class="note">The prepared dataset's manifest is not on this machine${dataDir ? ` (looked in ${esc(dataDir)})` : ''}; the figures above come from the result files.</p>`,
      );
    }
    out.push(`</article>`);
    const hw = [...new Set(rs.map((r) => JSON.stringify(r.hardware)))].map((s) => JSON.parse(s) as ResultFile['hardware']);
    out.push(`<article class="card"><h3>Hardware</h3>`);
    for (const h of hw) {
      const who = rs.filter((r) => JSON.stringify(r.hardware) === JSON.stringify(h)).map((r) => r.participant);
      out.push(`<dl class="facts"><dt>machine</dt><dd>${esc(hardwareText(h))}</dd><dt>results</dt><dd>${esc(who.join(', '))}</dd></dl>`);
    }
    out.push(`</article></div></div>`);
  }
  out.push(`</section>`);
  return out.join('\n');
}

// ---------- the script ----------

let scriptCache: Promise<string> | null = null;

/** The page script: app.ts with Observable Plot and frontier.ts, bundled into one IIFE. */
function pageScript(): Promise<string> {
  scriptCache ??= build({
    entryPoints: [APP_ENTRY],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    write: false,
    legalComments: 'eof',
    logLevel: 'silent',
  }).then((r) => {
    const js = r.outputFiles[0].text;
    // Inline in <script>: make sure nothing in the bundle can close or comment out the tag.
    return js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
  });
  return scriptCache;
}

// ---------- the page ----------

export async function renderPage(results: ResultFile[], opts: PageOptions = {}): Promise<string> {
  const cells = deriveCells(results);
  const datasets = [...new Set(results.map((r) => r.dataset.name))].sort();
  const participants: PageData['participants'] = {};
  const groups: PageData['groups'] = {};
  for (const ds of datasets) {
    participants[ds] = participantOrder(results, ds);
    groups[ds] = sortGroups(results.filter((r) => r.dataset.name === ds).flatMap((r) => r.groups.map((g) => g.key)));
  }
  const series: PageSeries[] = results.flatMap((r) => {
    const isExact = exactSearchTest(r);
    return r.groups.map((g) => ({
      dataset: r.dataset.name,
      participant: r.participant,
      origin: r.origin,
      group: g.key,
      filter: g.filter,
      k: g.k,
      status: g.status,
      reason: g.reason,
      points: g.points.map((p) => ({
        ladder_index: p.ladder_index,
        knobs: p.knobs,
        view: p.view,
        clients: p.clients,
        queries: p.queries,
        recall: p.recall,
        recall_strict: p.recall_strict,
        recall_threshold: p.recall_threshold,
        short_results: p.short_results,
        low_recall_share: p.low_recall_share,
        qps: p.qps,
        latency_ms: p.latency_ms,
        flags: p.flags,
        // Absent in older results; JSON leaves undefined fields out, so they stay absent.
        passes: p.passes,
        ci: p.ci,
        calibrated_for: p.calibrated_for,
        build: p.build,
        driven: p.driven,
        ...(isExact(p) ? { exact: true as const } : {}),
      })),
    }));
  });
  const notRecorded: PageData['notRecorded'] = {};
  for (const r of results) {
    const imp = r.extra?.import;
    if (isRecord(imp) && Array.isArray(imp.not_recorded)) notRecorded[`${r.dataset.name}|${r.participant}`] = imp.not_recorded.map(String);
  }
  const extraCurves: ExtraCurve[] = [];
  const general = generalSection(results, datasets, extraCurves);
  const churnCurves: ChurnCurve[] = [];
  const churn = churnSection(results, datasets, churnCurves);
  const data: PageData = { datasets, participants, groups, series, cells, notRecorded, extraCurves, churnCurves };

  const ks = [...new Set(results.flatMap((r) => r.groups.map((g) => g.k)))].sort((a, b) => a - b);
  const filters = [...new Set(sortGroups(results.flatMap((r) => r.groups.map((g) => g.key))).map((g) => g.split('/')[0]))];
  const option = (v: string, label: string, selected = false) => `<option value="${esc(v)}"${selected ? ' selected' : ''}>${esc(label)}</option>`;
  const generated = (opts.generated ?? new Date()).toISOString();
  const imported = results.filter((r) => r.origin === 'imported').length;

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>vecbench results</title>
<style>${PAGE_CSS}</style>
</head>
<body>
<header class="top"><h1>vecbench results</h1><p>${esc(`${results.length} result file(s)${imported ? ` (${imported} imported from other harnesses)` : ''}, ${datasets.length} dataset(s); page written ${generated}. Every number here is derived from the stored measured points.`)}</p></header>
<nav class="controls" aria-label="selectors">
<label>dataset <select id="sel-dataset">${datasets.map((d, i) => option(d, d, i === 0)).join('')}</select></label>
<label>k <select id="sel-k">${option('all', 'all')}${ks.map((k, i) => option(String(k), String(k), i === 0)).join('')}</select></label>
<label>filter <select id="sel-filter">${option('all', 'all')}${filters.map((f) => option(f, f)).join('')}</select></label>
<label>curve <select id="sel-curve">${option('qps', 'throughput: QPS', true)}${option('p50', 'latency: p50')}${option('p99', 'latency: p99')}</select></label>
<label>recall axis <select id="sel-xaxis">${option('linear', 'linear', true)}${option('nines', 'nines: −log10(1 − recall)')}</select></label>
<a href="#curves">curves</a><a href="#tables">tables</a><a href="#general">load &amp; resources</a>${churn ? '<a href="#churn">churn</a>' : ''}<a href="#participants">participants</a><a href="#dataset">dataset</a>
</nav>
<main>
<section class="part" id="curves"><h2>Recall vs throughput</h2>
<p class="note">One chart per group (filter, k). Dots are measured points (hollow: imported from another harness; ◆: a point calibrated for a target recall; red ring: a flagged point left off the frontier); the line is each participant's Pareto frontier (one per index build where there are several); × marks the table's readings. Bars are 95 % intervals: vertical for QPS (or the latency percentile drawn), horizontal for recall. QPS and latency are on log axes. The recall axis is linear or in nines, x = −log10(1 − recall), which spreads 0.9 – 0.9999 evenly; there recall 1.0 is drawn at 0.99999, the right edge. Hover a point for its knobs, recall readings, intervals, latency and flags.</p>
<div id="charts"><p class="empty">The charts need JavaScript.</p></div>
</section>
${tablesSection(results, cells, datasets)}
${general}
${churn}
${participantsSection(results, datasets, opts.participantsDir ?? DEFAULT_PARTICIPANTS_DIR)}
${datasetSection(results, datasets, opts.dataDir)}
</main>
<footer>vecbench — charts drawn with Observable Plot, bundled into this page.</footer>
<script type="application/json" id="vb-data">${jsonForScript(data)}</script>
<script>${await pageScript()}</script>
</body>
</html>
`;
}

/** Reads every result file under outDir and writes pageDir/index.html; returns its path. */
export async function writePage(outDir: string, pageDir: string, opts: PageOptions = {}): Promise<string> {
  // Credentials never reach the page: the data is masked value by value (result files written by
  // another vecbench may hold some), then the whole text (README text, manifests) by rule.
  const results = readAllResults(outDir).map((r) => redactValue(r));
  if (results.length === 0) throw new UserError(`no result files in ${outDir}; run vecbench run first (or pass --out DIR)`);
  const html = redact(await renderPage(results, opts), { keyValues: false });
  mkdirSync(pageDir, { recursive: true });
  const path = join(resolve(pageDir), 'index.html');
  writeFileAtomic(path, html);
  return path;
}
