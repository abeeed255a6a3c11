// Qdrant Edge, an engine in another language: its participant through the host and its Python
// host, against bench/native/qdrant_edge_loop.py, a plain loop over qdrant-edge-py in the same
// provisioned interpreter, on a copy of the shard the participant built.
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { OverheadEngine } from './kit.ts';

const qdrantEdge: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    const python = path.join(ctx.cache, 'venv', 'qdrant-edge', 'bin', 'python');
    if (!existsSync(python))
      ctx.fail(`Qdrant Edge's Python environment is missing (${python}); participants/qdrant-edge/provision.sh (run by \`sudo npm run setup\`) makes it`);
    const side = await ctx.hostSide('qdrant-edge', 'qdrant-edge', { knob: 'hnsw_ef', cpu: 'none' });
    const copy = path.join(tmp, 'qdrant-shard');
    cpSync(path.join(side.workDir, 'shard'), copy, { recursive: true });
    await ctx.loopSide('qdrant-edge-py', python, [path.join(ctx.native, 'qdrant_edge_loop.py'), copy, tmp, String(nq), String(ds.d), String(k)]);
    return [['qdrant-edge', 'qdrant-edge-py']];
  },
};
export default qdrantEdge;
