// Drives one participant's adapter in this process on a small synthetic dataset and scores
// its answers against a naive exact search written here, independent of src/groundtruth.
// Participant tests use it to check the real engine end to end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineSession, FilterExpr, Knobs, RowAttributes } from '../../src/contracts.ts';
import { generateSynthetic } from '../../src/datasets/synthetic.ts';
import { filterKind, matchingRows, passes } from '../../src/datasets/groups.ts';
import { ladderFor, loadParticipant } from '../../src/runner/participants.ts';
import type { PreparedData } from '../../src/datasets/layout.ts';

export interface PointCheck {
  filter: string;
  k: number;
  knobs: Knobs;
  recall: number;
  shortResults: number;
  violations: number;
  unknownOrDuplicate: number;
}

function naiveTopK(data: PreparedData, q: number, k: number, filter: FilterExpr | null): number[] {
  const { d, base, queries } = data;
  const rows = matchingRows(filter, data.attrs, data.n);
  const scored: [number, number][] = [];
  for (const r of rows) {
    let s = 0;
    if (data.metric === 'l2') {
      for (let j = 0; j < d; j++) {
        const t = base[r * d + j] - queries[q * d + j];
        s += t * t;
      }
    } else {
      for (let j = 0; j < d; j++) s -= base[r * d + j] * queries[q * d + j];
    }
    scored.push([s, r]);
  }
  scored.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return scored.slice(0, k).map((x) => x[1]);
}

function sliceAttrs(attrs: RowAttributes, from: number, to: number): RowAttributes {
  return Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k, v.slice(from, to)])) as RowAttributes;
}

export async function openOnSynthetic(name: string, opts: { n?: number; nq?: number; maxConcurrency?: number } = {}) {
  const data = generateSynthetic(opts.n ?? 3000, opts.nq ?? 60, { clusters: 10 });
  const p = await loadParticipant(name);
  const workDir = mkdtempSync(join(tmpdir(), `vecbench-${name}-`));
  const session: EngineSession = await p.adapter.open({
    dataset: { name: 'synthetic-test', n: data.n, d: data.d, metric: data.metric, hasText: false },
    settings: p.index,
    workDir,
    maxConcurrency: opts.maxConcurrency ?? 4,
    log: () => {},
  });
  const batch = 1000;
  for (let from = 0; from < data.n; from += batch) {
    const to = Math.min(data.n, from + batch);
    const ids = new Int32Array(to - from).map((_, i) => from + i);
    await session.ingest({ ids, vectors: data.base.slice(from * data.d, to * data.d), attrs: sliceAttrs(data.attrs, from, to) });
  }
  await session.buildIndex();
  const cleanup = async () => {
    await session.close();
    rmSync(workDir, { recursive: true, force: true });
  };
  return { data, participant: p, session, workDir, cleanup };
}

/** Runs every ladder point of (filter, k) over the queries; returns the per-point recall. */
export async function checkLadder(
  opened: Awaited<ReturnType<typeof openOnSynthetic>>,
  filter: string,
  k: number,
): Promise<PointCheck[]> {
  const { data, participant, session } = opened;
  const kind = filterKind(filter);
  const out: PointCheck[] = [];
  const truths = Array.from({ length: data.nq }, (_, q) => {
    const f = kind.forQuery(q, data.queryAttrs);
    return { f, ids: naiveTopK(data, q, k, f) };
  });
  for (const knobs of ladderFor(participant.settings, filter, k)) {
    await session.setKnobs(knobs);
    let recallSum = 0;
    let shortResults = 0;
    let violations = 0;
    let bad = 0;
    for (let q = 0; q < data.nq; q++) {
      const { f, ids: truth } = truths[q];
      const got = Array.from(await session.search({ vector: data.queries.slice(q * data.d, (q + 1) * data.d), k, filter: f }));
      const seen = new Set<number>();
      let hit = 0;
      const want = new Set(truth);
      for (const id of got.slice(0, k)) {
        if (!Number.isInteger(id) || id < 0 || id >= data.n || seen.has(id)) {
          bad++;
          continue;
        }
        seen.add(id);
        if (!passes(f, data.attrs, id)) {
          violations++;
          continue;
        }
        if (want.has(id)) hit++;
      }
      if (got.length < truth.length) shortResults++;
      recallSum += truth.length === 0 ? 1 : hit / truth.length;
    }
    out.push({ filter, k, knobs, recall: recallSum / data.nq, shortResults, violations, unknownOrDuplicate: bad });
  }
  return out;
}
