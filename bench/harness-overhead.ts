// npm run bench:overhead [-- --dataset synthetic-20k --queries 2000 --rounds 5 --passes 3 --ef 10,32,128 --baseline DIR]
// What vecbench's harness costs per query, and how its in-process participants compare with
// plain loops in their engines' own languages:
// (a) the null engine's per-query overhead through the participant host (a 'null-pass'
//     request: the point path against an engine that answers at once), 1 in flight;
// (b) vecbench's hnswlib participant through the real host ('open', 'load', then 'point' at
//     clients 1) against bench/native/hnswlib_loop.cc (C++, the engine's own language, over
//     the headers hnswlib-node bundles: the same library version as the binding), the same
//     vectors, M, ef_construction, seed and space, one thread, k=10 unfiltered, per ef; against
//     bench/native/hnswlib_node_loop.ts, the same loop over hnswlib-node itself, which splits
//     the gap into vecbench's own part and the binding's; and beside them
//     bench/native/hnswlib_loop.py (Debian's python3-hnswlib, hnswlib 0.6.2); and the side
//     `direct`, the hnswlib-direct participant through the same host (the same headers through
//     vecbench's own zero-copy addon instead of hnswlib-node); (c) the usearch participant
//     against bench/native/usearch_loop.cc, C++ over the npm package's headers and NumKong
//     kernels built as its binding is, searching the index file the participant saved, and beside
//     it usearch-direct (vecbench's own addon over the same headers) reading that file; (d) the
//     faiss participant (IndexHNSWFlat) against bench/native/faiss_loop.cc, linked to the same
//     Debian libfaiss as its addon, searching the index file the participant wrote; (e) the
//     qdrant-edge participant (its Python host over the participant protocol) against
//     bench/native/qdrant_edge_loop.py, a plain loop over qdrant-edge-py in the same interpreter
//     on a copy of the shard the participant built; (f) the lucene participant (its Java host)
//     against bench/native/LuceneLoop.java, a plain Java loop over the same lucene-core jar on a
//     copy of the index the participant built.
// --baseline DIR adds the host of another vecbench checkout (e.g. a git worktree of an older
// commit, its node_modules linked) as one more side, so a change is measured beside its base.
// Rounds interleave the sides (the order rotates per round), so a neighbour's load hits all
// alike; figures are per-round values and ratios, median and [min-max]. Beside wall-time QPS,
// CPU-time QPS (queries / CPU seconds of the searching thread: the host's main thread for the
// whole request, read from /proc/<pid>/schedstat; Python's thread_time around its loop) holds
// when other processes take the cores: waiting for a core costs no CPU time.
// VECBENCH_PYTHON picks the interpreter (default: Debian's /usr/bin/python3).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { prepareDataset } from '../src/prepare/registry.ts';
import { groundTruthFor } from '../src/groundtruth/cache.ts';
import { HostClient } from '../src/runner/client.ts';
import { loadParticipant } from '../src/runner/participants.ts';
import type { PointReply } from '../src/runner/point-reply.ts';
import { harnessFlag, measureHarnessOverhead } from '../src/runner/harness-overhead.ts';

const TIMEOUT_S = 900;
/** The host sides over hnswlib, each set against the hnswlib C++ loop. */
const HNSWLIB_HOSTS = new Set(['baseline', 'vecbench', 'direct']);

/** Runs a compiler; a failure is one line naming what is missing, and exit 2. */
function compile(what: string, command: string, args: string[]): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
    });
    child.on('error', (e) => {
      err += String(e);
    });
    child.on('close', (code) => {
      if (code === 0) return resolve();
      console.error(`bench:overhead: ${what} did not compile (gcc and g++ from Debian's build-essential): ${err.trim().split('\n')[0]}`);
      process.exit(2);
    });
  });
}

