// Resource measurements of an engine (docs/method.md §6): memory of its process tree from
// /proc/PID/smaps_rollup (sampled) and the bytes its data occupies on disk, recorded into the
// result by ResourceRecorder. Page-cache residency and eviction are in page-cache.ts.
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Resources } from '../results/schema.ts';

/** Memory of a process tree, summed over its processes' proportional set sizes (PSS), so pages
 * shared between the processes (PostgreSQL's shared buffers) are counted once. */
interface MemSample {
  /** Anonymous memory: private anonymous pages plus shared anonymous memory (shmem, e.g.
   * PostgreSQL's shared_buffers): memory no file backs. */
  anon: number;
  /** File-backed pages mapped by the processes (mmap'd data files and the binaries). */
  file: number;
  /** The shmem part of anon. */
  shmem: number;
  /** Processes in the tree when sampled. */
  processes: number;
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** The PID and every descendant's, found by walking /proc parent links. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    const ppid = parentOf(pid);
    if (ppid === null) continue;
    let list = children.get(ppid);
    if (!list) children.set(ppid, (list = []));
    list.push(pid);
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    out.push(pid);
    for (const c of children.get(pid) ?? []) stack.push(c);
  }
  return out;
}

/** The kB fields of one /proc/PID/smaps_rollup, in bytes; null when the process is gone. */
function readSmapsRollup(pid: number): Record<string, number> | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    return null;
  }
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(\w+):\s+(\d+) kB/.exec(line);
    if (m) out[m[1]] = Number(m[2]) * 1024;
  }
  return out;
}

/** One memory sample of a process tree; null when the root process is gone. */
export function sampleMemory(root: number): MemSample | null {
  const pids = processTree(root);
  const sample: MemSample = { anon: 0, file: 0, shmem: 0, processes: 0 };
  let rootSeen = false;
  for (const pid of pids) {
    const r = readSmapsRollup(pid);
    if (!r) continue;
    if (pid === root) rootSeen = true;
    if (r.Pss_Anon === undefined) throw new Error('/proc/PID/smaps_rollup has no Pss_Anon field (Linux >= 5.7 needed for the anonymous / file split)');
    sample.anon += r.Pss_Anon + (r.Pss_Shmem ?? 0);
    sample.file += r.Pss_File ?? 0;
    sample.shmem += r.Pss_Shmem ?? 0;
    sample.processes++;
  }
  return rootSeen ? sample : null;
}

interface MemSummary {
  samples: number;
  /** The longest wait between two samples, ms (the base interval, or longer: SAMPLE_COST_FACTOR). */
  longest_interval_ms: number;
  /** Highest anon + file of any one sample. */
  peak_bytes: number;
  /** Highest anon of any sample, and highest file of any sample (they may be different samples). */
  peak_anon_bytes: number;
  peak_file_bytes: number;
  /** Medians over the samples: the steady level. */
  median_anon_bytes: number;
  median_file_bytes: number;
  median_shmem_bytes: number;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function summarizeMemory(samples: MemSample[], longestIntervalMs: number): MemSummary | null {
  if (samples.length === 0) return null;
  return {
    samples: samples.length,
    longest_interval_ms: Math.round(longestIntervalMs),
    peak_bytes: Math.max(...samples.map((s) => s.anon + s.file)),
    peak_anon_bytes: Math.max(...samples.map((s) => s.anon)),
    peak_file_bytes: Math.max(...samples.map((s) => s.file)),
    median_anon_bytes: median(samples.map((s) => s.anon)),
    median_file_bytes: median(samples.map((s) => s.file)),
    median_shmem_bytes: median(samples.map((s) => s.shmem)),
  };
}

/**
 * Samples a process tree's memory every intervalMs from this (the runner's) process, never from
 * inside the engine. `pid()` is asked at every tick, so a restarted engine is followed. A
 * sampled peak is a lower bound of the true peak: the interval is recorded with it.
 */
/** How much longer than a sample took the sampler waits before the next one. smaps_rollup walks
 * every page table of the process: 0.1 s of the runner's time (0.07 s of it in the kernel, under
 * the engine's memory lock) for a 12 GB engine on the 2-core test VM, so a fixed 200 ms took half
 * a core from the build it measured. Waiting 50x the last sample's time holds the sampler's cost
 * to 2 % of a core; a small engine's samples take well under a millisecond and keep the base
 * interval. */
const SAMPLE_COST_FACTOR = 50;

export class MemorySampler {
  private samples: MemSample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private error: string | null = null;
  private lastCostMs = 0;
  private longestMs = 0;

