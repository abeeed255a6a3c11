// The terminal table: one block per dataset, a row per (group, target recall), a column per
// participant (and one more, "name (exact)", for a participant's exact-search points). Throughput
// cells only (`report --json` has the latency view too). Not-asked groups are folded into one
// line so the table stays readable.
import type { DerivedCell } from './cells.ts';
import { cellText, columnName, readText, sharesText } from './cells.ts';
import { EXACT } from './exact-search.ts';

export function renderTable(allCells: DerivedCell[]): string {
  const out: string[] = [];
  const cells = allCells.filter((c) => c.view === 'throughput');
  const datasets = [...new Set(cells.map((c) => c.dataset))];
  for (const ds of datasets) {
    const dc = cells.filter((c) => c.dataset === ds);
    // Columns by name: a participant's exact row follows its own.
    const participants = [...new Set(dc.map(columnName))].sort();
    const names = participants.map((p) => (dc.find((c) => columnName(c) === p)?.origin === 'imported' ? `${p} (imported)` : p));
    const groups = [...new Set(dc.map((c) => c.group))];
    const notAsked = groups.filter((g) => dc.filter((c) => c.group === g).every((c) => c.status === 'not_asked'));
    // Bytes read per query beside each cell only where some cell read any: a run whose engines
    // all answered from memory would print 0.000 MiB/q in every cell.
    const reads = dc.some((c) => (c.read_bytes_per_query ?? 0) > 0);
    const rows: string[][] = [];
    for (const g of groups) {
      if (notAsked.includes(g)) continue;
      const targets = [...new Set(dc.filter((c) => c.group === g).map((c) => c.target))];
      for (const t of targets) {
        rows.push([
          g,
          t.toFixed(2),
          ...participants.map((p) => {
            const c = dc.find((x) => columnName(x) === p && x.group === g && x.target === t);
            return c ? `${cellText(c)}${sharesText(c)}${reads ? readText(c) : ''}` : '-';
          }),
        ]);
      }
    }
    // How each participant was driven in the throughput view: part of what a figure means.
    const driven = participants.map((p) => dc.find((c) => columnName(c) === p && c.driven !== null)?.driven ?? '');
    const header = ['group', 'recall', ...names];
    const drivenRow = ['', '', ...driven.map((d) => (d ? `(${d})` : ''))];
    const widths = header.map((h, i) => Math.max(h.length, drivenRow[i].length, ...rows.map((r) => r[i].length)));
    const line = (r: string[]) => r.map((x, i) => (i < 2 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join('  ');
    const readsKey = reads ? '; MiB/q: bytes the engine read from storage per query where the cell was read' : '';
    const spreadKey = dc.some((c) => c.spread !== undefined) ? " (cold points: spanning their group's spread)" : '';
    out.push(
      `${ds}: throughput (QPS) at target recall, read on each participant's Pareto frontier; ±: 95 % interval${spreadKey}; x = lead vs the row's best; ≈: a tie, no lead counts (the lead's interval, paired over passes in shared rounds where it can be, holds 1); ^ = read above the target; short / low (/ empty): shares of queries with a short answer / recall below 0.5 (/ no id at all) where the cell was read (shown from 1 %); collapsed: recall below 0.5 at every knob${readsKey}`,
    );
    out.push(line(header));
    if (driven.some((d) => d !== '')) out.push(line(drivenRow));
    out.push(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const r of rows) out.push(line(r));
    if (notAsked.length > 0) out.push(`not asked (filter keeps fewer than 10 x k rows): ${notAsked.join(', ')}`);
    // Failed and unsupported groups with their reasons, one line per participant and group, so
    // no failure (e.g. a plan check) is only a blank cell.
    const noted = new Set<string>();
    for (const c of dc) {
      if (!c.reason || c.status === 'not_asked' || c.search === EXACT || noted.has(`${c.participant}\u0000${c.group}`)) continue;
      noted.add(`${c.participant}\u0000${c.group}`);
      out.push(
        `${c.participant} ${c.group} ${c.status === 'unsupported' ? 'unsupported' : c.status === 'leak' ? 'LEAK' : c.reason.startsWith('every point is flagged') ? 'all flagged' : 'failed'}: ${c.reason.split('\n')[0].replace(/\s*Plan:$/, '')}`,
      );
    }
    // Cells that are not read at a calibrated point, with calibration's account of why.
    for (const c of dc) {
      if (!c.why || (c.status !== 'above' && c.status !== 'bracket_too_wide' && c.status !== 'interpolated')) continue;
      out.push(
        `${columnName(c)} ${c.group} ${c.target.toFixed(2)} ${c.status === 'above' ? '^' : c.status === 'interpolated' ? 'interpolated' : 'too wide'}: ${c.why}`,
      );
    }
    // How each participant answered where its cells were read (the plan check at every point):
    // one line per participant, its groups with their strategies, the targets where they differ.
    out.push(...strategyLines(dc, participants));
    // Points left off the frontier, counted per participant by flag.
    for (const p of participants) {
      const counts = new Map<string, number>();
      const seen = new Set<string>();
      for (const c of dc) {
        if (columnName(c) !== p || seen.has(c.group)) continue;
        seen.add(c.group);
        for (const [f, n] of Object.entries(c.excluded)) counts.set(f, (counts.get(f) ?? 0) + n);
      }
      if (counts.size > 0) out.push(`${p}: points left off the frontier: ${[...counts].map(([f, n]) => `${n} ${f}`).join(', ')}`);
    }
    out.push('');
  }
  return out.join('\n');
}

/** `participant: how it answered: none/10 graph walk; cat100/10 iterative scan (0.90, 0.95), exact
 * scan of matches (0.99)`, for the participants whose cells carry a strategy. */
function strategyLines(cells: DerivedCell[], participants: string[]): string[] {
  const out: string[] = [];
  for (const p of participants) {
    const groups: string[] = [];
    for (const g of [...new Set(cells.filter((c) => columnName(c) === p).map((c) => c.group))]) {
      const byLabel = new Map<string, string[]>();
      for (const c of cells) {
        if (columnName(c) !== p || c.group !== g || !c.strategy) continue;
        byLabel.set(c.strategy, [...(byLabel.get(c.strategy) ?? []), c.target.toFixed(2)]);
      }
      if (byLabel.size === 0) continue;
      const parts = [...byLabel].map(([label, targets]) => (byLabel.size > 1 ? `${label} (${targets.join(', ')})` : label));
      groups.push(`${g} ${parts.join(', ')}`);
    }
    if (groups.length > 0) out.push(`${p}: how it answered: ${groups.join('; ')}`);
  }
  return out;
}
