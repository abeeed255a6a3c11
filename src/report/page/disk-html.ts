// The page's reads-from-storage view (node side): per group, MiB read from storage per query
// against recall for every participant, the k of one filter side by side, so a lead that grows
// with k because one engine rereads more can be seen or refuted at a glance (docs/method.md, "The
// disk tier"). Drawn from the stored points' io figures only; the charts are ExtraCurves, drawn
// by the page script like the other curves. Tiers: what each dataset's results were measured as.
import { esc, fmtNum, nm } from './html-text.ts';
import { participantOrder, sortGroups } from './tables-html.ts';
import type { ExtraCurve } from './types.ts';
import type { ResultFile } from '../../results/schema.ts';

const MiB = 2 ** 20;
/** The y of the charts, as the script's tooltips name it. */
export const READ_AXIS = 'MiB read per query';

/** What a result was measured as: its named tier (--tier), a memory budget of its own, or in RAM. */
export function tierOf(r: ResultFile): string {
  if (r.run.tier) return r.run.tier;
  const limit = r.run.memory_limit_bytes;
  return limit === undefined ? 'in RAM' : `under ${fmtNum(limit / MiB)} MiB`;
}

/** Each dataset's tier: its results' (the first in name order when they differ). */
export function datasetTiers(results: ResultFile[], datasets: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const ds of datasets) {
    const rs = results.filter((r) => r.dataset.name === ds).sort((a, b) => a.participant.localeCompare(b.participant));
    out[ds] = tierOf(rs.find((r) => tierOf(r) !== 'in RAM') ?? rs[0]);
  }
  return out;
}

/** The throughput points of a group that carry bytes read, as chart points (recall, MiB). */
function readPoints(r: ResultFile, group: string): { x: number; y: number }[] {
  const g = r.groups.find((x) => x.key === group);
  return (g?.points ?? []).filter((p) => p.view === 'throughput' && p.io !== undefined).map((p) => ({ x: p.recall, y: p.io!.read_bytes_per_query / MiB }));
}

/** Each group's first query (asked on its own before the group's timing; under the cold
 * protocol right after the engine's files were evicted): where an engine stalls on a field's
 * index that left memory, it shows here. */
function firstQueries(rs: ResultFile[], parts: { name: string }[], keys: string[]): string {
  const cell = (name: string, key: string) => {
    const r = rs.find((x) => x.participant === name);
    const ms = r?.groups.find((g) => g.key === key)?.first_query_ms;
    return ms === undefined ? nm : esc(`${fmtNum(ms)} ms${r?.run.protocol === 'cold' ? '' : ' (warm)'}`);
  };
  return `<div class="scroll"><table class="first-query"><caption>First query of each group, asked on its own (cold protocol: right after the engine files were evicted)</caption><thead><tr><th>group</th>${parts
    .map((p) => `<th>${esc(p.name)}</th>`)
    .join('')}</tr></thead><tbody>${keys
    .map((key) => `<tr data-group="${esc(key)}"><td>${esc(key)}</td>${parts.map((p) => `<td>${cell(p.name, key)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table></div>`;
}

/** The section (empty when no stored point carries bytes read); its charts go into `curves`. */
export function diskSection(results: ResultFile[], datasets: string[], curves: ExtraCurve[]): string {
  const blocks: string[] = [];
  for (const ds of datasets) {
    const rs = results.filter((r) => r.dataset.name === ds);
    const keys = sortGroups(rs.flatMap((r) => r.groups.filter((g) => g.points.some((p) => p.io !== undefined)).map((g) => g.key)));
    if (keys.length === 0) continue;
    const parts = participantOrder(results, ds);
    const byFilter = new Map<string, string[]>();
    for (const key of keys) {
      const filter = key.split('/')[0];
      byFilter.set(filter, [...(byFilter.get(filter) ?? []), key]);
    }
    const out = [`<div class="ds-block" data-ds="${esc(ds)}">`];
    for (const [filter, groupKeys] of byFilter) {
      // One row per filter, its k side by side (never hidden by the k selector).
      out.push(`<div class="chart-grid disk-row" data-filter="${esc(filter)}">`);
      for (const key of groupKeys) {
        const id = `disk${curves.length}`;
        curves.push({
          id,
          dataset: ds,
          x: 'recall',
          y: READ_AXIS,
          logX: false,
          titled: true,
          series: parts.map((p) => ({ participant: p.name, origin: p.origin, points: readPoints(rs.find((r) => r.participant === p.name)!, key) })),
        });
        out.push(
          `<figure class="chart-card disk-card" data-group="${esc(key)}"><figcaption>${esc(`${key}: ${READ_AXIS} by recall`)}</figcaption><div class="extra-chart" data-extra-chart="${id}"></div></figure>`,
        );
      }
      out.push(`</div>`);
    }
    out.push(firstQueries(rs, parts, keys));
    out.push(`</div>`);
    blocks.push(out.join('\n'));
  }
  if (blocks.length === 0) return '';
  return `<section class="part" id="disk"><h2>Reads from storage</h2>
<p class="note">Per group, the bytes each participant's engine processes read from storage per query (the kernel's read_bytes of the engine's processes over a pass, divided by its queries; throughput view), against recall. The k of one filter sit side by side: a lead that grows with k because one engine rereads more shows as that engine's curve rising faster than the others'. Near zero means the engine's data stayed in memory (or the page cache) while measured.</p>
${blocks.join('\n')}
</section>`;
}