  constructor(
    private readonly pid: () => number | undefined,
    readonly intervalMs: number,
    /** How a sample is read (a test's stand-in for a slow one). */
    private readonly read: (pid: number) => MemSample | null = sampleMemory,
  ) {}

  private tick(): void {
    const pid = this.pid();
    if (pid === undefined) return;
    const t0 = performance.now();
    try {
      const s = this.read(pid);
      if (s) this.samples.push(s);
    } catch (e) {
      // Said by the next snapshot() or stop(); sampling ends here.
      this.error = (e as Error).message;
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
    }
    this.lastCostMs = performance.now() - t0;
  }

  private schedule(): void {
    const wait = Math.max(this.intervalMs, this.lastCostMs * SAMPLE_COST_FACTOR);
    this.longestMs = Math.max(this.longestMs, wait);
    this.timer = setTimeout(() => {
      this.tick();
      if (this.timer !== null && this.error === null) this.schedule();
    }, wait);
    this.timer.unref();
  }

  start(): this {
    this.tick();
    if (this.error === null) this.schedule();
    return this;
  }

  /** The summary of the samples so far (sampling goes on). */
  snapshot(): MemSummary | null {
    if (this.error) throw new Error(this.error);
    return summarizeMemory(this.samples, this.longestMs);
  }

  /** Stops sampling (taking one last sample) and returns the summary, or null when no sample
   * could be taken. Throws when /proc cannot give the split. */
  stop(): MemSummary | null {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
      this.tick();
    }
    if (this.error) throw new Error(this.error);
    return summarizeMemory(this.samples, this.longestMs);
  }
}

/** Bytes allocated on disk by every file under dir (st_blocks x 512, hard links counted once);
 * 0 for a missing or empty directory. */
export function diskUsage(dir: string): number {
  let total = 0;
  const seen = new Set<string>();
  const walk = (path: string) => {
    let st;
    try {
      st = lstatSync(path);
    } catch {
      return; // removed while walking (a server's temporary file)
    }
    if (st.isSymbolicLink()) return;
    if (st.isDirectory()) {
      let entries: string[];
      try {
        entries = readdirSync(path);
      } catch {
        return;
      }
      for (const e of entries) walk(join(path, e));
      return;
    }
    const key = `${st.dev}:${st.ino}`;
    if (seen.has(key)) return;
    seen.add(key);
    total += st.blocks * 512;
  };
  walk(dir);
  return total;
}

/** Base sampling intervals: the build is short and its peak matters; serving is steady. */
const BUILD_SAMPLE_MS = 200;
const SERVING_SAMPLE_MS = 1000;

/** A resources record with nothing measured yet. */
export function emptyResources(measured: Resources['measured_process']): Resources {
  return {
    measured_process: measured,
    disk_bytes: null,
    disk_stopped_bytes: null,
    mem_baseline_anon_bytes: null,
    mem_baseline_file_bytes: null,
    mem_build_peak_bytes: null,
    mem_build_peak_anon_bytes: null,
    mem_build_peak_file_bytes: null,
    mem_serving_anon_bytes: null,
    mem_serving_file_bytes: null,
    mem_serving_shmem_bytes: null,
    mem_serving_peak_bytes: null,
    mem_sample_interval_ms: { build: BUILD_SAMPLE_MS, serving: SERVING_SAMPLE_MS },
    mem_samples: { build: 0, serving: 0 },
    cold_accept_s: null,
    cold_first_query_s: null,
    cold_eviction: null,
    probe: null,
    group_evictions: [],
    unmeasured: {},
  };
}

