// What the Node loops of bench/native share (as loop_common.h and loop_common.py do for the C++
// and Python ones): the raw files bench/harness-overhead.ts writes, this thread's CPU clock, and
// the answer to each stdin line "KNOB PASSES [MODE]": the knob set outside the timed passes, every
// query once a pass, each timed alone, one JSON line of per-pass QPS by wall and CPU time, mean
// latency and recall@k. MODE 'adapter' (where the loop was given `--adapter`, below) times the
// participant's own adapter in this same process, query by query in turn with the plain call.
import { readFileSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { openEngine } from '../../src/runner/engine-lifecycle.ts';
import { loadParticipant } from '../../src/runner/participants.ts';

/** DIR's float32 or int32 file as a typed array over its bytes. */
export function f32(dir: string, file: string): Float32Array {
  const b = readFileSync(`${dir}/${file}`);
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
}
function i32(dir: string, file: string, count: number): Int32Array {
  const b = readFileSync(`${dir}/${file}`);
  return new Int32Array(b.buffer, b.byteOffset, count);
}

/** Seconds this process's main thread has run on a CPU (Linux), or NaN. */
function threadCpuS(): number {
  try {
    return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[0]) / 1e9;
  } catch {
    return Number.NaN;
  }
}

/** How a loop answers: the knob set before the passes, then query i's ids (a promise only where
 * the call is asynchronous: a synchronous answer is not awaited). */
export interface LoopMode {
  setKnob: (value: number) => void | Promise<void>;
  search: (i: number) => ArrayLike<number> | Promise<ArrayLike<number>>;
}

/**
 * The participant's own adapter in the loop's process, when the loop's arguments end with
 * `--adapter PARTICIPANT DIR KNOB DATASET METRIC` (DIR: a copy of the files the participant's
 * build left, KNOB: its knob's name or '-' for none): reopened there through
 * src/runner/engine-lifecycle.ts (its validated settings and checked knobs), then searched through
 * its EngineSession. Between processes a JavaScript engine's speed moves with its heap and its
 * compiled code (bench:overhead read the same Orama participant at 0.90 to 1.10 of its loop from
 * one process to the next); in one process, its queries timed in turn with the plain call's,
 * what is left between them is the adapter's own path.
 */
export async function adapterMode(dir: string, queries: Float32Array, d: number, k: number): Promise<LoopMode | undefined> {
  const at = process.argv.indexOf('--adapter');
  if (at < 0) return undefined;
  const [name, workDir, knob, dataset, metric] = process.argv.slice(at + 1, at + 6);
  if (metric !== 'ip' && metric !== 'l2' && metric !== 'cosine') throw new Error('loop: --adapter takes PARTICIPANT DIR KNOB DATASET METRIC');
  const { session } = await openEngine(await loadParticipant(name), {
    dataset: { name: dataset, n: statSync(`${dir}/base.f32`).size / 4 / d, d, metric, hasText: false },
    workDir,
    maxConcurrency: 1,
    log: (m) => process.stderr.write(`[${name}] ${m}\n`),
    reopen: true,
  });
  return {
    setKnob: (value) => (knob === '-' ? undefined : session.setKnobs({ [knob]: value })),
    search: (i) => session.search({ vector: queries.subarray(i * d, (i + 1) * d), k, filter: null }),
  };
}

/** Answers stdin until it closes: `raw` is the plain loop, `adapter` (optional) the mode
 * 'adapter'. */
export async function serve(dir: string, nq: number, k: number, raw: LoopMode, adapter?: LoopMode): Promise<void> {
  const gt = i32(dir, 'gt.i32', nq * k);
  const found: ArrayLike<number>[] = new Array(nq);
  const lat = new Float64Array(nq);
  const recallOf = (answers: ArrayLike<number>[]): number => {
    let hits = 0;
    for (let i = 0; i < nq; i++) {
      const want = new Set(gt.subarray(i * k, (i + 1) * k));
      for (let j = 0; j < answers[i].length; j++) if (want.has(answers[i][j])) hits++;
    }
    return hits / (nq * k);
  };
  for await (const line of createInterface({ input: process.stdin })) {
    const parts = line.trim().split(/\s+/);
    if (parts[0] === '') continue;
    const knob = Number(parts[0]);
    const passes = Number(parts[1]);
    const mode = parts[2] === 'adapter' ? adapter : parts[2] === undefined || parts[2] === 'raw' ? raw : undefined;
    if (mode === undefined) throw new Error(`loop: no mode "${parts[2]}" here (raw${adapter ? ', adapter' : ''})`);
    const { setKnob, search } = mode;
    await setKnob(knob);
    const qps: number[] = [];
    const cpuQps: number[] = [];
    const meanMs: number[] = [];
    if (mode === adapter) {
      // Query by query in turn with the plain call (which goes first alternates), so both share
      // the process and each millisecond's speed: the pass reports the adapter's figures by its
      // own queries' time, and the ratio of the two paths' times over the pass.
      await raw.setKnob(knob);
      const ratio: number[] = [];
      for (let p = 0; p < passes; p++) {
        let own = 0;
        let plain = 0;
        for (let i = 0; i < nq; i++) {
          for (const first of (i + p) % 2 === 0 ? [true, false] : [false, true]) {
            const t = performance.now();
            const answer = first ? search(i) : raw.search(i);
            const ids = answer instanceof Promise ? await answer : answer;
            const ms = performance.now() - t;
            if (first) {
              found[i] = ids;
              lat[i] = ms;
              own += ms;
            } else plain += ms;
          }
        }
        qps.push((nq * 1000) / own);
        cpuQps.push(Number.NaN);
        meanMs.push(own / nq);
        ratio.push(plain / own);
      }
      console.log(JSON.stringify({ ef: knob, qps, cpu_qps: cpuQps, mean_ms: meanMs, recall: recallOf(found), interleaved_ratio: ratio }));
      continue;
    }
    for (let p = 0; p < passes; p++) {
      const cpu0 = threadCpuS();
      const start = performance.now();
      for (let i = 0; i < nq; i++) {
        const t = performance.now();
        const answer = search(i);
        found[i] = answer instanceof Promise ? await answer : answer;
        lat[i] = performance.now() - t;
      }
      const wall = (performance.now() - start) / 1000;
      cpuQps.push(nq / (threadCpuS() - cpu0));
      qps.push(nq / wall);
      meanMs.push(lat.reduce((a, b) => a + b, 0) / nq);
    }
    console.log(JSON.stringify({ ef: knob, qps, cpu_qps: cpuQps, mean_ms: meanMs, recall: recallOf(found) }));
  }
}
