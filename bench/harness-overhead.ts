// npm run bench:overhead [-- --dataset synthetic-20k --queries 2000 --rounds 5 --passes 3 --ef 10,32,128
//                          --engines hnswlib,usearch --baseline DIR --data DIR]
// What vecbench's harness costs per query, and how its in-process participants compare with
// plain loops in their engines' own languages (docs/measurement.md, "Harness overhead"):
// (a) the null engine's per-query overhead through each participant host (a 'null-pass'
//     request: the point path against an engine that answers at once), 1 in flight;
// (b) each engine of bench/overhead/engines.ts: its participant through the real host ('open',
//     'load', then 'point' at clients 1) against a plain loop over the engine's native
//     interface (bench/native), the same library version, the same index or a copy of the
//     participant's own files, the same queries and knob, one thread, k unfiltered. Each
//     engine's module (bench/overhead/<engine>.ts) says what its sides are.
// --baseline DIR adds the host of another vecbench checkout (e.g. a git worktree of an older
// commit, its node_modules linked) as one more hnswlib side, so a change is measured beside its base.
// Each ratio is of passes taken in turn: the two sides of a pair alternate, a pass each, so
// the shared machine's drift over tens of seconds falls on both; the pairs' order rotates per
// round. A side's QPS is its round's median pass; a ratio, its round's median of the adjacent
// passes' ratios; figures are median and [min-max] over the rounds. Beside wall-time QPS,
// CPU-time QPS (queries / CPU seconds of the searching thread: the host's main thread for the
// whole request, read from /proc/<pid>/schedstat, or the whole host process for an engine that
// searches on its own threads; the loops' own clocks) holds when other processes take the
// cores: waiting for a core costs no CPU time.
// VECBENCH_PYTHON picks the interpreter of the hnswlib Python loop (default: Debian's /usr/bin/python3).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { prepareDataset } from '../src/prepare/registry.ts';
import { groundTruthFor } from '../src/groundtruth/cache.ts';
import { HostClient } from '../src/runner/client.ts';
import { processCpuSeconds } from '../src/runner/cpu.ts';
import { loadParticipant } from '../src/runner/participants.ts';
import type { PointReply } from '../src/runner/point-reply.ts';
import { harnessFlag, measureHarnessOverhead } from '../src/runner/harness-overhead.ts';
import { OVERHEAD_ENGINES } from './overhead/engines.ts';
import type { BenchContext, Pass, Side } from './overhead/kit.ts';

const TIMEOUT_S = 900;

