// One participant's memory budget (--memory-limit) as the engine handle uses it: made on first
// use with the harness's allowance for an in-process engine, read for the result, and turning
// an OOM kill at the budget into a "does not fit" error. Apart from engine-handle.ts, which
// starts the processes the budget holds.
import type { Dataset } from '../datasets/layout.ts';
import { HostError } from './client.ts';
import { MemoryBudget, type BudgetReading } from './memory-budget.ts';
import type { LoadedParticipant } from './participants.ts';
import type { RunOptions } from './run-options.ts';

/** What an in-process engine's host holds besides the engine: the dataset's vectors and
 * attributes, and the harness's runtime (node, the loader, vecbench's code: about 80 MB measured
 * on an idle host; 128 MiB allowed). */
const HARNESS_RUNTIME_BYTES = 128 * 2 ** 20;

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

  constructor(
    private readonly p: LoadedParticipant,
    private readonly ds: Dataset,
    private readonly opts: Pick<RunOptions, 'memoryLimit' | 'connect'>,
  ) {}

  /**
   * The participant's memory budget (--memory-limit), made on first use. A server's process tree
   * gets the limit as given; an in-process engine shares its host with the harness's copy of
   * the dataset and the harness's own runtime, so its group gets that allowance on top
   * (recorded as harness_allowance_bytes). None for a server the user runs (--connect).
   */
  get(): MemoryBudget | null {
    const limit = this.opts.memoryLimit;
    if (limit === undefined || this.opts.connect?.[this.p.name]) return null;
    if (!this.budget) {
      const allowance = this.p.adapter.server ? 0 : harnessAllowance(this.ds);
      this.budget = MemoryBudget.create(`${this.ds.name}-${this.p.name}`, limit + allowance);
      this.budgetAllowance = allowance;
    }
    return this.budget;
  }

  /** What the budget recorded, for the result (null without --memory-limit). */
  reading(): (BudgetReading & { asked_bytes: number; harness_allowance_bytes: number }) | null {
    if (!this.budget || this.opts.memoryLimit === undefined) return null;
    return { ...this.budget.reading(), asked_bytes: this.opts.memoryLimit, harness_allowance_bytes: this.budgetAllowance };
  }

  /** An engine the kernel killed at its budget is reported as not fitting, with the figures;
   * other errors pass through. */
  overBudget(e: unknown): unknown {
    if (!(e instanceof HostError) || e.userError || !this.budget) return e;
    const kills = this.budget.oomKills();
    if (kills <= this.oomSeen) return e;
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
