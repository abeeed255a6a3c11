// One participant's memory budget (--memory-limit) as the engine handle uses it: made on first
// use with the harness's allowance for an in-process engine, read for the result, and turning
// an OOM kill at the budget into a "does not fit" error. Apart from engine-handle.ts, which
// starts the processes the budget holds.
import type { Dataset } from '../datasets/layout.ts';
import type { ResultFile } from '../results/schema.ts';
import { HostError } from './client.ts';
import { MemoryBudget, type BudgetReading } from './memory-budget.ts';
import type { LoadedParticipant } from './participants.ts';
import { threadsFor, type RunOptions } from './run-options.ts';

/** What an in-process engine's host holds besides the engine: the dataset's vectors and
 * attributes, and the harness's runtime (node, the loader, vecbench's code: about 80 MB measured
 * on an idle host; 128 MiB allowed). */
const HARNESS_RUNTIME_BYTES = 128 * 2 ** 20;

/** What an in-process engine's host allocates for the harness while serving, once the dataset
 * is loaded outside the budget (servingOnly): its replies and heap growth (5 MB measured after
 * a reopen and first query on 24k x 768). */
const HARNESS_SERVING_BYTES = 32 * 2 ** 20;
/** Each search thread's own cost, the harness's way of giving a synchronous engine every core:
 * a V8 isolate with vecbench's and the adapter's modules (57 MiB measured per thread for an HNSW library
 * viewing its file, whose reopen is a few MB). The query vectors they share come on top. */
const HARNESS_THREAD_BYTES = 64 * 2 ** 20;

/** The harness's share of a budget that holds an in-process engine's serving only. */
function servingAllowance(p: LoadedParticipant, ds: Dataset, opts: Pick<RunOptions, 'threads' | 'cold' | 'memoryLimit'>): number {
  const threaded = p.adapter.reopenInThreads && !p.adapter.concurrentSearch;
  return HARNESS_SERVING_BYTES + (threaded ? threadsFor(p, opts) * HARNESS_THREAD_BYTES + ds.queries.byteLength : 0);
}

function harnessAllowance(ds: Dataset): number {
  const attrs = Object.values(ds.attrs).reduce((n, a) => n + a.byteLength, 0);
  return ds.base.byteLength + ds.queries.byteLength + attrs + HARNESS_RUNTIME_BYTES;
}

function fmtBytes(n: number): string {
  return n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(2)} GiB` : `${Math.round(n / 2 ** 20)} MiB`;
}

export class EngineBudget {
  private budget: MemoryBudget | null = null;
  /** OOM kills of the budget already accounted for (each kill is reported once). */
  private oomSeen = 0;
  private budgetAllowance = 0;
  /** While a fresh build runs outside the budget (servingOnly): processes started meanwhile
   * stay out of it. */
  building = false;

  constructor(
    private readonly p: LoadedParticipant,
    private readonly ds: Dataset,
    private readonly opts: Pick<RunOptions, 'memoryLimit' | 'connect' | 'threads' | 'tier' | 'cold'>,
  ) {}

  /**
   * The participant's memory budget (--memory-limit), made on first use. A server's process tree
   * gets the limit as given; an in-process engine shares its host with the harness's copy of
   * the dataset and the harness's own runtime, so its group gets that allowance on top
   * (recorded as harness_allowance_bytes). None for a server the user runs (--connect).
   */
  get(): MemoryBudget | null {
    const limit = this.opts.memoryLimit;
    if (limit === undefined || this.opts.connect?.[this.p.name] || this.building) return null;
    if (!this.budget) {
      const allowance = this.p.adapter.server ? 0 : this.servingOnly ? servingAllowance(this.p, this.ds, this.opts) : harnessAllowance(this.ds);
      this.budget = MemoryBudget.create(`${this.ds.name}-${this.p.name}`, limit + allowance);
      this.budgetAllowance = allowance;
    }
    return this.budget;
  }

  /** Whether the budget holds the engine's serving only: an engine that can reopen its files is
   * built outside it, then stopped and started again within it from those files (the published
   * study measured search over built indexes; a build's memory is recorded apart). Others are
   * held for their whole life. */
  get servingOnly(): boolean {
    // In a named tier an engine that holds its whole index in memory is held from its first
    // start: a build outside the budget would only delay its verdict by the build's time.
    const resident = this.opts.tier !== undefined && this.p.settings.registry?.memory === 'resident';
    return this.opts.memoryLimit !== undefined && !this.opts.connect?.[this.p.name] && this.p.adapter.reopen !== undefined && !resident;
  }

  /** What the budget recorded, for the result (null without --memory-limit). */
  reading(): (BudgetReading & { asked_bytes: number; harness_allowance_bytes: number; holds: 'serving' | 'every start' }) | null {
    if (!this.budget || this.opts.memoryLimit === undefined) return null;
    return {
      ...this.budget.reading(),
      asked_bytes: this.opts.memoryLimit,
      harness_allowance_bytes: this.budgetAllowance,
      holds: this.servingOnly ? 'serving' : 'every start',
    };
  }

  /** An engine the kernel killed at its budget is reported as not fitting, with the figures;
   * other errors pass through. */
  overBudget(e: unknown): unknown {
    if (!(e instanceof HostError) || e.userError) return e;
    return this.killedAtBudget() ?? e;
  }

  /** The "does not fit" error when the kernel has killed a process at the budget since the last
   * one was reported (an engine that dies between requests is found so, not loaded again). */
  killedAtBudget(): HostError | null {
    if (!this.budget) return null;
    const kills = this.budget.oomKills();
    if (kills <= this.oomSeen) return null;
    this.oomSeen = kills;
    const r = this.budget.reading();
    return new HostError(
      `participant ${this.p.name} does not fit in ${fmtBytes(this.opts.memoryLimit!)}: the kernel killed it at its memory budget (limit ${fmtBytes(r.limit_bytes)}${this.budgetAllowance > 0 ? ` with the harness's ${fmtBytes(this.budgetAllowance)}` : ''}, peak ${r.peak_bytes === null ? 'unknown' : fmtBytes(r.peak_bytes)}, ${r.oom_kills} OOM kill${r.oom_kills === 1 ? '' : 's'})`,
    );
  }

  /** Removes the budget's cgroup (after the engine stopped for good). */
  dispose(): void {
    this.budget?.dispose();
    this.budget = null;
  }
}

/** Why a stored result stands as measured although incomplete: its engine was stopped as not
 * fitting the same memory budget (an OOM kill at it, and the reason saved), which a second run
 * would only find again after the same ingest, minutes of it on the disk tier. Null when the
 * result was stopped otherwise, or under another budget. */
export function foundNotToFit(prev: Pick<ResultFile, 'run' | 'extra' | 'resources'>, memoryLimit: number | undefined): string | null {
  const budget = prev.resources?.memory_budget;
  const stopped = prev.extra?.stopped;
  if (prev.run.complete || memoryLimit === undefined || budget === undefined || typeof stopped !== 'string') return null;
  return budget.oom_kills > 0 && budget.asked_bytes === memoryLimit ? stopped : null;
}
