// The client-side keyword arm for engines without full-text search: BM25 from
// wink-bm25-text-search (k1 = 1.2, b = 0.75, idf ln(1 + (N - n + 0.5) / (n + 0.5)), as the
// common full-text engines compute it), over wink-nlp tokens (words and numbers, stop words out, Porter2 stems). It runs in the
// participant's host process beside the engine, so its time is measured the same way.
import { createRequire } from 'node:module';
import { indexTerms, winkVersion } from '../embed/wink.ts';

const require = createRequire(import.meta.url);

interface WinkBm25 {
  defineConfig(cfg: { fldWeights: Record<string, number>; bm25Params?: { k1?: number; b?: number; k?: number }; ovFldNames?: string[] }): void;
  definePrepTasks(tasks: ((s: string) => string[])[]): void;
  addDoc(doc: Record<string, unknown>, id: number): void;
  consolidate(fp?: number): void;
  search(text: string, limit?: number, filter?: (values: Record<string, unknown>) => boolean): [string, number][];
}

const BM25_PARAMS = { k1: 1.2, b: 0.75 };

export function bm25Description(): string {
  return `BM25 (k1 ${BM25_PARAMS.k1}, b ${BM25_PARAMS.b}, idf ln(1 + (N - n + 0.5) / (n + 0.5))) by wink-bm25-text-search ${winkVersion('wink-bm25-text-search')} over wink-nlp ${winkVersion('wink-nlp')} stems, stop words out`;
}

export class Bm25Index {
  private readonly engine: WinkBm25;
  /** Rows whose text has no index term: BM25 can never return them. */
  readonly emptyRows: number;

  constructor(texts: readonly string[]) {
    const make = require('wink-bm25-text-search') as () => WinkBm25;
    this.engine = make();
    // The option is spelled ovFldNames in the code (its comment says ovFieldNames, which is ignored).
    this.engine.defineConfig({ fldWeights: { body: 1 }, bm25Params: { ...BM25_PARAMS, k: 1 }, ovFldNames: ['row'] });
    this.engine.definePrepTasks([indexTerms]);
    let empty = 0;
    texts.forEach((text, row) => {
      if (indexTerms(text).length === 0) empty++;
      this.engine.addDoc({ body: text, row }, row);
    });
    this.emptyRows = empty;
    this.engine.consolidate(6);
  }

  /** Row ids, best first, at most k; `keep` (when given) drops rows before ranking. */
  search(text: string, k: number, keep?: (row: number) => boolean): number[] {
    const hits = this.engine.search(text, k, keep ? (v) => keep(v.row as number) : undefined);
    return hits.map((h) => Number(h[0]));
  }
}
