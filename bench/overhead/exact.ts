// exact: vecbench's own brute force (the ground truth's code: native/topk.c over Debian's
// OpenBLAS) through the host, against bench/native/exact_loop.cc: cblas_sgemv and a partial sort
// linked to the same OpenBLAS, with as many workers per query as the participant starts
// (exactTopK's default, availableParallelism(); OpenBLAS itself on one thread in both). No knob.
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { pickBackend } from '../../src/groundtruth/exact.ts';
import { compile, type OverheadEngine } from './kit.ts';

/** Where Debian's OpenBLAS puts cblas.h (the addon's include dir, native/binding.gyp). */
const OPENBLAS_INCLUDE = '/usr/include/x86_64-linux-gnu/openblas-pthread';

const exact: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    // Without the addon the participant scans in JavaScript, and the pair would not be one engine.
    if (pickBackend('auto') !== 'native')
      ctx.fail(
        'the exact participant would run its JavaScript scan (native/build/Release/topk.node missing, or VECBENCH_GT_BACKEND=js); run `node scripts/build-native.mjs`',
      );
    const threads = availableParallelism();
    console.log(`exact: ${ds.metric}, ${threads} workers per query, OpenBLAS at 1 thread each`);
    await ctx.hostSide('exact', 'exact', { knob: null });
    const loop = path.join(tmp, 'exact_loop');
    await compile("the exact loop (Debian's libopenblas-dev, as the exact participant's addon needs; `sudo npm run setup` installs it)", 'g++', [
      '-O3',
      '-std=gnu++17',
      '-pthread',
      '-I',
      ctx.native,
      '-I',
      OPENBLAS_INCLUDE,
      path.join(ctx.native, 'exact_loop.cc'),
      '-o',
      loop,
      '-lopenblas',
    ]);
    await ctx.loopSide('exact-cpp', loop, [tmp, String(ds.n), String(ds.d), String(nq), String(k), ds.metric, String(threads)]);
    return [['exact', 'exact-cpp']];
  },
};
export default exact;