/**
 * bench/native/usearch_loop.cc built as the npm package's binding is (its binding.gyp): the
 * headers of node_modules/usearch, NumKong's kernels compiled with dynamic dispatch after its own
 * ISA probe, -O3. Built in `dir` (a copy of NumKong there: the probe writes beside its sources);
 * about a minute of compiling on two cores.
 */
async function buildUsearchLoop(dir: string, here: string): Promise<string> {
  // The package's root, above its ESM entry (javascript/dist/esm/usearch.js).
  const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.resolve('usearch'))), '..', '..', '..');
  const nk = path.join(dir, 'numkong');
  for (const part of ['c', 'include', 'probes']) cpSync(path.join(pkg, 'numkong', part), path.join(nk, part), { recursive: true });
  const probed = spawnSync(process.execPath, [path.join(nk, 'probes', 'probe.js')], { encoding: 'utf8' });
  if (probed.status !== 0) {
    console.error(`bench:overhead: NumKong's ISA probe failed: ${(probed.stderr || String(probed.error)).split('\n')[0]}`);
    process.exit(2);
  }
  // The sources numkong.gypi builds into the binding's static library, with its flags.
  const gypi = readFileSync(path.join(pkg, 'numkong', 'numkong.gypi'), 'utf8');
  const sources = [...gypi.matchAll(/<\(numkong_root\)\/(c\/[a-z0-9_]+\.c)/g)].map((m) => path.join(nk, m[1]));
  const cflags = ['-std=c11', '-O3', '-fPIC', '-w', '-DNK_NATIVE_F16=0', '-DNK_NATIVE_BF16=0', '-DNK_DYNAMIC_DISPATCH=1'];
  const objects = sources.map((c) => path.join(nk, `${path.basename(c, '.c')}.o`));
  const jobs = [...sources.keys()];
  await Promise.all(
    Array.from({ length: availableParallelism() }, async () => {
      for (let i = jobs.shift(); i !== undefined; i = jobs.shift())
        await compile(`NumKong's ${path.basename(sources[i])}`, 'gcc', [
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
  await compile('the USearch loop', 'g++', [
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
    path.join(here, 'usearch_loop.cc'),
    ...objects,
    '-o',
    out,
  ]);
  return out;
}

const { values } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'synthetic-20k' },
    data: { type: 'string' },
    queries: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    passes: { type: 'string', default: '3' },
    ef: { type: 'string', default: '10,32,128' },
    k: { type: 'string', default: '10' },
    baseline: { type: 'string' },
  },
});
const posInt = (v: string, name: string): number => {
  const x = Number(v);
  if (!Number.isInteger(x) || x < 1) throw new Error(`--${name} must be a positive integer (got ${v})`);
  return x;
};
const rounds = posInt(values.rounds!, 'rounds');
const passes = posInt(values.passes!, 'passes');
const k = posInt(values.k!, 'k');
const efs = values.ef!.split(',').map((e) => posInt(e, 'ef'));

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const spread = (all: number[], digits: number): string => {
  const xs = all.filter(Number.isFinite);
  return xs.length === 0 ? 'n/a' : `${median(xs).toFixed(digits)} [${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}]`;
};
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const bytes = (a: Float32Array | Int32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
/** Seconds the process's main thread has run on a CPU (Linux), or NaN. */
const runS = (pid: number | undefined): number => {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e9;
  } catch {
    return Number.NaN;
  }
};

interface Pass {
  qps: number[];
  cpuQps: number[];
  meanMs: number[];
  recall: number;
}
interface Side {
  name: string;
  run(ef: number): Promise<Pass>;
  /** Null-engine overhead per query (ms), and the host thread's CPU ms per query over the
   * whole requests (IPC and packing too); null when the host has no 'null-pass'. */
  overhead?(): Promise<{ wallMs: number; cpuMs: number } | null>;
  close(): Promise<void>;
}

