// The engines bench:overhead measures, in the order it reports them; `--engines` picks some.
// Adding one is a module beside this one (an OverheadEngine) and its line here.
import faiss from './faiss.ts';
import hnswlib from './hnswlib.ts';
import type { OverheadEngine } from './kit.ts';
import lucene from './lucene.ts';
import qdrantEdge from './qdrant-edge.ts';
import usearch from './usearch.ts';

export const OVERHEAD_ENGINES: Record<string, OverheadEngine> = {
  hnswlib,
  usearch,
  faiss,
  'qdrant-edge': qdrantEdge,
  lucene,
};
