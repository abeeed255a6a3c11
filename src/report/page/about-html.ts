// The page's participants and dataset sections (node side): each participant's card and README,
// each dataset's manifest.
import { esc, fmtBytes, isRecord, miniMarkdown, pretty } from './html-text.ts';
import { drivenOf, participantOrder, throughputDriven } from './tables-html.ts';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResultFile } from '../../results/schema.ts';

export function participantsSection(results: ResultFile[], datasets: string[], participantsDir: string): string {
  const out: string[] = [`<section class="part" id="participants"><h2>Participants</h2>`];
  for (const ds of datasets) {
    out.push(`<div class="ds-block cards" data-ds="${esc(ds)}">`);
    for (const p of participantOrder(results, ds)) {
      const r = results.find((x) => x.dataset.name === ds && x.participant === p.name)!;
      const imp = isRecord(r.extra?.import) ? r.extra.import : null;
      out.push(`<article class="card"><h3>${esc(r.participant)}<span class="badge ${r.origin}">${r.origin}</span></h3><dl class="facts">`);
      const fact = (k: string, v: string) => out.push(`<dt>${esc(k)}</dt><dd>${v}</dd>`);
      fact('engine', esc(r.engine));
      fact('engine version', esc(r.engine_version));
      fact('filters', esc(r.filter_strategy));
      if (r.settings.notes) fact('notes', esc(r.settings.notes));
      if (r.settings.batch_size !== undefined) fact('batch size', esc(r.settings.batch_size));
      fact('hardware', esc(hardwareText(r.hardware)));
      fact(
        'run',
        esc(
          `vecbench ${r.run.vecbench_version}, started ${r.run.started}, updated ${r.run.updated}, ${r.run.complete ? 'complete' : 'INCOMPLETE'}, query seed ${r.run.query_seed}, ${r.run.protocol ?? 'warm'} protocol${(r.run.builds ?? 1) > 1 ? `, ${r.run.builds} index builds` : ''}`,
        ),
      );
      const latencyDriven = drivenOf(r, 'latency');
      fact('driven', esc(`throughput view: ${throughputDriven(r)}${latencyDriven ? `; latency view: ${latencyDriven}` : ''}`));
      if (r.run.timing) fact('passes per point', esc(`${r.run.timing.min_passes} to ${r.run.timing.max_passes}, at least ${r.run.timing.min_seconds} s`));
      out.push(`</dl>`);
      out.push(`<h4>Index settings</h4><pre>${pretty(r.settings.index)}</pre>`);
      if (r.settings.ladders.length) out.push(`<details><summary>knob ladders</summary><pre>${pretty(r.settings.ladders)}</pre></details>`);
      const failed = r.groups.filter((g) => g.status === 'failed');
      if (failed.length)
        out.push(`<h4>Failed groups</h4><ul>${failed.map((g) => `<li>${esc(g.key)}: ${esc(g.reason ?? 'no reason recorded')}</li>`).join('')}</ul>`);
      const skipped = r.groups.flatMap((g) => g.skipped.map((s) => `${g.key} ${JSON.stringify(s.knobs)}: ${s.reason}`));
      if (skipped.length) out.push(`<h4>Points left out</h4><ul>${skipped.map((s) => `<li>${esc(s)}</li>`).join('')}</ul>`);
      if (imp) {
        const runs = isRecord(imp.runs) ? Object.keys(imp.runs).length : 0;
        const head = [imp.harness, imp.file, runs ? `${runs} run file(s)` : null, typeof imp.note === 'string' ? imp.note : null].filter(
          (x) => typeof x === 'string' && x,
        );
        out.push(
          `<h4>Imported</h4><p class="note">${esc(head.join(' — '))}</p><details><summary>what the source file recorded</summary><pre>${pretty(imp)}</pre></details>`,
        );
      }
      const readme = join(participantsDir, r.participant, 'README.md');
      if (r.origin === 'measured' && existsSync(readme)) {
        // Short READMEs are shown open; long ones fold so the cards stay side by side.
        const md = readFileSync(readme, 'utf8');
        out.push(
          `<details${md.length <= 1500 ? ' open' : ''}><summary>facts from its README (participants/${esc(r.participant)}/README.md)</summary><div class="readme">${miniMarkdown(md)}</div></details>`,
        );
      } else if (r.origin === 'measured') {
        out.push(`<p class="note">No README.md in participants/${esc(r.participant)}.</p>`);
      }
      out.push(`</article>`);
    }
    out.push(`</div>`);
  }
  out.push(`</section>`);
  return out.join('\n');
}

