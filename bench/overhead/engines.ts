// The engines bench:overhead measures, in the order it reports them; `--engines` picks some.
// Adding one is a module beside this one (an OverheadEngine) and its line here.
import exact from './exact.ts';
import faiss from './faiss.ts';
import hnswlib from './hnswlib.ts';
import type { OverheadEngine } from './kit.ts';
import lancedb from './lancedb.ts';
import libsql from './libsql.ts';
import lucene from './lucene.ts';
import orama from './orama.ts';
import pglite from './pglite.ts';
import qdrantEdge from './qdrant-edge.ts';
import sqliteVec from './sqlite-vec.ts';
import usearch from './usearch.ts';
import zvec from './zvec.ts';

export const OVERHEAD_ENGINES: Record<string, OverheadEngine> = {
  hnswlib,
  usearch,
  faiss,
  'qdrant-edge': qdrantEdge,
  lucene,
  zvec,
  'sqlite-vec': sqliteVec,
  pglite,
  orama,
  exact,
  libsql,
  lancedb,
};
