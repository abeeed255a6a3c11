// A derived cell of one row (dataset d, none/10, target 0.95, throughput) with the given value
// and interval: what markLeads and the lead tests start from.
import type { DerivedCell } from '../../src/report/cells.ts';

export function cell(participant: string, value: number | null, low: number | null, high: number | null): DerivedCell {
  return {
    dataset: 'd',
    participant,
    origin: 'measured',
    group: 'none/10',
    filter: 'none',
    k: 10,
    target: 0.95,
    view: 'throughput',
    search: 'ann',
    status: value === null ? 'not_reached' : 'calibrated',
    value,
    ci_low: low,
    ci_high: high,
    short_share: null,
    low_recall_share: null,
    empty_share: null,
    read_bytes_per_query: null,
    lead: null,
    lead_ci: null,
    lead_method: null,
    tie: false,
    max_recall: 0.99,
    read_recall: [],
    driven: '2 threads',
    excluded: {},
  };
}