const { values } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'synthetic-20k' },
    data: { type: 'string' },
    queries: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    passes: { type: 'string', default: '3' },
    ef: { type: 'string', default: '10,32,128' },
    k: { type: 'string', default: '10' },
    engines: { type: 'string', default: Object.keys(OVERHEAD_ENGINES).join(',') },
    baseline: { type: 'string' },
  },
});
const fail = (message: string): never => {
  console.error(`bench:overhead: ${message}`);
  process.exit(2);
};
const posInt = (v: string, name: string): number => {
  const x = Number(v);
  if (!Number.isInteger(x) || x < 1) fail(`--${name} must be a positive integer (got ${v})`);
  return x;
};
const rounds = posInt(values.rounds!, 'rounds');
const passes = posInt(values.passes!, 'passes');
const k = posInt(values.k!, 'k');
const efs = values.ef!.split(',').map((e) => posInt(e, 'ef'));
const engines = values.engines!.split(',').map((name) => {
  const engine = OVERHEAD_ENGINES[name];
  if (!engine) fail(`unknown engine "${name}" in --engines; known: ${Object.keys(OVERHEAD_ENGINES).join(', ')}`);
  return { name, engine };
});

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
const threadS = (pid: number | undefined): number => {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e9;
  } catch {
    return Number.NaN;
  }
};
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
  console.log(`${ds.name}: ${ds.n} x ${ds.d} (${ds.metric}), ${nq} queries, k=${k}`);

  const recallOf = (r: PointReply): number => {
    let hits = 0;
    for (let q = 0; q < nq; q++) {
      const want = new Set(gtTop.subarray(q * k, (q + 1) * k));
      for (let j = r.offsets[q]; j < r.offsets[q + 1]; j++) if (want.has(r.ids[j])) hits++;
    }
    return hits / (nq * k);
  };
  const ctx: BenchContext = {
    ds,
    nq,
    k,
    tmp,
    native: path.join(path.dirname(fileURLToPath(import.meta.url)), 'native'),
    cache: process.env.VECBENCH_CACHE ?? '/var/cache/vecbench',
    baseline: values.baseline === undefined ? undefined : path.resolve(values.baseline),
    fail,
    venvPython(name, provision) {
      const python = path.join(this.cache, 'venv', name, 'bin', 'python');
      if (!existsSync(python)) fail(`the Python environment ${python} is missing; ${provision} (run by \`sudo npm run setup\`) makes it`);
      return python;
    },
    async hostSide(name, participant, o) {
      // A host of this checkout, or of another (its own client.ts forks its host.ts).
      const Client: typeof HostClient =
        o.root === undefined ? HostClient : (await import(pathToFileURL(path.join(o.root, 'src/runner/client.ts')).href)).HostClient;
      const host = new Client(participant);
      const cpuS =
        o.cpu === 'none'
          ? () => Number.NaN
          : o.cpu === 'process'
            ? () => (host.pid === undefined ? null : processCpuSeconds(host.pid)) ?? Number.NaN
            : () => threadS(host.pid);
      const workDir = o.reopen ?? path.join(tmp, `work-${sides.length}`);
      mkdirSync(workDir, { recursive: true });
      const opened = await host.request<'opened'>(
        { type: 'open', participant, dataDir, dataset: ds.name, workDir, maxConcurrency: 1, ...(o.reopen ? { reopen: true } : {}) },
        TIMEOUT_S,
      );
      if (o.reopen) console.log(`build (${name}): none, it reads ${o.reopen}; ${opened.engineVersion}`);
      else {
        const batchSize = (await loadParticipant(participant)).settings.batch_size;
        const loaded = await host.request<'loaded'>({ type: 'load', batchSize }, TIMEOUT_S);
        console.log(`build (${name}): ${loaded.ingestS.toFixed(1)}s; ${opened.engineVersion}`);
      }
      const side = {
        name,
        workDir,
        async run(ef: number, n: number): Promise<Pass> {
          const out: Pass = { qps: [], cpuQps: [], meanMs: [], recall: 0 };
          for (let i = 0; i < n; i++) {
            const cpu0 = cpuS();
            const request = {
              type: 'point' as const,
              knobs: o.knob === null ? {} : { [o.knob]: ef },
              k,
              queries,
              filters: queries.map(() => null),
              clients: 1,
            };
            const r = (await host.request<'point'>(request, TIMEOUT_S)).reply;
            out.cpuQps.push(nq / (cpuS() - cpu0));
            const failed = r.errors.find((e) => e !== null);
            if (failed) throw new Error(`${name} ${o.knob}=${ef}: ${failed}`);
            out.qps.push(nq / r.wallS);
            out.meanMs.push(r.latenciesMs.reduce((a, b) => a + b, 0) / nq);
            out.recall = recallOf(r);
          }
          return out;
        },
        async overhead() {
          try {
            let sent = 0;
            const cpu0 = cpuS();
            const measured = await measureHarnessOverhead(
              (r) => {
                sent++;
                return host.request<'null-pass'>(r, TIMEOUT_S);
              },
              k,
              queries,
              1,
            );
            return { wallMs: measured.perQueryMs, cpuMs: ((cpuS() - cpu0) * 1000) / (sent * nq) };
          } catch (e) {
            // A host without the 'null-pass' request (an older tree) still gets part (b).
            console.log(`${name}: null pass unavailable: ${(e as Error).message}`);
            return null;
          }
        },
        close: () => host.close(),
      };
      sides.push(side);
      return side;
    },
    async loopSide(name, command, args, adapter) {
      const extra = adapter ? ['--adapter', adapter.participant, adapter.workDir, adapter.knob ?? '-', ds.name, ds.metric] : [];
      const child = spawn(command, [...args, ...extra], { stdio: ['pipe', 'pipe', 'inherit'] });
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      const nextLine = async (): Promise<Record<string, unknown>> => {
        const r = await lines.next();
        if (r.done) throw new Error(`${command} ${args.join(' ')} ended early`);
        return JSON.parse(r.value) as Record<string, unknown>;
      };
      // One side per mode of the process; the bench awaits each run, so their lines never cross.
      const modeSide = (sideName: string, mode: string, close: () => Promise<void>): Side => ({
        name: sideName,
        async run(ef, n) {
          child.stdin!.write(`${ef} ${n} ${mode}\n`);
          const r = await nextLine();
          // JSON has no NaN: CPU figures the loop cannot give arrive as nulls (or one null).
          const cpuQps = ((r.cpu_qps ?? (r.qps as number[]).map(() => null)) as (number | null)[]).map((x) => x ?? Number.NaN);
          const pass: Pass = { qps: r.qps as number[], cpuQps, meanMs: r.mean_ms as number[], recall: r.recall as number };
          if (Array.isArray(r.interleaved_ratio)) pass.interleavedRatio = r.interleaved_ratio as number[];
          return pass;
        },
        close,
      });
      const side = modeSide(name, 'raw', async () => {
        child.stdin!.end();
        child.kill();
      });
      sides.push(side);
      if (adapter) sides.push(modeSide(adapter.side, 'adapter', async () => {}));
      const ready = await nextLine();
      console.log(`build (${name}): ${(ready.build_s as number).toFixed(1)}s; ${String(ready.version ?? 'version not reported')}`);
      if (adapter) console.log(`build (${adapter.side}): none, ${adapter.participant}'s adapter in ${name}'s process reads ${adapter.workDir}`);
      return side;
    },
  };

  // Every index is built before any timing.
  const groups: { name: string; sides: string[]; pairs: [string, string][] }[] = [];
  for (const { name, engine } of engines) {
    const before = sides.length;
    const pairs = await engine.setup(ctx);
    groups.push({ name, sides: sides.slice(before).map((s) => s.name), pairs });
  }
  const pairs = groups.flatMap((g) => g.pairs);
  const hosts = sides.filter((s) => s.overhead);
  const sideNamed = new Map(sides.map((s) => [s.name, s]));

  // Warm-up: the JIT, the hosts' query-vector caches, every side's caches.
  for (const ef of efs) for (const s of sides) await s.run(ef, passes);

  const nulls = new Map(hosts.map((s) => [s.name, [] as number[]]));
  const nullCpus = new Map(hosts.map((s) => [s.name, [] as number[]]));
  const emptyPass = (): Pass => ({ qps: [], cpuQps: [], meanMs: [], recall: 0 });
  /** Per ef and side, each round's median of the passes it took in that round. */
  const per = new Map(efs.map((ef) => [ef, new Map(sides.map((s) => [s.name, emptyPass()]))]));
  /** Per ef and pair, each pass pair: a's and b's, taken one after the other, and its round. */
  const taken = new Map(efs.map((ef) => [ef, new Map(pairs.map(([a, b]) => [`${a}/${b}`, [] as { round: number; a: Pass; b: Pass }[]]))]));
  /** Per ef and side timed in turn with its loop (Pass.interleavedRatio): each round's median. */
  const interleaved = new Map(efs.map((ef) => [ef, new Map<string, number[]>()]));
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
      const round = new Map(sides.map((s) => [s.name, emptyPass()]));
      // The two sides of a pair take their passes in turn, a pass each (which goes first
      // alternates), so each ratio is of passes a second or two apart: the drift of the shared
      // machine over tens of seconds falls on both alike. Which pair goes first rotates per round.
      for (let i = 0; i < pairs.length; i++) {
        const [a, b] = pairs[(i + r) % pairs.length];
        for (let j = 0; j < passes; j++) {
          const got = new Map<string, Pass>();
          for (const name of (j + r) % 2 === 0 ? [a, b] : [b, a]) {
            const x = await sideNamed.get(name)!.run(ef, 1);
            got.set(name, x);
            const e = round.get(name)!;
            e.qps.push(...x.qps);
            e.cpuQps.push(...x.cpuQps);
            e.meanMs.push(...x.meanMs);
            e.recall = x.recall;
            if (x.interleavedRatio) e.interleavedRatio = [...(e.interleavedRatio ?? []), ...x.interleavedRatio];
          }
          taken
            .get(ef)!
            .get(`${a}/${b}`)!
            .push({ round: r, a: got.get(a)!, b: got.get(b)! });
        }
      }
      for (const s of sides) {
        const xs = round.get(s.name)!.interleavedRatio;
        if (xs?.length) interleaved.get(ef)!.set(s.name, [...(interleaved.get(ef)!.get(s.name) ?? []), median(xs)]);
      }
      for (const [name, x] of round) {
        const e = per.get(ef)!.get(name)!;
        e.qps.push(median(x.qps));
        e.cpuQps.push(median(x.cpuQps));
        e.meanMs.push(median(x.meanMs));
        e.recall = x.recall;
      }
    }
    console.log(`round ${r + 1}/${rounds}: load average ${before} -> ${load()}`);
  }

  /** A host's CPU covers the whole request; the part outside the timed loop (IPC, digests,
   * packing: the null request's CPU less its loop) is taken off, with its round's null figures. */
  const netted = hosts.every((s) => nulls.get(s.name)!.length === rounds);
  const netCpuQps = (name: string, round: number, q: number): number => {
    if (!netted || !nulls.has(name)) return q;
    const outside = Math.max(0, nullCpus.get(name)![round] - nulls.get(name)![round]) / 1000;
    return 1 / (1 / q - outside);
  };
  /** Per round, the median of the ratios of a pair's adjacent passes. */
  const ratio = (ef: number, a: string, b: string, of: 'qps' | 'cpuQps'): number[] => {
    const byRound = new Map<number, number[]>();
    for (const t of taken.get(ef)!.get(`${a}/${b}`)!) {
      const x = of === 'qps' ? t.a.qps[0] / t.b.qps[0] : netCpuQps(a, t.round, t.a.cpuQps[0]) / netCpuQps(b, t.round, t.b.cpuQps[0]);
      byRound.set(t.round, [...(byRound.get(t.round) ?? []), x]);
    }
    return [...byRound.values()].map(median);
  };
  for (const s of hosts)
    for (const ef of efs) {
      const q = per.get(ef)!.get(s.name)!.cpuQps;
      for (let r = 0; r < rounds; r++) q[r] = netCpuQps(s.name, r, q[r]);
    }

  console.log('');
  console.log(
    `(a) null engine through the host, 1 in flight, us per query (per round: median of 5 passes of ${nq} queries; median [min-max] over ${rounds} rounds):`,
  );
  for (const s of hosts) {
    const xs = nulls.get(s.name)!;
    const cs = nullCpus.get(s.name)!;
    const us = (v: number[]): string =>
      spread(
        v.map((x) => x * 1000),
        3,
      );
    console.log(
      `    ${s.name}: ${
        xs.length
          ? `${us(xs)}, a ceiling of ${Math.round(1000 / median(xs)).toLocaleString('en-US')} QPS; host thread CPU per query over the whole request (IPC, digests, packing too): ${us(cs)}`
          : 'n/a'
      }`,
    );
  }
  for (const g of groups) {
    const names = g.sides;
    console.log('');
    console.log(
      `(b) ${g.name}, k=${k}, unfiltered, 1 thread; per round: QPS the median of a side's passes of ${nq} queries, a ratio the median of ${passes} ratios of adjacent passes; median [min-max] over ${rounds} rounds`,
    );
    // The null pass's share of the participant's own latency (its first pair's first side).
    const own = g.pairs[0][0];
    console.log(
      `| knob | ${names.map((n) => `${n} QPS`).join(' | ')} | ${g.pairs.map(([a, b]) => `${a}/${b}`).join(' | ')} | ${names.map((n) => `${n} mean us`).join(' | ')} | ${names.map((n) => `recall ${n}`).join(' | ')} | null overhead / ${own} latency |`,
    );
    console.log(`|---:|${'---:|'.repeat(names.length * 3 + g.pairs.length + 1)}`);
    for (const ef of efs) {
      const x = per.get(ef)!;
      const nullMs = nulls.get(own) ?? [];
      const latency = median(x.get(own)!.meanMs);
      const share = nullMs.length
        ? `${((median(nullMs) / latency) * 100).toFixed(2)} %${harnessFlag(median(nullMs), latency).length ? ' (flagged)' : ''}`
        : 'n/a';
      const us = (n: string): string =>
        spread(
          x.get(n)!.meanMs.map((m) => m * 1000),
          1,
        );
      console.log(
        `| ${ef} | ${names.map((n) => spread(x.get(n)!.qps, 0)).join(' | ')} | ${g.pairs.map(([a, b]) => spread(ratio(ef, a, b, 'qps'), 3)).join(' | ')} | ${names.map(us).join(' | ')} | ${names.map((n) => x.get(n)!.recall.toFixed(4)).join(' | ')} | ${share} |`,
      );
    }
    console.log(
      `(b') the same by CPU time of the searching thread (hosts: ${netted ? 'the request less its part outside the timed loop, from the null request' : 'the whole request, IPC and packing included'}; hosts in other languages n/a)`,
    );
    console.log(`| knob | ${names.map((n) => `${n} CPU QPS`).join(' | ')} | ${g.pairs.map(([a, b]) => `${a}/${b}`).join(' | ')} |`);
    console.log(`|---:|${'---:|'.repeat(names.length + g.pairs.length)}`);
    for (const ef of efs) {
      const x = per.get(ef)!;
      console.log(
        `| ${ef} | ${names.map((n) => spread(x.get(n)!.cpuQps, 0)).join(' | ')} | ${g.pairs.map(([a, b]) => spread(ratio(ef, a, b, 'cpuQps'), 3)).join(' | ')} |`,
      );
    }
  }
  const inTurn = sides.filter((s) => efs.some((ef) => interleaved.get(ef)!.has(s.name)));
  if (inTurn.length > 0) {
    console.log('');
    console.log(
      `(c) in one process, query by query in turn with its plain loop: the side's QPS over the loop's (per round: the median of its passes' ratios of the two paths' times; median [min-max] over ${rounds} rounds)`,
    );
    console.log(`| knob | ${inTurn.map((s) => s.name).join(' | ')} |`);
    console.log(`|---:|${'---:|'.repeat(inTurn.length)}`);
    for (const ef of efs) console.log(`| ${ef} | ${inTurn.map((s) => spread(interleaved.get(ef)!.get(s.name) ?? [], 3)).join(' | ')} |`);
  }
  console.log(`load average at end: ${load()}`);
} finally {
  for (const s of sides) await s.close();
  rmSync(tmp, { recursive: true, force: true });
}
