// The freshness step: writes new rows one at a time and polls until each is searchable,
// timing when the engine acknowledged it and when a read first returned it. The polling runs
// in the host; this side draws the rows, replays the writes into the live record and scores.
import type { RowBatch } from '../contracts.ts';
import type { WireRows } from './protocol.ts';
import type { FreshnessStep } from './runbook.ts';
import type { FreshnessResult } from './schema.ts';
import { type StepContext, Unsupported, sliceAttrs, spread } from './step-kit.ts';

export async function freshnessStep(ctx: StepContext, step: FreshnessStep, i: number): Promise<FreshnessResult> {
  if (!ctx.caps.insert) throw new Unsupported('the participant has no insert()');
  const g = { filter: 'none', k: step.k };
  const choice = await ctx.choosePoint(g, step.point, i);
  const store = ctx.store;
  const rows = store.movedRows(store.takeNewIds(step.writes), ctx.rng(i));
  const s0 = store.version;
  const limit = ctx.opts.stepTimeoutS + step.writes * (step.timeout_ms / 1000 + 1);
  const r = (
    await ctx.target.request<'churn-freshness'>(
      {
        type: 'churn-freshness',
        knobs: choice.knobs,
        rows: rows as Required<WireRows>,
        k: step.k,
        timeoutMs: step.timeout_ms,
        giveUpAfter: step.give_up_after,
        tombstones: store.deadIds(),
      },
      limit,
    )
  ).reply;
  const d = ctx.ds.d;
  let failed = 0;
  let firstError: string | undefined;
  for (let w = 0; w < r.applied; w++) {
    const v = store.nextVersion();
    ctx.versionStep[v] = i + 1;
    if (Number.isNaN(r.ackMs[w])) {
      failed++;
      firstError ??= r.errors[w] ?? 'insert failed';
      continue;
    }
    firstError ??= r.errors[w] ?? undefined;
    const one: RowBatch = { ids: rows.ids.slice(w, w + 1), vectors: rows.vectors.slice(w * d, (w + 1) * d), attrs: sliceAttrs(rows.attrs, w, w + 1) };
    store.put(one, v);
  }
  for (const leak of r.leaks) {
    const v = store.leakVersion(leak.id, s0, s0);
    ctx.addLeak({ id: leak.id, step: i + 1, op: 'freshness', deleted_in_step: ctx.versionStep[v] ?? 0, query: leak.write });
  }
  const visible = Array.from(r.visibleMs).filter((x) => Number.isFinite(x));
  return {
    ...choice,
    writes: step.writes,
    issued: r.applied,
    k: step.k,
    timeout_ms: step.timeout_ms,
    visible: visible.length,
    never_visible: r.applied - failed - visible.length,
    failed_writes: failed,
    ...(firstError !== undefined ? { first_error: firstError } : {}),
    gave_up: r.gaveUp,
    visible_ms: spread(visible),
    ack_ms: spread(Array.from(r.ackMs)),
    polls: r.polls.reduce((a, b) => a + b, 0),
    leaks: r.leaks.length,
  };
}
