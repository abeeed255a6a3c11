// Leads across two runs (docs/compare.md). Nothing pairs across runs, but
// within each run a row's participants were timed in shared rounds: a lead read there cancels the
// drift of that run's machine. So "A's lead over B held between the runs" is asked of leads, not of
// absolute cells: for each row (dataset, group, target, view) one reference participant (A's best,
// or B's when A's best has no value in B), every other participant's lead over it in each run
// (paired where the passes allow, else the two cells' bound), and B's lead / A's lead with the
// bound of the two leads' intervals. A change counts when that interval excludes 1.
import type { Series } from '../metrics/paired.ts';
import { leadOver, type LeadReading } from './cell-text.ts';
import { columnName, type DerivedCell } from './cells.ts';

export type SeriesOf = (c: DerivedCell) => Series | null;

type RunLead = LeadReading;

export interface LeadPair {
  dataset: string;
  group: string;
  target: number;
  view: DerivedCell['view'];
  participant: string;
  /** The participant both runs' leads are read against. */
  reference: string;
  /** The row's best participant differs between the runs. */
  best_changed: boolean;
  a: RunLead;
  b: RunLead;
  /** B's lead / A's lead, with [B low / A high, B high / A low]. */
  ratio: number;
  ratio_ci: [number, number];
  change: 'held' | 'grew' | 'shrank';
}

export interface LeadSummary {
  compared: number;
  paired_both: number;
  held: number;
  grew: number;
  shrank: number;
  /** Rows whose best participant differs between the runs. */
  reference_changed: number;
}

const rowKey = (c: DerivedCell) => [c.dataset, c.group, c.target, c.view].join('\u0000');
const valued = (c: DerivedCell | undefined): c is DerivedCell => c !== undefined && c.value !== null && c.value > 0;

function byRow(cells: DerivedCell[]): Map<string, Map<string, DerivedCell>> {
  const rows = new Map<string, Map<string, DerivedCell>>();
  for (const c of cells) {
    const k = rowKey(c);
    if (!rows.has(k)) rows.set(k, new Map());
    rows.get(k)!.set(columnName(c), c);
  }
  return rows;
}

export function compareLeads(a: DerivedCell[], b: DerivedCell[], seriesOf: SeriesOf): LeadPair[] {
  const rowsA = byRow(a);
  const rowsB = byRow(b);
  const out: LeadPair[] = [];
  for (const [key, ra] of rowsA) {
    const rb = rowsB.get(key);
    if (!rb) continue;
    const bestOf = (row: Map<string, DerivedCell>) => [...row.entries()].find(([, c]) => valued(c) && c.lead === 1)?.[0];
    const [bestA, bestB] = [bestOf(ra), bestOf(rb)];
    const reference = [bestA, bestB].find((name) => name !== undefined && valued(ra.get(name)) && valued(rb.get(name)));
    if (!reference) continue;
    for (const [name, ca] of ra) {
      const cb = rb.get(name);
      if (name === reference || !valued(ca) || !valued(cb)) continue;
      const la = leadOver(ca, ra.get(reference)!, seriesOf);
      const lb = leadOver(cb, rb.get(reference)!, seriesOf);
      const ratio_ci: [number, number] = [lb.ci[0] / la.ci[1], lb.ci[1] / la.ci[0]];
      out.push({
        dataset: ca.dataset,
        group: ca.group,
        target: ca.target,
        view: ca.view,
        participant: name,
        reference,
        best_changed: bestA !== bestB,
        a: la,
        b: lb,
        ratio: lb.lead / la.lead,
        ratio_ci,
        change: ratio_ci[0] > 1 ? 'grew' : ratio_ci[1] < 1 ? 'shrank' : 'held',
      });
    }
  }
  return out;
}

export function leadSummary(leads: LeadPair[]): LeadSummary {
  const changedRows = new Set(leads.filter((l) => l.best_changed).map((l) => [l.dataset, l.group, l.target, l.view].join('\u0000')));
  return {
    compared: leads.length,
    paired_both: leads.filter((l) => l.a.method === 'paired' && l.b.method === 'paired').length,
    held: leads.filter((l) => l.change === 'held').length,
    grew: leads.filter((l) => l.change === 'grew').length,
    shrank: leads.filter((l) => l.change === 'shrank').length,
    reference_changed: changedRows.size,
  };
}

const x = (v: number) => `x${v.toFixed(2)}`;
const leadText = (l: RunLead) => `${x(l.lead)} [${l.ci[0].toFixed(2)}, ${l.ci[1].toFixed(2)}]${l.method === 'paired' ? '' : ' u'}`;

/** The lines of one dataset's lead table: every lead that changed, and a count of those that held. */
export function renderLeads(leads: LeadPair[]): string[] {
  if (leads.length === 0) return [];
  const ds = leads[0].dataset;
  const changed = leads.filter((l) => l.change !== 'held');
  const out = [
    `${ds}: leads over the row's reference (A's best), each read within its run (paired over passes in shared rounds; u: unpaired); B/A of the leads with its interval; held = it holds 1`,
  ];
  const rows = changed.map((l) => [
    l.group,
    `${l.target.toFixed(2)} ${l.view}`,
    `${l.participant} / ${l.reference}`,
    leadText(l.a),
    leadText(l.b),
    `${x(l.ratio)} [${l.ratio_ci[0].toFixed(2)}, ${l.ratio_ci[1].toFixed(2)}]`,
    l.change,
  ]);
  if (rows.length > 0) {
    const all = [['group', 'recall', 'lead of / over', 'A', 'B', 'B/A', 'lead'], ...rows];
    const widths = all[0].map((_, i) => Math.max(...all.map((r) => r[i].length)));
    const line = (r: string[]) =>
      r
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd();
    out.push(line(all[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...all.slice(1).map(line));
  }
  out.push(`${leads.length - changed.length} of ${leads.length} leads held`, '');
  return out;
}