/** Hardware in one line, saying "not recorded" for what an imported source left out. */
function hardwareText(h: ResultFile['hardware']): string {
  const known = (v: string) => v !== '' && !v.startsWith('not recorded');
  const parts = [
    known(h.cpu) ? h.cpu : 'CPU not recorded',
    h.cores > 0 ? `${h.cores} cores` : 'cores not recorded',
    h.memory_bytes > 0 ? `${fmtBytes(h.memory_bytes)} memory` : 'memory not recorded',
  ];
  if (known(h.os)) parts.push(h.os);
  if (known(h.node)) parts.push(`node ${h.node}`);
  return parts.join(', ');
}

export function datasetSection(results: ResultFile[], datasets: string[], dataDir: string | undefined): string {
  const out: string[] = [`<section class="part" id="dataset"><h2>Dataset and hardware</h2>`];
  for (const ds of datasets) {
    const rs = results.filter((r) => r.dataset.name === ds);
    const shapes = [...new Set(rs.map((r) => JSON.stringify(r.dataset)))].map((s) => JSON.parse(s) as ResultFile['dataset']);
    out.push(`<div class="ds-block" data-ds="${esc(ds)}"><div class="cards"><article class="card"><h3>${esc(ds)}</h3><dl class="facts">`);
    const d0 = shapes[0];
    out.push(
      `<dt>rows x dim</dt><dd>${esc(`${d0.n.toLocaleString('en-US')} x ${d0.d}`)}</dd><dt>queries</dt><dd>${esc(d0.nq.toLocaleString('en-US'))}</dd><dt>metric</dt><dd>${esc(d0.metric)}</dd><dt>data hash</dt><dd><code>${esc(d0.hash)}</code></dd>`,
    );
    out.push(`</dl>`);
    if (shapes.length > 1) {
      out.push(
        `<p class="note" style="color:var(--bad)">The result files disagree about this dataset (different sizes or data hash): compare with care.</p><ul>`,
      );
      for (const s of shapes)
        out.push(
          `<li>${esc(
            rs
              .filter((r) => JSON.stringify(r.dataset) === JSON.stringify(s))
              .map((r) => r.participant)
              .join(', '),
          )}: ${esc(`${s.n} x ${s.d}, ${s.nq} queries, ${s.metric}, hash ${s.hash}`)}</li>`,
        );
      out.push(`</ul>`);
    }
    const mpath = dataDir ? join(dataDir, ds, 'manifest.json') : null;
    if (mpath && existsSync(mpath)) {
      try {
        const m = JSON.parse(readFileSync(mpath, 'utf8')) as Record<string, unknown>;
        out.push(`<h4>Manifest</h4><dl class="facts">`);
        for (const key of ['format', 'created', 'clusters', 'has_text']) if (key in m) out.push(`<dt>${esc(key)}</dt><dd>${esc(String(m[key]))}</dd>`);
        if (Array.isArray(m.langs)) out.push(`<dt>langs</dt><dd>${esc(m.langs.join(', '))}</dd>`);
        out.push(`</dl><h4>Source</h4><pre>${pretty(m.source)}</pre>`);
        if (isRecord(m.files)) {
          out.push(
            `<details><summary>files (${Object.keys(m.files).length})</summary><div class="scroll"><table><thead><tr><th>file</th><th>size</th><th>sha256</th></tr></thead><tbody>`,
          );
          for (const [f, e] of Object.entries(m.files)) {
            const entry = isRecord(e) ? e : {};
            out.push(
              `<tr><td>${esc(f)}</td><td>${esc(fmtBytes(Number(entry.bytes)))}</td><td><code>${esc(String(entry.sha256 ?? '').slice(0, 16))}…</code></td></tr>`,
            );
          }
          out.push(`</tbody></table></div></details>`);
        }
      } catch {
        out.push(`<p class="note">${esc(mpath)} is not readable JSON.</p>`);
      }
    } else {
      out.push(
        `<p class="note">The prepared dataset's manifest is not on this machine${dataDir ? ` (looked in ${esc(dataDir)})` : ''}; the figures above come from the result files.</p>`,
      );
    }
    out.push(`</article>`);
    const hw = [...new Set(rs.map((r) => JSON.stringify(r.hardware)))].map((s) => JSON.parse(s) as ResultFile['hardware']);
    out.push(`<article class="card"><h3>Hardware</h3>`);
    for (const h of hw) {
      const who = rs.filter((r) => JSON.stringify(r.hardware) === JSON.stringify(h)).map((r) => r.participant);
      out.push(`<dl class="facts"><dt>machine</dt><dd>${esc(hardwareText(h))}</dd><dt>results</dt><dd>${esc(who.join(', '))}</dd></dl>`);
    }
    out.push(`</article></div></div>`);
  }
  out.push(`</section>`);
  return out.join('\n');
}
