// The page's sections after the curves, in page order, one entry each: its anchor, its label in
// the page's navigation and its HTML from the stored results ('' when the results hold nothing
// for it, and then no link either). A feature's part of the page is one entry here; the page
// itself (html.ts) names none of them.
import type { ResultFile } from '../../results/schema.ts';
import type { DerivedCell } from '../cells.ts';
import { datasetSection, participantsSection } from './about-html.ts';
import { churnSection } from './churn-html.ts';
import { diskSection } from './disk-html.ts';
import { filtersSection } from './filters-html.ts';
import { generalSection } from './general-html.ts';
import { tablesSection } from './tables-html.ts';
import type { ChurnCurve, ExtraCurve } from './types.ts';

/** What a section reads, and the curves it asks the page script to draw. */
export interface PageSectionInput {
  results: ResultFile[];
  cells: DerivedCell[];
  datasets: string[];
  participantsDir: string;
  dataDir: string | undefined;
  extraCurves: ExtraCurve[];
  churnCurves: ChurnCurve[];
}

interface PageSection {
  /** The section element's id, the navigation link's anchor. */
  id: string;
  nav: string;
  html(input: PageSectionInput): string;
}

export const PAGE_SECTIONS: readonly PageSection[] = [
  { id: 'tables', nav: 'tables', html: (p) => tablesSection(p.results, p.cells, p.datasets) },
  { id: 'filters', nav: 'filters', html: (p) => filtersSection(p.results, p.cells, p.datasets) },
  { id: 'disk', nav: 'reads from storage', html: (p) => diskSection(p.results, p.datasets, p.extraCurves) },
  { id: 'general', nav: 'load & resources', html: (p) => generalSection(p.results, p.datasets, p.extraCurves) },
  { id: 'churn', nav: 'churn', html: (p) => churnSection(p.results, p.datasets, p.churnCurves) },
  { id: 'participants', nav: 'participants', html: (p) => participantsSection(p.results, p.datasets, p.participantsDir) },
  { id: 'dataset', nav: 'dataset', html: (p) => datasetSection(p.results, p.datasets, p.dataDir) },
];
