// Where a result was measured (docs/contracts.md, "Provenance"): the vecbench commit and whether
// its tree had uncommitted changes, a hash of the participant's settings, and the machine facts
// that move figures (CPU model and SIMD flags, kernel, transparent huge pages, CPU frequency
// governor). Each fact is read where the machine exposes it and null where it does not.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT } from '../util/code-paths.ts';
import type { ResultFile } from './schema.ts';

type Provenance = NonNullable<ResultFile['provenance']>;

/** SIMD extensions that change how fast distance kernels run. */
const SIMD = /^(sse\d?(_\d)?|ssse3|avx\w*|fma\w*|f16c|amx\w*|neon|asimd\w*|sve\w*)$/;

function git(args: string[]): string | null {
  if (!existsSync(join(ROOT, '.git'))) return null;
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

/** The bracketed choice of a sysfs setting such as "always [madvise] never". */
function selected(text: string | null): string | null {
  if (text === null) return null;
  return /\[([^\]]+)\]/.exec(text)?.[1] ?? text;
}

let cached: Omit<Provenance, 'settings_hash'> | null = null;

function machine(): Omit<Provenance, 'settings_hash'> {
  if (cached) return cached;
  const cpuinfo = readText('/proc/cpuinfo') ?? '';
  const flagsLine = /^(flags|Features)\s*:\s*(.*)$/m.exec(cpuinfo)?.[2] ?? '';
  const commit = git(['rev-parse', 'HEAD']);
  const status = commit === null ? null : git(['status', '--porcelain', '--untracked-files=no']);
  cached = {
    vecbench_commit: commit,
    vecbench_dirty: status === null ? null : status.length > 0,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    cpu_flags: [...new Set(flagsLine.split(/\s+/).filter((f) => SIMD.test(f)))].sort(),
    kernel: release(),
    thp: selected(readText('/sys/kernel/mm/transparent_hugepage/enabled')),
    governor: readText('/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor'),
  };
  return cached;
}

/**
 * The block device holding `path` and the settings that shape reads from it: read-ahead decides
 * how much one page fault on a memory-mapped file reads (a 3 KiB vector faulted in under an 8 MiB
 * read-ahead reads 8 MiB), so a disk-resident engine's bytes read per query depend on it. Null
 * where the path is not on a block device (tmpfs, overlay) or sysfs is not readable.
 */
export function storageOf(path: string): NonNullable<Provenance['storage']> | null {
  let dev: number;
  try {
    // --out may not exist yet: its nearest existing parent is on the same device.
    let at = path;
    while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
    dev = statSync(at).dev;
  } catch {
    return null;
  }
  // Linux's dev_t: major in bits 8-19 (and 32-43), minor in bits 0-7 (and 20-31).
  const major = ((dev >>> 8) & 0xfff) | (Math.floor(dev / 2 ** 32) & ~0xfff);
  const minor = (dev & 0xff) | ((dev >>> 12) & ~0xff);
  let dir: string;
  try {
    dir = realpathSync(`/sys/dev/block/${major}:${minor}`);
  } catch {
    return null;
  }
  // A partition has no queue of its own: its disk's (the parent directory) applies.
  const queue = existsSync(join(dir, 'queue')) ? join(dir, 'queue') : join(dir, '..', 'queue');
  const readAhead = readText(join(queue, 'read_ahead_kb'));
  if (readAhead === null) return null;
  const rotational = readText(join(queue, 'rotational'));
  return {
    device: dir.split('/').pop()!,
    read_ahead_kb: Number(readAhead),
    rotational: rotational === null ? null : rotational === '1',
    scheduler: selected(readText(join(queue, 'scheduler'))),
  };
}

/** sha256 (first 16 hex digits) of the settings as stored in the result. */
function settingsHash(settings: unknown): string {
  return createHash('sha256').update(JSON.stringify(settings)).digest('hex').slice(0, 16);
}

/** `dataDir`: where the engines keep their data (the run's --out): its storage is recorded. */
export function provenance(settings: unknown, dataDir: string): Provenance {
  return { ...machine(), settings_hash: settingsHash(settings), storage: storageOf(dataDir) };
}

/** Why a stored result cannot be resumed by this run (another vecbench commit or engine
 * version in one file would mix figures of two programs), or null. */
export function provenanceMismatch(prev: ResultFile, next: { provenance: Provenance; engine_version?: string }): string | null {
  const a = prev.provenance?.vecbench_commit ?? null;
  const b = next.provenance.vecbench_commit;
  if (a !== b) return `it was measured by vecbench commit ${a ?? 'unknown'}, this is ${b ?? 'unknown'}`;
  if (next.engine_version !== undefined && prev.engine_version !== 'unknown' && prev.engine_version !== next.engine_version) {
    return `it was measured with ${prev.engine} ${prev.engine_version}, the engine is ${next.engine_version} now`;
  }
  return null;
}
