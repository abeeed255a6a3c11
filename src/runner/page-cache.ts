// Page-cache residency of an engine's data files, for cold starts and the --cold protocol
// (docs/method.md §6): how much is resident, and eviction.
//
// Eviction uses `vmtouch -e` (Debian package vmtouch): one process walks a directory and calls
// posix_fadvise(POSIX_FADV_DONTNEED) on every file, which Node cannot call itself; `dd
// iflag=nocache` does the same per file but costs a process per file (PostgreSQL's data
// directory holds ~1,000). Dirty pages cannot be dropped, so the file system is synced first;
// pages a running process has mapped stay resident (the kernel keeps mapped pages), which is
// why the residency after eviction is measured and recorded rather than assumed.
// Apart from resources.ts (memory and disk figures) because it drives an outside program.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

/** Whether vmtouch is installed (it evicts and measures page-cache residency). */
export function haveVmtouch(): boolean {
  return spawnSync('vmtouch', ['-h'], { stdio: 'ignore' }).error === undefined;
}

export const VMTOUCH_MISSING = 'vmtouch is not installed (it evicts data files from the page cache): apt-get install vmtouch';

function vmtouch(args: string[]): string {
  // -m: vmtouch skips files over 500 MB unless told a larger limit.
  const r = spawnSync('vmtouch', ['-m', '1024G', ...args], { encoding: 'utf8' });
  if (r.error) throw new Error(VMTOUCH_MISSING);
  if (r.status !== 0) throw new Error(`vmtouch ${args.join(' ')} failed: ${(r.stderr || r.stdout).trim().split('\n')[0]}`);
  return r.stdout;
}

/** Bytes of the files under dir that are in the page cache now (vmtouch's resident page
 * count x the page size). */
export function residentBytes(dir: string): number {
  const out = vmtouch([dir]);
  const m = /Resident Pages:\s+(\d+)\/(\d+)/.exec(out);
  if (!m) throw new Error(`cannot read vmtouch's output: ${out.trim().split('\n')[0]}`);
  return Number(m[1]) * pageSize();
}

let pageBytes: number | null = null;
function pageSize(): number {
  if (pageBytes === null) {
    const r = spawnSync('getconf', ['PAGESIZE'], { encoding: 'utf8' });
    pageBytes = r.status === 0 ? Number(r.stdout.trim()) : 4096;
  }
  return pageBytes;
}

interface EvictionReport {
  method: string;
  /** Bytes of the directory's files resident before and after eviction. */
  resident_before_bytes: number;
  resident_after_bytes: number;
  /** Whether the whole page cache was dropped as well (root and /proc/sys writable). */
  drop_caches: boolean;
}

/** Whether the global page-cache drop is allowed: root, and not disabled by VECBENCH_DROP_CACHES=0. */
function dropCachesAllowed(): boolean {
  return process.getuid?.() === 0 && process.env.VECBENCH_DROP_CACHES !== '0';
}

/**
 * Evicts every file under dir from the page cache: sync (dirty pages cannot be dropped), then
 * posix_fadvise DONTNEED on every file through vmtouch -e, then — as root — `echo 1 >
 * /proc/sys/vm/drop_caches` for what fadvise cannot reach. Returns the residency before and
 * after, measured. Throws VMTOUCH_MISSING when vmtouch is absent.
 */
export function evictPageCache(dir: string): EvictionReport {
  const before = residentBytes(dir);
  spawnSync('sync', ['-f', dir], { stdio: 'ignore' });
  vmtouch(['-q', '-e', dir]);
  let dropped = false;
  if (dropCachesAllowed()) {
    try {
      writeFileSync('/proc/sys/vm/drop_caches', '1\n');
      dropped = true;
    } catch {
      dropped = false; // /proc/sys read-only (a container): fadvise alone
    }
  }
  return {
    method: `sync -f; vmtouch -e (posix_fadvise DONTNEED per file)${dropped ? '; drop_caches=1' : ''}`,
    resident_before_bytes: before,
    resident_after_bytes: residentBytes(dir),
    drop_caches: dropped,
  };
}
