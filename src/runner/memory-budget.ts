// A memory budget per engine (docs/runs.md, "Memory budget"): the engine's processes run in
// a memory cgroup of their own whose limit counts the page cache too (cgroup v1's memory
// controller charges a process's file pages to its group; v2's memory.max likewise), so an engine
// whose working set exceeds the budget must read from storage, or is killed by the kernel. The
// group records its peak use, how often the limit was hit and the kernel's OOM kills.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../util/errors.ts';

const V1_ROOT = '/sys/fs/cgroup/memory';
const V2_ROOT = '/sys/fs/cgroup';

/** What a budget recorded. */
export interface BudgetReading {
  cgroup: 'v1' | 'v2';
  limit_bytes: number;
  /** Highest use of the group (memory and page cache), bytes; null where the kernel keeps none. */
  peak_bytes: number | null;
  /** Times the group hit its limit (v1 failcnt, v2 the `max` events). */
  limit_hits: number;
  /** Processes of the group the kernel killed for memory. */
  oom_kills: number;
}

/** Parses 512M, 1G, 1.5G, 2048K or a byte count. A bad size is one line naming the form. */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([KMGT]?)i?B?$/i.exec(text.trim());
  if (!m) throw new UserError(`--memory-limit ${text}: write a size such as 512M, 1G or 2.5G`);
  const scale = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 }[m[2].toUpperCase() as '' | 'K' | 'M' | 'G' | 'T'];
  const bytes = Math.round(Number(m[1]) * scale);
  if (bytes < 16 * 2 ** 20) throw new UserError(`--memory-limit ${text} is below 16M: no engine process starts in that; give e.g. 512M`);
  return bytes;
}

/** Which cgroup version offers a memory controller here, or why none does. */
export function memoryCgroupVersion(): 'v1' | 'v2' | string {
  if (existsSync(join(V1_ROOT, 'memory.limit_in_bytes'))) return 'v1';
  try {
    if (readFileSync(join(V2_ROOT, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory')) return 'v2';
  } catch {
    // no unified hierarchy at the root
  }
  return `no memory cgroup controller is mounted (neither ${V1_ROOT} nor a cgroup v2 root with the memory controller)`;
}

const readNumber = (path: string): number | null => {
  try {
    const n = Number(readFileSync(path, 'utf8').trim());
    return Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
};

/** `key value` lines (memory.oom_control, memory.events) as a map. */
function keyed(path: string): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const [k, v] = line.trim().split(/\s+/);
      if (k && v !== undefined) out.set(k, Number(v));
    }
  } catch {
    // unreadable: no events
  }
  return out;
}

export class MemoryBudget {
  private constructor(
    readonly version: 'v1' | 'v2',
    readonly dir: string,
    public limitBytes: number,
  ) {}

  /** A new group named for the run and participant, its limit set (swap included, so the
   * limit cannot be escaped by swapping). */
  static create(name: string, limitBytes: number): MemoryBudget {
    const version = memoryCgroupVersion();
    if (version !== 'v1' && version !== 'v2') throw new UserError(`--memory-limit needs a memory cgroup: ${version}`);
    const dir = join(version === 'v1' ? V1_ROOT : V2_ROOT, `vecbench-${process.pid}-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`);
    try {
      mkdirSync(dir, { recursive: true });
      if (version === 'v1') {
        writeFileSync(join(dir, 'memory.limit_in_bytes'), String(limitBytes));
        if (existsSync(join(dir, 'memory.memsw.limit_in_bytes'))) writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), String(limitBytes));
      } else {
        writeFileSync(join(dir, 'memory.max'), String(limitBytes));
        if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
      }
    } catch (e) {
      throw new UserError(`--memory-limit: cannot set up the memory cgroup ${dir}: ${(e as Error).message} (run as root, or give this user the cgroup)`);
    }
    return new MemoryBudget(version, dir, limitBytes);
  }

  /** Bytes the group uses now (memory and page cache), or null where the kernel says none. */
  usage(): number | null {
    return readNumber(join(this.dir, this.version === 'v1' ? 'memory.usage_in_bytes' : 'memory.current'));
  }

  /** Sets a new limit (the kernel reclaims the group's page cache down to it first). */
  setLimit(bytes: number): void {
    if (this.version === 'v2') {
      writeFileSync(join(this.dir, 'memory.max'), String(bytes));
      this.limitBytes = bytes;
      return;
    }
    // v1 keeps memsw >= the limit: raise memsw first when growing, lower it after when shrinking.
    const memsw = join(this.dir, 'memory.memsw.limit_in_bytes');
    const hasMemsw = existsSync(memsw);
    if (hasMemsw && bytes > this.limitBytes) writeFileSync(memsw, String(bytes));
    writeFileSync(join(this.dir, 'memory.limit_in_bytes'), String(bytes));
    if (hasMemsw && bytes <= this.limitBytes) writeFileSync(memsw, String(bytes));
    this.limitBytes = bytes;
  }

  /** Moves a process into the group; its children, forked later, follow it. */
  add(pid: number): void {
    writeFileSync(join(this.dir, 'cgroup.procs'), String(pid));
  }

  /** The group's OOM kills so far. */
  oomKills(): number {
    return this.version === 'v1'
      ? (keyed(join(this.dir, 'memory.oom_control')).get('oom_kill') ?? 0)
      : (keyed(join(this.dir, 'memory.events')).get('oom_kill') ?? 0);
  }

  reading(): BudgetReading {
    if (this.version === 'v1')
      return {
        cgroup: 'v1',
        limit_bytes: this.limitBytes,
        peak_bytes: readNumber(join(this.dir, 'memory.max_usage_in_bytes')),
        limit_hits: readNumber(join(this.dir, 'memory.failcnt')) ?? 0,
        oom_kills: this.oomKills(),
      };
    return {
      cgroup: 'v2',
      limit_bytes: this.limitBytes,
      peak_bytes: readNumber(join(this.dir, 'memory.peak')),
      limit_hits: keyed(join(this.dir, 'memory.events')).get('max') ?? 0,
      oom_kills: this.oomKills(),
    };
  }

  /** Removes the group once its processes are gone (any left are moved to the parent first). */
  dispose(): void {
    try {
      const procs = readFileSync(join(this.dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
      const parent = join(this.dir, '..', 'cgroup.procs');
      for (const pid of procs) writeFileSync(parent, pid);
      rmdirSync(this.dir);
    } catch {
      // already gone, or busy: a later run's reap removes it
    }
  }
}

/** Groups of runs that are gone (a killed run leaves its group behind): removed when empty. */
export function reapBudgets(): void {
  for (const root of [V1_ROOT, V2_ROOT]) {
    let entries: string[];
    try {
      entries = readdirSync(root);
    } catch {
      continue;
    }
    for (const e of entries) {
      const m = /^vecbench-(\d+)-/.exec(e);
      if (!m || existsSync(`/proc/${m[1]}`)) continue;
      try {
        rmdirSync(join(root, e));
      } catch {
        // processes still in it
      }
    }
  }
}
