// Named tiers of `vecbench run` (docs/method.md, "The disk tier"): a dataset, a memory budget, a
// protocol and groups fixed together, so "the disk tier" names one comparable thing in docs,
// results and on the page. A run asked for a tier refuses the options that would make it
// another thing; which participants run stays the user's choice (by default those whose
// settings.json declares the tier: `registry.tiers`).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../util/errors.ts';

interface Tier {
  dataset: string;
  /** The engines' memory budget, bytes (--memory-limit: page cache included). */
  memoryLimit: number;
  memoryText: string;
  cold: boolean;
  groups: string[];
  /** The time one load may take unless --load-timeout says otherwise, s: a graph's build over
   * the tier's set takes longer than the in-RAM default's hour on a small machine. */
  loadTimeoutS: number;
  why: string;
}

const GIB = 1 << 30;

export const TIERS: Record<string, Tier> = {
  disk: {
    // 1M x 768 float32: 3 GB of vectors, generated to disk, with 20,000 queries: the cold
    // protocol answers each query once, and a group's points are placed around each of the
    // three targets (src/runner/cold-placement.ts): up to 9 points x 2 views x 1,000 queries,
    // after the placement's own probe slice.
    dataset: 'synthetic-1m-768-q20k',
    // A third of the vectors: the data is at least 3x the budget on any engine, so a graph over
    // full vectors cannot stay in memory and the layouts made for disk are what is measured.
    memoryLimit: GIB,
    memoryText: '1G',
    cold: true,
    // k = 10, 100, 1000: the published study's lead grew with k, as rereads from disk do.
    groups: ['none/10', 'none/100', 'none/1000', 'cat10/10', 'cat100/10'],
    // A graph's build of 1M x 768 on two cores runs for tens of minutes (one was still under way
    // after 25 on a busy test VM; docs/method.md, "The disk tier"): 4 hours leaves room for the
    // slower builds without hiding a hang.
    loadTimeoutS: 4 * 3600,
    why: 'synthetic-1m-768-q20k (3 GB of vectors, 20,000 queries) under a 1 GiB memory budget per engine (page cache counted), the cold protocol, k = 10, 100, 1000; a load may take 4 h (--load-timeout)',
  },
};

/** What `--tier NAME` sets, checked against the options given with it. */
export function tierOptions(name: string, given: { dataset?: string; memoryLimit?: number; groups?: string[] }): Tier {
  const tier = TIERS[name];
  if (!tier) throw new UserError(`unknown tier "${name}"; known tiers: ${Object.keys(TIERS).join(', ')}`);
  const clash = [
    given.dataset !== undefined && given.dataset !== tier.dataset ? `--dataset (the tier's is ${tier.dataset})` : null,
    given.memoryLimit !== undefined && given.memoryLimit !== tier.memoryLimit ? `--memory-limit (the tier's is ${tier.memoryText})` : null,
    given.groups !== undefined ? `--groups (the tier's are ${tier.groups.join(',')})` : null,
  ].filter((x) => x !== null);
  if (clash.length > 0) throw new UserError(`--tier ${name} fixes ${clash.join(' and ')}; drop them, or drop --tier to measure something else`);
  return tier;
}

/** Linux's default read-ahead, KiB: what the tier's figures in docs/method.md were measured at. */
export const LINUX_READ_AHEAD_KB = 128;

/** What to do about a disk whose read-ahead is above Linux's default ('' when it is not): a cloud
 * VM's disk may come with megabytes, and then each page fault of a search reads that much, so the
 * bytes read per query say more about the setting than about the engine. */
export function readAheadAdvice(storage: { device: string; read_ahead_kb: number }, sysBlock = '/sys/class/block'): string {
  if (storage.read_ahead_kb <= LINUX_READ_AHEAD_KB) return '';
  // A partition has no queue of its own: its disk's applies (the kernel resolves the '..').
  const own = join(sysBlock, storage.device, 'queue');
  const queue = existsSync(own) ? own : `${join(sysBlock, storage.device)}/../queue`;
  return `; that is above Linux's default of ${LINUX_READ_AHEAD_KB} KiB, so each query will read more than on most machines: as root, echo ${LINUX_READ_AHEAD_KB} > ${queue}/read_ahead_kb before the run`;
}
