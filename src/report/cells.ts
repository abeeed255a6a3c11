// The derived table (METHOD 4): every cell is read from stored points with the one cell rule
// in src/metrics/frontier.ts. The terminal table, `report --json` and the HTML page all come
// from deriveCells, so they cannot disagree.
import { leads, readCell, type CellStatus, type CurvePoint } from '../metrics/frontier.ts';
import type { ResultFile, ResultGroup } from '../results/schema.ts';

export const TARGETS = [0.9, 0.95, 0.99] as const;

export interface DerivedCell {
  dataset: string;
  participant: string;
  origin: 'measured' | 'imported';
  group: string;
  filter: string;
  k: number;
  target: number;
  status: CellStatus;
  /** Throughput (QPS) read on the frontier, or null. */
  value: number | null;
  /** value / best value in the row (dataset, group, target); null without a value. */
  lead: number | null;
  /** Best recall reached in the group, or null. */
  max_recall: number | null;
  /** Why a cell has no value when the group itself has a reason (not asked, unsupported, failed). */
  reason?: string;
}

/** The throughput curve of a group: the points measured with concurrent clients. */
export function throughputCurve(g: ResultGroup): CurvePoint[] {
  return g.points.filter((p) => p.view === 'throughput').map((p) => ({ recall: p.recall, value: p.qps, knobs: p.knobs, ladderIndex: p.ladder_index }));
}

export function groupOrder(key: string): [number, number] {
  const [filter, k] = key.split('/');
  const filters = ['none', 'cat10', 'cat100', 'cat1000', 'num10', 'num1', 'cat10+num10', 'cluster', 'farcluster', 'lang', 'otherlang'];
  const fi = filters.indexOf(filter);
  return [Number(k), fi < 0 ? 99 : fi];
}

export function deriveCells(results: ResultFile[]): DerivedCell[] {
  const cells: DerivedCell[] = [];
  for (const r of results) {
    for (const g of r.groups) {
      for (const target of TARGETS) {
        const base = { dataset: r.dataset.name, participant: r.participant, origin: r.origin, group: g.key, filter: g.filter, k: g.k, target, lead: null };
        if (g.status === 'not_asked' || g.status === 'unsupported') {
          cells.push({ ...base, status: g.status, value: null, max_recall: null, reason: g.reason });
          continue;
        }
        const cell = readCell(throughputCurve(g), target, 'higher');
        cells.push({ ...base, status: cell.status, value: cell.value, max_recall: cell.maxRecall, reason: g.status === 'failed' ? g.reason : undefined });
      }
    }
  }
  // Leads per row: the same dataset, group and target across participants.
  const rows = new Map<string, DerivedCell[]>();
  for (const c of cells) {
    const key = `${c.dataset}\u0000${c.group}\u0000${c.target}`;
    const row = rows.get(key);
    if (row) row.push(c);
    else rows.set(key, [c]);
  }
  for (const row of rows.values()) {
    const l = leads(row.map((c) => c.value), 'higher');
    row.forEach((c, i) => (c.lead = l[i]));
  }
  return cells.sort(
    (a, b) =>
      a.dataset.localeCompare(b.dataset) ||
      groupOrder(a.group)[0] - groupOrder(b.group)[0] ||
      groupOrder(a.group)[1] - groupOrder(b.group)[1] ||
      a.target - b.target ||
      a.participant.localeCompare(b.participant),
  );
}

/** Short text of a cell for tables. */
export function cellText(c: DerivedCell): string {
  switch (c.status) {
    case 'point':
    case 'interpolated':
    case 'above':
      return `${fmtQps(c.value!)}${c.status === 'above' ? '^' : ''} x${c.lead!.toFixed(2)}`;
    case 'not_reached':
      return `max ${c.max_recall!.toFixed(2)}`;
    case 'bracket_too_wide':
      return 'too wide';
    case 'none':
      // A group that failed (a plan check, a crash) has a reason; say so rather than "none".
      return c.reason ? 'failed' : 'none';
    case 'not_asked':
      return 'not asked';
    case 'unsupported':
      return 'unsupported';
  }
}

export function fmtQps(v: number): string {
  if (v >= 1000) return Math.round(v).toLocaleString('en-US');
  if (v >= 10) return v.toFixed(0);
  return v.toPrecision(2);
}
