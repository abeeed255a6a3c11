// faiss: its participant (IndexHNSWFlat through vecbench's addon, efSearch) through the host,
// against bench/native/faiss_loop.cc linked to the same Debian libfaiss as the addon, searching
// the index file the participant wrote.
import path from 'node:path';
import { compile, type OverheadEngine } from './kit.ts';

const faiss: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    const side = await ctx.hostSide('faiss', 'faiss', { knob: 'efSearch' });
    const loop = path.join(tmp, 'faiss_loop');
    await compile("the faiss loop (Debian's libfaiss-dev, as the faiss participant's addon needs; `sudo npm run setup` installs it)", 'g++', [
      '-O3',
      '-m64',
      '-pthread',
      '-fopenmp',
      '-std=gnu++17',
      '-I',
      ctx.native,
      path.join(ctx.native, 'faiss_loop.cc'),
      '-o',
      loop,
      '-l:libfaiss.a',
      '-lblas',
      '-llapack',
      '-ldl',
    ]);
    await ctx.loopSide('faiss-cpp', loop, [path.join(side.workDir, 'faiss.index'), tmp, String(nq), String(ds.d), String(k)]);
    return [['faiss', 'faiss-cpp']];
  },
};
export default faiss;
