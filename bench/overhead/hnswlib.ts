// hnswlib: vecbench's hnswlib participant (over hnswlib-node) and hnswlib-direct (vecbench's own
// zero-copy addon over the same headers) through the host, against bench/native/hnswlib_loop.cc
// (C++, the engine's own language, compiled with the flags node-gyp gave the binding against the
// very headers hnswlib-node bundles: the same library version); beside them
// bench/native/hnswlib_node_loop.ts, the same loop over hnswlib-node, which splits the gap into
// vecbench's own part and the binding's, and bench/native/hnswlib_loop.py over Debian's
// python3-hnswlib (its own hnswlib 0.6.2). Every side builds the same index from the same
// vectors (M, ef_construction, seed and space from the participant's settings, one thread).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadParticipant } from '../../src/runner/participants.ts';
import { compile, type OverheadEngine } from './kit.ts';

const hnswlib: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    const idx = (await loadParticipant('hnswlib')).index as { M: number; efConstruction: number; seed: number };
    const space = ds.metric === 'l2' ? 'l2' : 'ip';
    console.log(`hnswlib: M=${idx.M} ef_construction=${idx.efConstruction} seed=${idx.seed} space=${space}`);
    const pairs: [string, string][] = [];
    if (ctx.baseline) {
      await ctx.hostSide('baseline', 'hnswlib', { knob: 'ef', root: ctx.baseline });
      pairs.push(['baseline', 'cpp']);
    }
    await ctx.hostSide('vecbench', 'hnswlib', { knob: 'ef' });
    await ctx.hostSide('direct', 'hnswlib-direct', { knob: 'ef' });
    const args = [tmp, String(ds.n), String(ds.d), String(nq), String(k), String(idx.M), String(idx.efConstruction), String(idx.seed), space];
    await ctx.loopSide('node-loop', process.execPath, ['--import', import.meta.resolve('tsx'), path.join(ctx.native, 'hnswlib_node_loop.ts'), ...args]);
    const python = process.env.VECBENCH_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
    if (spawnSync(python, ['-c', 'import hnswlib']).status !== 0)
      ctx.fail(
        `${python} cannot import hnswlib (Debian's python3-hnswlib); run \`sudo npm run setup\` (it installs it) or set VECBENCH_PYTHON to an interpreter that has it`,
      );
    await ctx.loopSide('python', python, [path.join(ctx.native, 'hnswlib_loop.py'), ...args]);
    const headers = path.join(path.dirname(fileURLToPath(import.meta.resolve('hnswlib-node'))), '..', 'src', 'hnswlib');
    const cpp = path.join(tmp, 'hnswlib_loop');
    await compile(`the hnswlib C++ loop (g++ from Debian's build-essential, and ${headers})`, 'g++', [
      '-O3',
      '-m64',
      '-pthread',
      '-fno-omit-frame-pointer',
      '-std=gnu++17',
      '-I',
      headers,
      path.join(ctx.native, 'hnswlib_loop.cc'),
      '-o',
      cpp,
    ]);
    await ctx.loopSide('cpp', cpp, args);
    // vecbench/node-loop is vecbench's own cost, node-loop/cpp the binding's; direct/vecbench
    // what the binding's path costs inside vecbench (the same library, graph and host).
    pairs.push(['vecbench', 'cpp'], ['direct', 'cpp'], ['vecbench', 'node-loop'], ['node-loop', 'cpp'], ['python', 'cpp'], ['direct', 'vecbench']);
    if (ctx.baseline) pairs.push(['vecbench', 'baseline']);
    return pairs;
  },
};
export default hnswlib;