const tmp = mkdtempSync(path.join(tmpdir(), 'vecbench-overhead-'));
const dataDir = values.data ?? path.join(tmp, 'data');
const sides: Side[] = [];
try {
  console.log(`load average at start: ${load()}`);
  const ds = await prepareDataset(dataDir, values.dataset!, { groundTruth: false });
  const nq = values.queries === undefined ? ds.nq : Math.min(ds.nq, posInt(values.queries, 'queries'));
  const queries = Array.from({ length: nq }, (_, i) => i);
  const gt = groundTruthFor(ds, 'none', { quiet: true });
  const gtTop = new Int32Array(nq * k);
  for (let q = 0; q < nq; q++) gtTop.set(gt.ids.subarray(q * gt.depth, q * gt.depth + k), q * k);
  writeFileSync(path.join(tmp, 'base.f32'), bytes(ds.base));
  writeFileSync(path.join(tmp, 'queries.f32'), bytes(ds.queries.subarray(0, nq * ds.d)));
  writeFileSync(path.join(tmp, 'gt.i32'), bytes(gtTop));

  const p = await loadParticipant('hnswlib');
  const idx = p.index as { M: number; efConstruction: number; seed: number };
  const space = ds.metric === 'l2' ? 'l2' : 'ip';
  console.log(
    `${ds.name}: ${ds.n} x ${ds.d} (${ds.metric}), ${nq} queries, k=${k}; hnswlib M=${idx.M} ef_construction=${idx.efConstruction} seed=${idx.seed} space=${space}`,
  );

  const recallOf = (r: PointReply): number => {
    let hits = 0;
    for (let q = 0; q < nq; q++) {
      const want = new Set(gtTop.subarray(q * k, (q + 1) * k));
      for (let j = r.offsets[q]; j < r.offsets[q + 1]; j++) if (want.has(r.ids[j])) hits++;
    }
    return hits / (nq * k);
  };
  /** A participant host of this checkout, or of `root` (its own client.ts forks its host.ts). */
  /** `reopen`: the work directory of a side already built, whose files this participant reads
   * (the same index searched through another binding). */
  /** `foreign`: the engine runs in a host process of its own language, whose CPU time the Node
   * host's thread does not hold: its CPU figures are not measured (n/a). */
  const hostSide = async (
    name: string,
    root: string | null,
    participant = 'hnswlib',
    knob = 'ef',
    reopen?: string,
    foreign = false,
  ): Promise<Side & { workDir: string }> => {
    const Client: typeof HostClient = root === null ? HostClient : (await import(pathToFileURL(path.join(root, 'src/runner/client.ts')).href)).HostClient;
    const host = new Client(participant);
    const workDir = reopen ?? path.join(tmp, `work-${sides.length}`);
    mkdirSync(workDir, { recursive: true });
    await host.request<'opened'>(
      { type: 'open', participant, dataDir, dataset: ds.name, workDir, maxConcurrency: 1, ...(reopen ? { reopen: true } : {}) },
      TIMEOUT_S,
    );
    if (reopen) console.log(`build (${name}): none, it reads ${reopen}`);
    else {
      const loaded = await host.request<'loaded'>({ type: 'load', batchSize: p.settings.batch_size }, TIMEOUT_S);
      console.log(`build (${name}): ${loaded.ingestS.toFixed(1)}s`);
    }
    return {
      name,
      workDir,
      async run(ef) {
        const out: Pass = { qps: [], cpuQps: [], meanMs: [], recall: 0 };
        for (let i = 0; i < passes; i++) {
          const cpu0 = runS(host.pid);
          const r = (await host.request<'point'>({ type: 'point', knobs: { [knob]: ef }, k, queries, filters: queries.map(() => null), clients: 1 }, TIMEOUT_S))
            .reply;
          out.cpuQps.push(foreign ? Number.NaN : nq / (runS(host.pid) - cpu0));
          const failed = r.errors.find((e) => e !== null);
          if (failed) throw new Error(`${name} ef=${ef}: ${failed}`);
          out.qps.push(nq / r.wallS);
          out.meanMs.push(r.latenciesMs.reduce((a, b) => a + b, 0) / nq);
          out.recall = recallOf(r);
        }
        return out;
      },
      async overhead() {
        try {
          let sent = 0;
          const cpu0 = runS(host.pid);
          const o = await measureHarnessOverhead(
            (r) => {
              sent++;
              return host.request<'null-pass'>(r, TIMEOUT_S);
            },
            k,
            queries,
            1,
          );
          return { wallMs: o.perQueryMs, cpuMs: foreign ? Number.NaN : ((runS(host.pid) - cpu0) * 1000) / (sent * nq) };
        } catch (e) {
          // A host without the 'null-pass' request (an older tree) still gets part (b).
          console.log(`${name}: null pass unavailable: ${(e as Error).message}`);
          return null;
        }
      },
      close: () => host.close(),
    };
  };
  /** A plain loop in a process of its own (bench/native): the same files, one stdin line per
   * measurement, one JSON line back. */
  const loopSide = async (name: string, command: string, args: string[]): Promise<Side> => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const nextLine = async (): Promise<Record<string, unknown>> => {
      const r = await lines.next();
      if (r.done) throw new Error(`${command} ${args.join(' ')} ended early`);
      return JSON.parse(r.value) as Record<string, unknown>;
    };
    const ready = await nextLine();
    console.log(`build (${name}): ${(ready.build_s as number).toFixed(1)}s`);
    return {
      name,
      async run(ef) {
        child.stdin!.write(`${ef} ${passes}\n`);
        const r = await nextLine();
        return { qps: r.qps as number[], cpuQps: r.cpu_qps as number[], meanMs: r.mean_ms as number[], recall: r.recall as number };
      },
      async close() {
        child.stdin!.end();
        child.kill();
      },
    };
  };

  // Every index is built before any timing.
  if (values.baseline) sides.push(await hostSide('baseline', path.resolve(values.baseline)));
  sides.push(await hostSide('vecbench', null));
  // The same participant with hnswlib-node replaced by vecbench's own addon over the same headers.
  sides.push(await hostSide('direct', null, 'hnswlib-direct'));
  const here = path.join(path.dirname(fileURLToPath(import.meta.url)), 'native');
  // The hnswlib loops' arguments: the files, the sizes and the build settings.
  const hnswArgs = [tmp, String(ds.n), String(ds.d), String(nq), String(k), String(idx.M), String(idx.efConstruction), String(idx.seed), space];
  sides.push(await loopSide('node-loop', process.execPath, ['--import', import.meta.resolve('tsx'), path.join(here, 'hnswlib_node_loop.ts'), ...hnswArgs]));
  const python = process.env.VECBENCH_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
  // The plain Python loop needs Debian's hnswlib binding: one line, not a traceback, without it.
  const probe = spawnSync(python, ['-c', 'import hnswlib'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    console.error(
      `bench:overhead: ${python} cannot import hnswlib (Debian's python3-hnswlib); run \`sudo npm run setup\` (it installs it) or set VECBENCH_PYTHON to an interpreter that has it`,
    );
    process.exit(2);
  }
  sides.push(await loopSide('python', python, [path.join(here, 'hnswlib_loop.py'), ...hnswArgs]));
  // The engine's own language: a C++ loop compiled against the headers hnswlib-node bundles
  // (the binding's own version of the library) with the flags node-gyp gave the binding.
  const headers = path.join(path.dirname(fileURLToPath(import.meta.resolve('hnswlib-node'))), '..', 'src', 'hnswlib');
  const cpp = path.join(tmp, 'hnswlib_loop');
  const cc = spawnSync(
    'g++',
    ['-O3', '-m64', '-pthread', '-fno-omit-frame-pointer', '-std=gnu++17', '-I', headers, path.join(here, 'hnswlib_loop.cc'), '-o', cpp],
    { encoding: 'utf8' },
  );
  if (cc.status !== 0) {
    console.error(
      `bench:overhead: the C++ loop did not compile (g++ from Debian's build-essential, and ${headers}): ${(cc.stderr || String(cc.error)).split('\n')[0]}`,
    );
    process.exit(2);
  }
  sides.push(await loopSide('cpp', cpp, hnswArgs));
  // USearch the same way: its participant through the host, and a C++ loop over the headers and
  // NumKong kernels of the same npm package, searching the very file the participant saved.
  const usearch = await hostSide('usearch', null, 'usearch', 'expansion_search');
  sides.push(usearch);
  const usearchCpp = await buildUsearchLoop(tmp, here);
  sides.push(await loopSide('usearch-cpp', usearchCpp, [path.join(usearch.workDir, 'usearch.index'), tmp, String(nq), String(ds.d), String(k)]));
  // vecbench's own addon over the same headers and kernels, reading that same file.
  sides.push(await hostSide('usearch-direct', null, 'usearch-direct', 'expansion_search', usearch.workDir));
  // faiss the same way: its participant (IndexHNSWFlat, efSearch) through the host, and a C++
  // loop linked to the same Debian libfaiss as its addon, searching the file the participant wrote.
  const faiss = await hostSide('faiss', null, 'faiss', 'efSearch');
  sides.push(faiss);
  const faissCpp = path.join(tmp, 'faiss_loop');
  const fc = spawnSync(
    'g++',
    [
      '-O3',
      '-m64',
      '-pthread',
      '-fopenmp',
      '-std=gnu++17',
      '-I',
      here,
      path.join(here, 'faiss_loop.cc'),
      '-o',
      faissCpp,
      '-l:libfaiss.a',
      '-lblas',
      '-llapack',
      '-ldl',
    ],
    { encoding: 'utf8' },
  );
  if (fc.status !== 0) {
    console.error(
      `bench:overhead: the faiss loop did not compile (Debian's libfaiss-dev, as the faiss participant's addon needs; \`sudo npm run setup\` installs it): ${(fc.stderr || String(fc.error)).split('\n')[0]}`,
    );
    process.exit(2);
  }
  sides.push(await loopSide('faiss-cpp', faissCpp, [path.join(faiss.workDir, 'faiss.index'), tmp, String(nq), String(ds.d), String(k)]));
  // Qdrant Edge, an engine in another language (issue on engines in any language): its
  // participant through the host and its Python host, against a plain loop over qdrant-edge-py
  // in the same provisioned interpreter, on a copy of the shard the participant built.
  const qdrantPython = path.join(process.env.VECBENCH_CACHE ?? '/var/cache/vecbench', 'venv', 'qdrant-edge', 'bin', 'python');
  if (!existsSync(qdrantPython)) {
    console.error(
      `bench:overhead: Qdrant Edge's Python environment is missing (${qdrantPython}); participants/qdrant-edge/provision.sh (run by \`sudo npm run setup\`) makes it`,
    );
    process.exit(2);
  }
  const qdrant = await hostSide('qdrant-edge', null, 'qdrant-edge', 'hnsw_ef', undefined, true);
  sides.push(qdrant);
  const shardCopy = path.join(tmp, 'qdrant-shard');
  cpSync(path.join(qdrant.workDir, 'shard'), shardCopy, { recursive: true });
  sides.push(await loopSide('qdrant-edge-py', qdrantPython, [path.join(here, 'qdrant_edge_loop.py'), shardCopy, tmp, String(nq), String(ds.d), String(k)]));
  // Lucene the same way, in Java: its participant through its Java host, against a plain Java
  // loop compiled against the jar the participant's provision installed, on a copy of its index.
  const luceneDir = path.join(process.env.VECBENCH_CACHE ?? '/var/cache/vecbench', 'java', 'lucene');
  // The one lucene-core jar the provision pinned (its version is the participant's).
  const jarName = existsSync(luceneDir) ? readdirSync(luceneDir).find((f) => /^lucene-core-[\d.]+\.jar$/.test(f)) : undefined;
  const luceneJar = path.join(luceneDir, jarName ?? 'lucene-core.jar');
  if (jarName === undefined) {
    console.error(`bench:overhead: Lucene's jar is missing (${luceneJar}); participants/lucene/provision.sh (run by \`sudo npm run setup\`) installs it`);
    process.exit(2);
  }
  const lucene = await hostSide('lucene', null, 'lucene', 'candidates', undefined, true);
  sides.push(lucene);
  const luceneCopy = path.join(tmp, 'lucene-index');
  cpSync(path.join(lucene.workDir, 'lucene'), luceneCopy, { recursive: true, filter: (f) => path.basename(f) !== 'write.lock' });
  const luceneClasses = path.join(tmp, 'lucene-loop');
  await compile('the Lucene loop', 'javac', ['-cp', luceneJar, '-d', luceneClasses, path.join(here, 'LuceneLoop.java')]);
  sides.push(
    await loopSide('lucene-java', 'java', [
      '-XX:+UseParallelGC',
      '-cp',
      `${luceneJar}:${luceneClasses}`,
      'LuceneLoop',
      luceneCopy,
      tmp,
      String(nq),
      String(ds.d),
      String(k),
    ]),
  );
  const hosts = sides.filter((s) => s.overhead);

  // Warm-up: the JIT, the hosts' query-vector caches, every side's caches.
  for (const ef of efs) for (const s of sides) await s.run(ef);

  const nulls = new Map(hosts.map((s) => [s.name, [] as number[]]));
  const nullCpus = new Map(hosts.map((s) => [s.name, [] as number[]]));
  const per = new Map(
    efs.map((ef) => [ef, new Map(sides.map((s) => [s.name, { qps: [] as number[], cpuQps: [] as number[], meanMs: [] as number[], recall: 0 }]))]),
  );
  for (let r = 0; r < rounds; r++) {
    const before = load();
    for (const s of hosts) {
      const o = await s.overhead!();
      if (o !== null) {
        nulls.get(s.name)!.push(o.wallMs);
        nullCpus.get(s.name)!.push(o.cpuMs);
      }
    }
    for (const ef of efs) {
      // Rotate which side goes first, so a drift in load favours none.
      for (let i = 0; i < sides.length; i++) {
        const s = sides[(i + r) % sides.length];
        const x = await s.run(ef);
        const e = per.get(ef)!.get(s.name)!;
        e.qps.push(median(x.qps));
        e.cpuQps.push(median(x.cpuQps));
        e.meanMs.push(median(x.meanMs));
        e.recall = x.recall;
      }
    }
    console.log(`round ${r + 1}/${rounds}: load average ${before} -> ${load()}`);
  }

  const ratio = (ef: number, a: string, b: string, of: 'qps' | 'cpuQps' = 'qps'): number[] => {
    const x = per.get(ef)!;
    return x.get(a)![of].map((q, i) => q / x.get(b)![of][i]);
  };
  console.log('');
  console.log(
    `(a) null engine through the host, 1 in flight, us per query (per round: median of 5 passes of ${nq} queries; median [min-max] over ${rounds} rounds):`,
  );
  for (const s of hosts) {
    const xs = nulls.get(s.name)!;
    const cs = nullCpus.get(s.name)!;
    console.log(
      `    ${s.name}: ${
        xs.length
          ? `${spread(
              xs.map((x) => x * 1000),
              3,
            )}, a ceiling of ${Math.round(1000 / median(xs)).toLocaleString('en-US')} QPS; host thread CPU per query over the whole request (IPC, digests, packing too): ${spread(
              cs.map((x) => x * 1000),
              3,
            )}`
          : 'n/a'
      }`,
    );
  }
  console.log(`(b) hnswlib, k=${k}, unfiltered, 1 thread; per round: median of ${passes} passes of ${nq} queries; median [min-max] over ${rounds} rounds`);
  const names = sides.map((s) => s.name);
  // Against the C++ loop (the same library version as the binding): vecbench/node-loop is
  // vecbench's own cost, node-loop/cpp the binding's; python/cpp sets Debian's Python binding
  // (its own hnswlib 0.6.2) beside them; direct/vecbench is what the binding's path costs
  // inside vecbench (the same library, graph and host).
  const pairs: [string, string][] = [
    ...hosts.filter((s) => HNSWLIB_HOSTS.has(s.name)).map((s): [string, string] => [s.name, 'cpp']),
    ['vecbench', 'node-loop'],
    ['node-loop', 'cpp'],
    ['python', 'cpp'],
    ['direct', 'vecbench'],
    ['usearch', 'usearch-cpp'],
    ['usearch-direct', 'usearch-cpp'],
    ['faiss', 'faiss-cpp'],
    ['qdrant-edge', 'qdrant-edge-py'],
    ['lucene', 'lucene-java'],
  ];
  if (values.baseline) pairs.push(['vecbench', 'baseline']);
  console.log(
    `| ef | ${names.map((n) => `${n} QPS`).join(' | ')} | ${pairs.map(([a, b]) => `${a}/${b}`).join(' | ')} | ${names.map((n) => `${n} mean us`).join(' | ')} | ${names.map((n) => `recall ${n}`).join(' | ')} | null overhead / vecbench latency |`,
  );
  console.log(`|---:|${'---:|'.repeat(names.length * 3 + pairs.length + 1)}`);
  for (const ef of efs) {
    const x = per.get(ef)!;
    const vb = x.get('vecbench')!;
    const own = nulls.get('vecbench')!;
    const share = own.length
      ? `${((median(own) / median(vb.meanMs)) * 100).toFixed(2)} %${harnessFlag(median(own), median(vb.meanMs)).length ? ' (flagged)' : ''}`
      : 'n/a';
    console.log(
      `| ${ef} | ${names.map((n) => spread(x.get(n)!.qps, 0)).join(' | ')} | ${pairs.map(([a, b]) => spread(ratio(ef, a, b), 3)).join(' | ')} | ${names
        .map((n) =>
          spread(
            x.get(n)!.meanMs.map((m) => m * 1000),
            1,
          ),
        )
        .join(' | ')} | ${names.map((n) => x.get(n)!.recall.toFixed(4)).join(' | ')} | ${share} |`,
    );
  }
  // A host's CPU covers the whole request; the part outside the timed loop (IPC, digests,
  // packing: the null request's CPU less its loop) is taken off, round by round.
  let netted = true;
  for (const s of hosts) {
    const w = nulls.get(s.name)!;
    const c = nullCpus.get(s.name)!;
    if (w.length !== rounds) {
      netted = false;
      continue;
    }
    for (const ef of efs) {
      const q = per.get(ef)!.get(s.name)!.cpuQps;
      for (let r = 0; r < rounds; r++) q[r] = 1 / (1 / q[r] - Math.max(0, c[r] - w[r]) / 1000);
    }
  }
  console.log(
    `(b') the same by CPU time of the searching thread (hosts: ${netted ? 'the request less its part outside the timed loop, from the null request' : 'the whole request, IPC and packing included'})`,
  );
  console.log(`| ef | ${names.map((n) => `${n} CPU QPS`).join(' | ')} | ${pairs.map(([a, b]) => `${a}/${b}`).join(' | ')} |`);
  console.log(`|---:|${'---:|'.repeat(names.length + pairs.length)}`);
  for (const ef of efs) {
    const x = per.get(ef)!;
    console.log(
      `| ${ef} | ${names.map((n) => spread(x.get(n)!.cpuQps, 0)).join(' | ')} | ${pairs.map(([a, b]) => spread(ratio(ef, a, b, 'cpuQps'), 3)).join(' | ')} |`,
    );
  }
  console.log(`load average at end: ${load()}`);
} finally {
  for (const s of sides) await s.close();
  rmSync(tmp, { recursive: true, force: true });
}
