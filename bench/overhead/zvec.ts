// zvec: its participant (@zvec/zvec 0.7.0, the Node binding, querySync with HNSW ef) through the
// host, against bench/native/zvec_loop.py, a plain loop over zvec's own Python package at the
// same version, on a copy of the collection the participant built (zvec locks an open
// collection, and the host keeps its own open).
import { spawnSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import path from 'node:path';
import { loadParticipant } from '../../src/runner/participants.ts';
import type { OverheadEngine } from './kit.ts';

const zvec: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    const python = ctx.venvPython('bench-zvec', 'bench/native/provision.sh');
    const pyVersion = spawnSync(python, ['-c', 'import importlib.metadata as m; print(m.version("zvec"))'], { encoding: 'utf8' }).stdout?.trim();
    console.log(`zvec: host @zvec/zvec ${await (await loadParticipant('zvec')).adapter.engineVersion()}; loop zvec ${pyVersion} (Python)`);
    const side = await ctx.hostSide('zvec', 'zvec', { knob: 'ef' });
    const copy = path.join(tmp, 'zvec-collection');
    cpSync(path.join(side.workDir, 'zvec'), copy, { recursive: true });
    await ctx.loopSide('zvec-py', python, [path.join(ctx.native, 'zvec_loop.py'), copy, tmp, String(nq), String(ds.d), String(k)]);
    return [['zvec', 'zvec-py']];
  },
};
export default zvec;
