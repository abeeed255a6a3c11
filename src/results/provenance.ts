// Where a result was measured (docs/contracts.md, "Provenance"): the vecbench commit and whether
// its tree had uncommitted changes, a hash of the participant's settings, and the machine facts
// that move figures (CPU model and SIMD flags, kernel, transparent huge pages, CPU frequency
// governor). Each fact is read where the machine exposes it and null where it does not.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { join } from 'node:path';
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

/** sha256 (first 16 hex digits) of the settings as stored in the result. */
function settingsHash(settings: unknown): string {
  return createHash('sha256').update(JSON.stringify(settings)).digest('hex').slice(0, 16);
}

export function provenance(settings: unknown): Provenance {
  return { ...machine(), settings_hash: settingsHash(settings) };
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
