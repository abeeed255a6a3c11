// The results tables of the page (node side): static HTML from deriveCells, each cell with its
// exact value in data attributes; and the order participants and groups are shown in.
import { esc, fmtNum } from './html-text.ts';
import {
  cellText,
  fmtMaxRecall,
  fmtPct,
  fmtQps,
  fmtShare,
  groupOrder,
  halfWidth,
  leadText,
  readText,
  sharesText,
  TARGETS,
  type DerivedCell,
} from '../cells.ts';
import { EXACT } from '../exact-search.ts';
import { Z975 } from '../../metrics/stats.ts';
import type { ResultFile } from '../../results/schema.ts';
import { CELL_SHARES } from '../../results/readings.ts';

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
  // Cold points: one pass each, so the interval also spans how far the group's points scatter.
  if (c.spread !== undefined)
    lines.push(`including the cold group's spread: a point lands within ×${Math.exp(Z975 * c.spread).toFixed(2)} of its curve (95 %)`);
  const how = c.lead_method === 'paired' ? 'paired' : `unpaired${c.lead_note ? `: ${c.lead_note}` : ''}`;
  const leadCi = c.lead_ci ? ` (interval ×${c.lead_ci[0].toFixed(2)} – ×${c.lead_ci[1].toFixed(2)}, ${how})` : '';
  if (c.lead === 1 && c.lead_method === null) lines.push(c.tie ? `the best in its row, tied: another cell's lead interval holds ×1` : 'the best in its row');
  else if (c.tie) lines.push(`no lead counts: the lead's interval holds ×1 (×${c.lead!.toFixed(2)}${leadCi})`);
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
    CELL_SHARES.map((s) => ` data-${s.name.replace(/_/g, '-')}="${(c as unknown as Record<string, unknown>)[s.name] ?? ''}"`).join('') +
    ` data-read-bytes="${c.read_bytes_per_query ?? ''}"` +
    ` data-ci-low="${c.ci_low ?? ''}" data-ci-high="${c.ci_high ?? ''}" data-tie="${c.tie ? 1 : 0}"${c.builds ? ` data-builds="${c.builds.length}"` : ''} data-search="${c.search}"` +
    ` data-strategy="${esc(c.strategy ?? '')}"`;
  const status = c.status === 'calibrated' ? `calibrated for ${target.toFixed(2)}: ${STATUS_TEXT.calibrated}` : (STATUS_TEXT[c.status] ?? c.status);
  const lines = [`${status}${c.reason ? ` — ${c.reason}` : ''}`];
  if (c.why) lines.push(`why: ${c.why}`);
  if (c.strategy) lines.push(`how the engine answered: ${c.strategy}`);
  // The shares the registry carries into cells, each under its reading's label.
  const shareLines = CELL_SHARES.flatMap((s) => {
    const v = (c as unknown as Record<string, number | null>)[s.name];
    return v === null || v === undefined ? [] : [`${s.label}: ${fmtShare(v)}`];
  });
  if (shareLines.length > 0) lines.push(shareLines.join('; '));
  if (c.read_bytes_per_query !== null) lines.push(`read from storage per query: ${readText(c).trim().replace('MiB/q', 'MiB')}`);
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

export function participantOrder(results: ResultFile[], dataset: string): { name: string; origin: 'measured' | 'imported' }[] {
  const seen = new Map<string, 'measured' | 'imported'>();
  for (const r of results) if (r.dataset.name === dataset) seen.set(r.participant, r.origin);
  return [...seen.entries()]
    .map(([name, origin]) => ({ name, origin }))
    .sort((a, b) => (a.origin === b.origin ? a.name.localeCompare(b.name) : a.origin === 'measured' ? -1 : 1));
}

export function sortGroups(keys: Iterable<string>): string[] {
  return [...new Set(keys)].sort((a, b) => {
    const [ka, fa] = groupOrder(a);
    const [kb, fb] = groupOrder(b);
    return ka - kb || fa - fb || a.localeCompare(b);
  });
}

/** How a participant was driven in a view, from its points ("32 in flight"); null for results
 * measured before points recorded it. */
export function drivenOf(r: ResultFile, view: 'throughput' | 'latency'): string | null {
  const seen = [...new Set(r.groups.flatMap((g) => g.points.filter((p) => p.view === view && p.driven).map((p) => p.driven!)))];
  return seen.length > 0 ? seen.join(' / ') : null;
}

/** The throughput view's driving as measured, or the run's client count where points do not say. */
export function throughputDriven(r: ResultFile): string {
  return drivenOf(r, 'throughput') ?? `${r.run.clients} clients`;
}

export function tablesSection(results: ResultFile[], cells: DerivedCell[], datasets: string[]): string {
  const out: string[] = [];
  out.push(`<section class="part" id="tables"><h2>Throughput at target recall</h2>`);
  out.push(
    `<p class="note">Each cell is read on the participant's Pareto frontier of throughput-view points (see docs/method.md §4): a point calibrated for the target where there is one, else the QPS where the frontier crosses the target recall, interpolated in log QPS between the two frontier points around it; ×lead = value / the best value in the row. ±: half the 95 % interval of the value, relative to it (bootstrap over the passes; with several index builds the interval spans the builds'); hover a cell for the bounds. ≈: no lead counts. A lead is read from pairs of passes taken in the same shared round of the run (else within seconds of each other) where the two cells have them (paired: the drift of a shared machine cancels in each pair's ratio), else from the two cells' own intervals (unpaired: cells measured apart); hover a cell for which. Flagged points (a busy machine, a client at its limit, invalid results, harness overhead) are left off the frontier. Exact-search points (a participant's exact scan, or an imported harness's exact run) are read on their own, in a column marked exact beside the participant's: the index's column never borrows their recall. Cells are derived from the stored points only; the curves above are drawn from the same points.</p>`,
  );
  out.push(
    `<div class="status-key"><span class="best-key" style="background:var(--best)">best in row ×1.00</span><span class="tie-key">≈ the lead's interval holds ×1: no lead counts</span><span>±3.1%: 95 % interval</span><span>⚑2: points left off the frontier</span><span style="background:var(--warnbg);color:var(--warn)">max 0.93: target never reached</span><span style="background:var(--wide)">bracket too wide</span><span class="nm">not asked</span><span style="color:#6b4e8a;font-style:italic">unsupported</span><span>↑ read above the target</span><span style="color:var(--bad)">failed / no points / all flagged</span></div>`,
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
