// How a derived cell is written (the terminal table, the page, compare): its column, its lead,
// its value with interval, and the shares; and the leads and ties of a row.
import { leads } from '../metrics/frontier.ts';
import { pairedLead, type Series } from '../metrics/paired.ts';
import type { CellShares, DerivedCell } from './cell-types.ts';
import { CELL_SHARES, READINGS, type Reading } from '../results/readings.ts';
import { EXACT } from './exact-search.ts';

/** The start of a cell's reason when every point of its curve is flagged. */
export const ALL_FLAGGED = 'every point is flagged';

export function columnName(c: Pick<DerivedCell, 'participant' | 'search'>): string {
  return c.search === EXACT ? `${c.participant} (${EXACT})` : c.participant;
}

const intervalOf = (c: DerivedCell) => ({ low: c.ci_low ?? c.value!, high: c.ci_high ?? c.value! });

/** A lead of one cell over another and how it was read (DerivedCell's lead, lead_ci, lead_method,
 * lead_note). */
export interface LeadReading {
  lead: number;
  ci: [number, number];
  method: 'paired' | 'unpaired';
  note?: string;
}

/**
 * The lead of `c` over `ref` (both with a value). Where both have passes laid out in time
 * (`seriesOf`) that pair up, the lead and its interval come from the paired passes
 * (src/metrics/paired.ts): the drift both shared cancels. Otherwise the lead is value / ref's
 * value and its interval the bound of the two cells' own intervals (the most and the least the
 * ratio can be given both); the note says why it was not paired.
 */
export function leadOver(c: DerivedCell, ref: DerivedCell, seriesOf: (c: DerivedCell) => Series | null): LeadReading {
  const [sc, sr] = [seriesOf(c), seriesOf(ref)];
  const paired = sc && sr ? pairedLead(sc, sr) : { reason: 'no passes laid out in time' };
  if ('lead' in paired) return { lead: paired.lead, ci: paired.ci, method: 'paired' };
  const [ci, ri] = [intervalOf(c), intervalOf(ref)];
  return { lead: c.value! / ref.value!, ci: [ci.low / ri.high, ci.high / ri.low], method: 'unpaired', note: paired.reason };
}

/** Sets lead, lead_ci, lead_method and tie on the cells of one row (leadOver against the row's
 * best; a tie is a lead whose interval holds 1, which for the unpaired bound is two intervals
 * that overlap). */
export function markLeads(row: DerivedCell[], better: 'higher' | 'lower' = 'higher', seriesOf: (c: DerivedCell) => Series | null = () => null): void {
  const l = leads(
    row.map((c) => c.value),
    better,
  );
  row.forEach((c, i) => (c.lead = l[i]));
  const valued = row.filter((c) => c.lead !== null);
  const best = valued.find((c) => c.lead === 1);
  if (!best) return;
  for (const c of valued) {
    if (c === best) continue;
    const r = leadOver(c, best, seriesOf);
    c.lead = r.lead;
    c.lead_ci = r.ci;
    c.lead_method = r.method;
    if (r.note !== undefined) c.lead_note = r.note;
    c.tie = r.ci[0] <= 1 && 1 <= r.ci[1];
  }
  best.tie = valued.some((o) => o !== best && o.tie);
}

/** The lead as tables print it: `x0.52`, or `≈x1.00` for a tie (no lead counts). */
export function leadText(c: DerivedCell): string {
  return c.tie ? '≈x1.00' : `x${c.lead!.toFixed(2)}`;
}

/** The best recall a participant reached, as `max 0.987`: truncated, never rounded up, so a
 * recall short of a target never prints as the target itself (0.987 is not "0.99"). */
export function fmtMaxRecall(recall: number): string {
  return `max ${(Math.floor(recall * 1000) / 1000).toFixed(3)}`;
}

/** Short text of a cell for tables. */
export function cellText(c: DerivedCell): string {
  switch (c.status) {
    case 'calibrated':
    case 'point':
    case 'interpolated':
    case 'above':
      return `${fmtQps(c.value!)}${c.status === 'above' ? '^' : ''}${c.ci_low !== null && c.ci_high !== null && c.value ? ` ±${fmtPct(halfWidth(c))}` : ''} ${leadText(c)}`;
    case 'not_reached':
      return fmtMaxRecall(c.max_recall!);
    case 'collapsed':
      return `collapsed, short ${fmtShare(c.short_share)}`;
    case 'leak':
      return 'LEAK';
    case 'bracket_too_wide':
      return 'too wide';
    case 'none':
      // Every point flagged (left off the frontier) is not a failure of the engine.
      if (c.reason?.startsWith(ALL_FLAGGED)) return 'all flagged';
      // A group that failed (a plan check, a crash) has a reason; say so rather than "none".
      return c.reason ? 'failed' : 'none';
    case 'not_asked':
      return 'not asked';
    case 'unsupported':
      return 'unsupported';
  }
}

/** A share as a whole percent (`12%`), `<1%` for a small non-zero one, `?` when unknown. */
export function fmtShare(x: number | null): string {
  if (x === null || !Number.isFinite(x)) return '?';
  return x > 0 && x < 0.005 ? '<1%' : `${Math.round(x * 100)}%`;
}

/** The shares beside a cell where any is worth a look (1 % or more), e.g. ` short 4% low 12%`:
 * each the registry carries into cells (src/results/readings.ts), an optional one (empty
 * answers) only where it is worth a look itself. A collapsed cell (recall below 0.5 everywhere)
 * says how many queries were. */
export function sharesText(c: CellShares & Pick<DerivedCell, 'status'>): string {
  if (c.status === 'collapsed') return ` low ${fmtShare(c.low_recall_share)}`;
  const value = (name: string) => (c as unknown as Record<string, number | null>)[name] ?? 0;
  if (CELL_SHARES.every((s) => value(s.name) < 0.005)) return '';
  return CELL_SHARES.filter((s) => !(READINGS[s.reading] as Reading).optional || value(s.name) >= 0.005)
    .map((s) => ` ${s.short} ${fmtShare(value(s.name))}`)
    .join('');
}

/** Bytes read from storage per query beside a cell that measured them, e.g. ` 12.3 MiB/q`. */
export function readText(c: Pick<DerivedCell, 'read_bytes_per_query'>): string {
  const b = c.read_bytes_per_query;
  if (b === null || !Number.isFinite(b)) return '';
  const mib = b / 2 ** 20;
  return ` ${mib >= 100 ? mib.toFixed(0) : mib >= 1 ? mib.toFixed(1) : mib.toFixed(3)} MiB/q`;
}

/** Relative half-width of a cell's interval ((high - low) / 2 / value). */
export function halfWidth(c: { value: number | null; ci_low: number | null; ci_high: number | null }): number {
  if (c.value === null || c.ci_low === null || c.ci_high === null || !(c.value > 0)) return NaN;
  return (c.ci_high - c.ci_low) / 2 / c.value;
}

export function fmtPct(x: number): string {
  if (!Number.isFinite(x)) return '?';
  const pct = x * 100;
  return pct < 10 ? `${pct.toFixed(1)}%` : `${Math.round(pct)}%`;
}

export function fmtQps(v: number): string {
  if (v >= 1000) return Math.round(v).toLocaleString('en-US');
  if (v >= 10) return v.toFixed(0);
  return v.toPrecision(2);
}
