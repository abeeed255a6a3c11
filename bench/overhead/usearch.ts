// USearch: its participant (the npm binding) through the host, and usearch-direct (vecbench's own
// addon over the same headers and kernels) reading the very file the participant saved, against
// bench/native/usearch_loop.cc: C++ over the npm package's headers and NumKong kernels, built as
// its binding is, searching that same file.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile, type OverheadEngine } from './kit.ts';

/**
 * bench/native/usearch_loop.cc built as the npm package's binding is (its binding.gyp): the
 * headers of node_modules/usearch, NumKong's kernels compiled with dynamic dispatch after its own
 * ISA probe, -O3. Built in `dir` (a copy of NumKong there: the probe writes beside its sources);
 * about a minute of compiling on two cores.
 */
async function buildUsearchLoop(dir: string, native: string, fail: (m: string) => never): Promise<string> {
  // The package's root, above its ESM entry (javascript/dist/esm/usearch.js).
  const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.resolve('usearch'))), '..', '..', '..');
  const nk = path.join(dir, 'numkong');
  for (const part of ['c', 'include', 'probes']) cpSync(path.join(pkg, 'numkong', part), path.join(nk, part), { recursive: true });
  const probed = spawnSync(process.execPath, [path.join(nk, 'probes', 'probe.js')], { encoding: 'utf8' });
  if (probed.status !== 0) fail(`NumKong's ISA probe failed: ${(probed.stderr || String(probed.error)).split('\n')[0]}`);
  // The sources numkong.gypi builds into the binding's static library, with its flags.
  const gypi = readFileSync(path.join(pkg, 'numkong', 'numkong.gypi'), 'utf8');
  const sources = [...gypi.matchAll(/<\(numkong_root\)\/(c\/[a-z0-9_]+\.c)/g)].map((m) => path.join(nk, m[1]));
  const cflags = ['-std=c11', '-O3', '-fPIC', '-w', '-DNK_NATIVE_F16=0', '-DNK_NATIVE_BF16=0', '-DNK_DYNAMIC_DISPATCH=1'];
  const objects = sources.map((c) => path.join(nk, `${path.basename(c, '.c')}.o`));
  const jobs = [...sources.keys()];
  await Promise.all(
    Array.from({ length: availableParallelism() }, async () => {
      for (let i = jobs.shift(); i !== undefined; i = jobs.shift())
        await compile(`NumKong's ${path.basename(sources[i])} (gcc from Debian's build-essential)`, 'gcc', [
          ...cflags,
          '-include',
          path.join(nk, 'nk_probes.h'),
          '-I',
          path.join(nk, 'include'),
          '-c',
          sources[i],
          '-o',
          objects[i],
        ]);
    }),
  );
  const out = path.join(dir, 'usearch_loop');
  await compile("the USearch loop (g++ from Debian's build-essential)", 'g++', [
    '-O3',
    '-std=c++17',
    '-pthread',
    '-fexceptions',
    '-w',
    '-DUSEARCH_USE_NUMKONG=1',
    '-DNK_DYNAMIC_DISPATCH=1',
    '-DUSEARCH_USE_OPENMP=0',
    '-DNK_NATIVE_F16=0',
    '-DNK_NATIVE_BF16=0',
    '-I',
    path.join(pkg, 'include'),
    '-I',
    path.join(nk, 'include'),
    path.join(native, 'usearch_loop.cc'),
    ...objects,
    '-o',
    out,
  ]);
  return out;
}

const usearch: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    const side = await ctx.hostSide('usearch', 'usearch', { knob: 'expansion_search' });
    const loop = await buildUsearchLoop(tmp, ctx.native, ctx.fail);
    await ctx.loopSide('usearch-cpp', loop, [path.join(side.workDir, 'usearch.index'), tmp, String(nq), String(ds.d), String(k)]);
    await ctx.hostSide('usearch-direct', 'usearch-direct', { knob: 'expansion_search', reopen: side.workDir });
    return [
      ['usearch', 'usearch-cpp'],
      ['usearch-direct', 'usearch-cpp'],
    ];
  },
};
export default usearch;
