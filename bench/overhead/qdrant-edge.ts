// Qdrant Edge, an engine in another language: its participant through the host and its Python
// host, against bench/native/qdrant_edge_loop.py, a plain loop over qdrant-edge-py in the same
// provisioned interpreter, on a copy of the shard the participant built.
import { cpSync } from 'node:fs';
import path from 'node:path';
import type { OverheadEngine } from './kit.ts';

const qdrantEdge: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    const python = ctx.venvPython('qdrant-edge', 'participants/qdrant-edge/provision.sh');
    const side = await ctx.hostSide('qdrant-edge', 'qdrant-edge', { knob: 'hnsw_ef', cpu: 'none' });
    const copy = path.join(tmp, 'qdrant-shard');
    cpSync(path.join(side.workDir, 'shard'), copy, { recursive: true });
    await ctx.loopSide('qdrant-edge-py', python, [path.join(ctx.native, 'qdrant_edge_loop.py'), copy, tmp, String(nq), String(ds.d), String(k)]);
    return [['qdrant-edge', 'qdrant-edge-py']];
  },
};
export default qdrantEdge;
