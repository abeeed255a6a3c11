// The host's own speed, timed between rounds of passes. On a shared virtual machine the
// hypervisor's other guests take CPU time and cache that /proc never shows (steal stayed at 0
// while a fixed loop here slowed by up to 1.6x), so a busy-machine rule built on /proc alone
// misses them. A fixed workload (random reads over 8 MiB with multiply-adds: the memory and
// arithmetic an index search does) runs on every core at once; its time, held against the
// fastest this run has seen, says whether the round just measured ran on a slowed host.
// docs/method.md §9 and docs/measurement.md, "Stable points" (busy-machine), describe the rule.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** A limit to try with --host-slow: a round whose probe took this many times the run's fastest
 * probe ran on a slowed host. The probe is off by default: on this project's 2-core test VM a
 * probe after 300 ms idle read 1.6-1.8x its back-to-back time (median), and probes fall in two
 * modes about 1.6x apart (8.3 and ~13.5 ms), so against the fastest back-to-back probe most
 * rounds read as slowed; a default run with the probe at 1.25 retook 342 of one engine's 937
 * passes and doubled its time. A reference that shares the rounds' idle gaps is the next step. */
export const HOST_SLOW = 1.25;
/** A probe at most this old judges a round: probing after every short round would cost more
 * than it tells (a probe lasts about 25 ms). */
const PROBE_EVERY_S = 1;
/** With the probe off (--host-slow 0) it still runs this often, recorded and judging nothing, so
 * that `vecbench compare` can hold two runs' hosts against each other (0.5 % of the machine). */
export const RECORD_EVERY_S = 5;
/** Longest wait for a slowed host to recover before the next round, in seconds. */
const HOST_WAIT_S = 2;

export interface HostProbe {
  /** The probe's time in ms: the slowest core's. */
  ms: number;
  /** ms held against the fastest probe of this run (1 = as fast as the host has been). */
  slowdown: number;
}

export interface HostSpeedMeter {
  /** A probe no older than maxAgeS (default PROBE_EVERY_S; taken now if the last one is older). */
  sample(maxAgeS?: number): Promise<HostProbe>;
  /** Probes until one is within `limit` of the fastest, for at most HOST_WAIT_S; the last probe. */
  waitForSpeed(limit: number): Promise<HostProbe>;
}

// Fixed work: the same reads on every machine and every run, so probe times of two runs on one
// machine compare. 160 blocks of 65,536 reads took about 23 ms on this project's 2-core test VM.
const WORKER_CODE = `
const { parentPort } = require('node:worker_threads');
const N = 1 << 21;
const data = new Float32Array(N);
for (let i = 0; i < N; i++) data[i] = ((i * 2654435761) % 1000) / 1000;
const at = new Uint32Array(1 << 16);
let s = 12345;
for (let i = 0; i < at.length; i++) { s = (Math.imul(s, 1103515245) + 12345) >>> 0; at[i] = s % N; }
function block() { let acc = 0; for (let i = 0; i < at.length; i++) acc += data[at[i]] * data[(at[i] + 7) & (N - 1)]; return acc; }
parentPort.on('message', ({ warm, blocks }) => {
  let sink = 0;
  for (let i = 0; i < warm; i++) sink += block();
  const t = performance.now();
  for (let i = 0; i < blocks; i++) sink += block();
  parentPort.postMessage({ ms: performance.now() - t, sink });
});
`;
const WARM_BLOCKS = 20;
const PROBE_BLOCKS = 160;

/** Probes on `cores` worker threads (default: every core), kept for the process's life. */
export class WorkerHostSpeed implements HostSpeedMeter {
  private workers: Worker[] | null = null;
  private last: { at: number; probe: HostProbe } | null = null;
  private best = Infinity;
  constructor(private readonly cores = availableParallelism()) {}

  private start(): Worker[] {
    if (this.workers) return this.workers;
    this.workers = Array.from({ length: this.cores }, () => {
      const w = new Worker(WORKER_CODE, { eval: true });
      w.unref(); // an idle probe must not keep the process alive
      return w;
    });
    return this.workers;
  }

  private async probe(): Promise<HostProbe> {
    const times = await Promise.all(
      this.start().map(
        (w) =>
          new Promise<number>((resolve, reject) => {
            const onError = (e: Error) => reject(e);
            w.once('error', onError);
            w.once('message', (m: { ms: number }) => {
              w.off('error', onError);
              resolve(m.ms);
            });
            w.postMessage({ warm: WARM_BLOCKS, blocks: PROBE_BLOCKS });
          }),
      ),
    );
    const ms = Math.max(...times);
    this.best = Math.min(this.best, ms);
    const probe = { ms, slowdown: ms / this.best };
    this.last = { at: performance.now(), probe };
    return probe;
  }

  async sample(maxAgeS = PROBE_EVERY_S): Promise<HostProbe> {
    if (this.last && performance.now() - this.last.at < maxAgeS * 1000) return { ...this.last.probe, slowdown: this.last.probe.ms / this.best };
    return this.probe();
  }

  async waitForSpeed(limit: number): Promise<HostProbe> {
    const until = performance.now() + HOST_WAIT_S * 1000;
    let p = await this.probe();
    while (p.slowdown > limit && performance.now() < until) p = await this.probe();
    return p;
  }
}

let shared: WorkerHostSpeed | null = null;
/** One meter per process: the fastest probe is the run's, across participants and groups. */
export function sharedHostSpeed(): HostSpeedMeter {
  return (shared ??= new WorkerHostSpeed());
}
