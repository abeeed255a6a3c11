// The load generator's report sections: derived from `extra.concurrency` and `extra.open_loop`
// of the stored results (validated again here), for the terminal and `report --json`. The page
// draws the same rows (src/report/html.ts renders extra sections, charts by in_flight and
// offered_qps).
import type { ResultFile } from '../results/schema.ts';
import { concurrencySchema, openLoopSchema, type ConcurrencySection, type OpenLoopSection } from './schema.ts';

interface DerivedLoad {
  dataset: string;
  participant: string;
  concurrency: ConcurrencySection | null;
  open_loop: OpenLoopSection | null;
  /** Ordinary ladder points flagged client-limited. */
  client_limited_ladder_points: number;
  /** Why a stored section could not be read, or why the load run failed. */
  problems: string[];
}

export function deriveLoad(results: ResultFile[]): DerivedLoad[] {
  const out: DerivedLoad[] = [];
  for (const r of results) {
    const problems: string[] = [];
    const read = <T>(key: string, schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { message: string } } }): T | null => {
      if (r.extra[key] === undefined) return null;
      const p = schema.safeParse(r.extra[key]);
      if (p.success) return p.data;
      problems.push(`extra.${key} is not a valid section: ${p.error.message.split('\n')[0]}`);
      return null;
    };
    const concurrency = read<ConcurrencySection>('concurrency', concurrencySchema);
    const open = read<OpenLoopSection>('open_loop', openLoopSchema);
    if (typeof r.extra.load_error === 'string') problems.push(`load run failed: ${r.extra.load_error}`);
    const limited = r.groups.reduce((a, g) => a + g.points.filter((p) => p.flags.includes('client-limited')).length, 0);
    if (concurrency || open || limited > 0 || problems.length > 0) {
      out.push({ dataset: r.dataset.name, participant: r.participant, concurrency, open_loop: open, client_limited_ladder_points: limited, problems });
    }
  }
  return out.sort((a, b) => a.dataset.localeCompare(b.dataset) || a.participant.localeCompare(b.participant));
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((x, i) => (i === 0 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

const f = (v: number | null, digits = 1) => (v === null ? '-' : v >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toFixed(digits));
const pct = (v: number | null, est: boolean) => (v === null ? '-' : `${v.toFixed(0)}%${est ? '~' : ''}`);

/** The null ceiling the points were held against: the protocol's per in-flight level (workers),
 * or the host loop's (in process). */
function ceilingText(c: ConcurrencySection['client']): string {
  if (c.protocol_ceilings && c.protocol_ceilings.length > 0)
    return `, ${c.protocol} null ceiling ${c.protocol_ceilings.map((x) => `${f(x.qps)} QPS at ${x.in_flight}`).join(', ')}`;
  return c.ceiling_qps !== null ? `, null ceiling ${f(c.ceiling_qps)} QPS` : '';
}

export function renderLoad(rows: DerivedLoad[]): string {
  const out: string[] = [];
  for (const ds of [...new Set(rows.map((r) => r.dataset))]) {
    const dr = rows.filter((r) => r.dataset === ds);
    const sweeps = dr.filter((r) => r.concurrency);
    if (sweeps.length > 0) {
      out.push(`${ds}: concurrency sweep (closed loop): QPS and latency per in-flight level; CPU in % of one core (~ = estimated from the null ceiling)`);
      const body: string[][] = [];
      for (const r of sweeps) {
        const c = r.concurrency!;
        for (const p of c.points)
          body.push([
            r.participant,
            String(p.in_flight),
            f(p.qps),
            f(p.p50_ms, 2),
            f(p.p99_ms, 2),
            f(p.p999_ms, 2),
            pct(p.engine_cpu_pct, false),
            pct(p.client_cpu_pct, p.client_cpu_estimated),
            p.recall === null ? '-' : p.recall.toFixed(3),
            p.errors + p.timeouts > 0 ? `${p.errors}+${p.timeouts}` : '0',
            p.flags.join(','),
          ]);
      }
      out.push(...table(['participant', 'in-flight', 'QPS', 'p50 ms', 'p99 ms', 'p99.9 ms', 'engine CPU', 'client CPU', 'recall', 'err+t/o', 'flags'], body));
      for (const r of sweeps) {
        const c = r.concurrency!;
        const sat = c.saturation ? `saturates at in-flight ${c.saturation.in_flight} (${f(c.saturation.qps)} QPS)` : 'no saturation point';
        const anti =
          c.anti_scaling.length > 0
            ? `; ANTI-SCALING: ${c.anti_scaling.map((a) => `${a.from_in_flight} -> ${a.to_in_flight} in flight: ${f(a.qps_from)} -> ${f(a.qps_to)} QPS`).join('; ')}`
            : '';
        out.push(
          `${r.participant}: ${c.group} at ${JSON.stringify(c.knobs)} (${c.knobs_reason}); ${sat}${anti}; client: ${c.client.mode}${c.client.mode === 'workers' ? ` x${c.client.workers}` : ''}${ceilingText(c.client)}`,
        );
        for (const n of c.notes) out.push(`  note: ${n}`);
      }
      out.push('');
    }
    const opens = dr.filter((r) => r.open_loop);
    if (opens.length > 0) {
      out.push(`${ds}: open loop (Poisson arrivals, latency from the intended send time): p99 vs offered load`);
      const body: string[][] = [];
      for (const r of opens) {
        for (const s of r.open_loop!.steps)
          body.push([
            r.participant,
            f(s.offered_qps),
            f(s.achieved_qps),
            f(s.p50_ms, 2),
            f(s.p99_ms, 2),
            f(s.p999_ms, 2),
            f(s.send_lag_p99_ms, 2),
            pct(s.engine_cpu_pct, false),
            pct(s.client_cpu_pct, s.client_cpu_estimated),
            s.within_budget ? 'yes' : 'no',
            s.flags.join(','),
          ]);
      }
      out.push(
        ...table(
          ['participant', 'offered/s', 'achieved/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'send lag p99', 'engine CPU', 'client CPU', 'in budget', 'flags'],
          body,
        ),
      );
      for (const r of opens) {
        const o = r.open_loop!;
        out.push(
          `${r.participant}: highest rate with p99 <= ${o.budget_p99_ms} ms: ${o.max_qps_within_budget === null ? 'none' : `${f(o.max_qps_within_budget)}/s`}; ${o.saturated_at_qps === null ? 'not saturated' : `saturated at ${f(o.saturated_at_qps)}/s offered`} (rates: ${o.rates_from}); client: ${o.client.mode}${o.client.mode === 'workers' ? ` x${o.client.workers}` : ''}${ceilingText(o.client)}`,
        );
        for (const n of o.notes) out.push(`  note: ${n}`);
      }
      out.push('');
    }
    for (const r of dr) {
      if (r.client_limited_ladder_points > 0)
        out.push(
          `${r.participant}: ${r.client_limited_ladder_points} ladder point(s) flagged client-limited: the client, not the engine, may have set their rate`,
        );
      for (const p of r.problems) out.push(`${r.participant}: ${p}`);
    }
  }
  return out.join('\n').trimEnd();
}
