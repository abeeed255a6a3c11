// LanceDB: its participant (npm @lancedb/lancedb) through the host, against
// bench/native/lancedb_loop.py, a plain loop over LanceDB's Python package of the same release
// (the same Rust code and lance core) on a copy of the dataset directory the participant wrote:
// the same table, IVF index and query (nprobes the knob, the participant's default of no refine).
import { cpSync } from 'node:fs';
import path from 'node:path';
import type { OverheadEngine } from './kit.ts';

const TABLE_DIR = 'vectors.lance';

const lancedb: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    const python = ctx.venvPython('bench-lancedb', 'bench/native/provision.sh');
    // LanceDB searches on its own runtime's threads, which the host's main thread does not hold:
    // its CPU is the whole host process's (the loop's, its process_time).
    const side = await ctx.hostSide('lancedb', 'lancedb', { knob: 'nprobes', cpu: 'process' });
    const copy = path.join(tmp, 'lancedb-copy');
    cpSync(path.join(side.workDir, TABLE_DIR), path.join(copy, TABLE_DIR), { recursive: true });
    await ctx.loopSide('lancedb-py', python, [path.join(ctx.native, 'lancedb_loop.py'), copy, tmp, String(nq), String(ds.d), String(k)]);
    return [['lancedb', 'lancedb-py']];
  },
};
export default lancedb;
