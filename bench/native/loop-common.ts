// What the Node loops of bench/native share (as loop_common.h and loop_common.py do for the C++
// and Python ones): the raw files bench/harness-overhead.ts writes, this thread's CPU clock, and
// the answer to each stdin line "KNOB PASSES": the knob set outside the timed passes, every
// query once a pass, each timed alone, one JSON line of per-pass QPS by wall and CPU time, mean
// latency and recall@k.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

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

/** Answers stdin until it closes. `search(i)` returns query i's ids (a promise only where the
 * engine's call is asynchronous: a synchronous answer is not awaited). */
export async function serve(
  dir: string,
  nq: number,
  k: number,
  setKnob: (value: number) => void | Promise<void>,
  search: (i: number) => ArrayLike<number> | Promise<ArrayLike<number>>,
): Promise<void> {
  const gt = i32(dir, 'gt.i32', nq * k);
  const found: ArrayLike<number>[] = new Array(nq);
  const lat = new Float64Array(nq);
  for await (const line of createInterface({ input: process.stdin })) {
    const parts = line.trim().split(/\s+/);
    if (parts[0] === '') continue;
    const knob = Number(parts[0]);
    const passes = Number(parts[1]);
    await setKnob(knob);
    const qps: number[] = [];
    const cpuQps: number[] = [];
    const meanMs: number[] = [];
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
    let hits = 0;
    for (let i = 0; i < nq; i++) {
      const want = new Set(gt.subarray(i * k, (i + 1) * k));
      for (let j = 0; j < found[i].length; j++) if (want.has(found[i][j])) hits++;
    }
    console.log(JSON.stringify({ ef: knob, qps, cpu_qps: cpuQps, mean_ms: meanMs, recall: hits / (nq * k) }));
  }
}
