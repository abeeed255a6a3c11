// The report's sections beyond the cell table and the general table, one entry a feature: the
// rows it derives from the result files (their `extra` section, read through the feature's own
// schema), how the terminal prints them and the key that holds them in `report --json`.
// `vecbench report` reads this list, so a feature's report is one entry here, not a change to
// the command.
import { deriveLoad, renderLoad } from '../loadgen/report.ts';
import type { ResultFile } from '../results/schema.ts';
import { deriveChurn, renderChurn } from './churn.ts';
import { deriveQuality, renderQuality } from './quality.ts';

export interface ReportSection {
  /** Its key in `report --json`. */
  json: string;
  /** Printed between the cell table and the general table (else after the general table). */
  beforeGeneral: boolean;
  derive(results: ResultFile[]): unknown[];
  /** The terminal text of the derived rows ('' when there is nothing to print). */
  render(rows: unknown[], results: ResultFile[]): string;
}

/** One section, its derive and render typed alike. */
function section<T>(s: {
  json: string;
  beforeGeneral?: boolean;
  derive(results: ResultFile[]): T[];
  render(rows: T[], results: ResultFile[]): string;
}): ReportSection {
  return { ...s, beforeGeneral: s.beforeGeneral ?? false, render: (rows, results) => s.render(rows as T[], results) };
}

export const REPORT_SECTIONS: readonly ReportSection[] = [
  section({ json: 'quality', beforeGeneral: true, derive: deriveQuality, render: renderQuality }),
  section({ json: 'churn', derive: deriveChurn, render: renderChurn }),
  section({ json: 'load', derive: deriveLoad, render: (rows) => renderLoad(rows) }),
];