/**
 * Fills a Resources record for one engine: the baseline before rows, the build peak, the disk
 * bytes after load and the serving level. `pid()` names the process tree to measure (the
 * server's, or the host's for an in-process engine) and is asked at every sample.
 */
export class ResourceRecorder {
  private build: MemorySampler | null = null;
  private serving: MemorySampler | null = null;

  constructor(
    readonly res: Resources,
    private readonly pid: () => number | undefined,
  ) {}

  private fail(fields: string[], why: string): void {
    for (const f of fields) this.res.unmeasured[f] = why;
  }

  /** Before any row: the engine process as it starts. */
  baseline(): void {
    const pid = this.pid();
    const s = pid === undefined ? null : sampleMemory(pid);
    if (!s) {
      this.fail(['mem_baseline_anon_bytes', 'mem_baseline_file_bytes'], 'the engine process was gone when sampled');
      return;
    }
    this.res.mem_baseline_anon_bytes = s.anon;
    this.res.mem_baseline_file_bytes = s.file;
  }

  startBuild(): void {
    this.build = new MemorySampler(this.pid, BUILD_SAMPLE_MS).start();
  }

  /** After ingest and index build: the build peak, and the bytes of dataDir (null: the engine
   * keeps no files of its own). */
  endBuild(dataDir: string | null): void {
    const fields = ['mem_build_peak_bytes', 'mem_build_peak_anon_bytes', 'mem_build_peak_file_bytes'];
    try {
      const m = this.build?.stop() ?? null;
      if (m) {
        this.res.mem_build_peak_bytes = m.peak_bytes;
        this.res.mem_build_peak_anon_bytes = m.peak_anon_bytes;
        this.res.mem_build_peak_file_bytes = m.peak_file_bytes;
        this.res.mem_samples.build = m.samples;
        this.res.mem_sample_interval_ms.build = Math.max(BUILD_SAMPLE_MS, m.longest_interval_ms);
      } else this.fail(fields, 'no sample could be taken during the load');
    } catch (e) {
      this.fail(fields, (e as Error).message);
    }
    this.build = null;
    if (dataDir === null) this.fail(['disk_bytes'], 'the engine has no data directory');
    else this.res.disk_bytes = diskUsage(dataDir);
  }

  startServing(): void {
    this.serving ??= new MemorySampler(this.pid, SERVING_SAMPLE_MS).start();
  }

  /** Writes the serving level so far (the sampler keeps running). */
  recordServing(): void {
    if (!this.serving) return;
    const fields = ['mem_serving_anon_bytes', 'mem_serving_file_bytes', 'mem_serving_shmem_bytes', 'mem_serving_peak_bytes'];
    try {
      const m = this.serving.snapshot();
      if (!m) {
        this.fail(fields, 'no sample could be taken while serving');
        return;
      }
      this.res.mem_serving_anon_bytes = m.median_anon_bytes;
      this.res.mem_serving_file_bytes = m.median_file_bytes;
      this.res.mem_serving_shmem_bytes = m.median_shmem_bytes;
      this.res.mem_serving_peak_bytes = m.peak_bytes;
      this.res.mem_samples.serving = m.samples;
      this.res.mem_sample_interval_ms.serving = Math.max(SERVING_SAMPLE_MS, m.longest_interval_ms);
      for (const f of fields) delete this.res.unmeasured[f];
    } catch (e) {
      this.fail(fields, (e as Error).message);
    }
  }

  stopServing(): void {
    if (!this.serving) return;
    try {
      this.serving.stop();
    } catch {
      /* recorded by recordServing */
    }
    this.recordServing();
    this.serving = null;
  }

  /** Stops every sampler (the engine is going away for good). */
  dispose(): void {
    try {
      this.build?.stop();
    } catch {
      /* nothing to record */
    }
    this.build = null;
    this.stopServing();
  }
}
