// Drives one participant's adapter in this process on a small synthetic dataset and scores
// its answers against a naive exact search written here, independent of src/groundtruth.
// Participant tests use it to check the real engine end to end.
import assert from 'node:assert/strict';
import { ATTRIBUTES, type EngineSession, type FilterExpr, type Knobs, type RowAttributes, type RowBatch } from '../../src/contracts.ts';
import { generateSynthetic } from '../../src/prepare/synthetic.ts';
import { realQueryAttributes } from '../../src/datasets/real-attributes.ts';
import { hashMod } from '../../src/util/hash.ts';
import { filterKind, matchingRows, passes } from '../../src/datasets/groups.ts';
import { openEngine } from '../../src/runner/engine-lifecycle.ts';
import { ladderFor, loadParticipant, type LoadedParticipant } from '../../src/runner/participants.ts';
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

/** The synthetic set the participant tests load, with a stand-in for real attributes so every
 * adapter's translation of the label and measure filters is checked: the label is the row's
 * cluster (it agrees with the vector, as a real class does) and the measure a number hashed from
 * the id. Generated sets have no real attributes of their own. */
export function syntheticForTests(n: number, nq: number): PreparedData {
  const data = generateSynthetic(n, nq, { clusters: 10 });
  const rows = { label: data.attrs.cluster, measure: Int32Array.from({ length: n }, (_, i) => hashMod(i, 77, 5000)) };
  const queries = { label: data.queryAttrs.cluster, measure: Int32Array.from({ length: nq }, (_, q) => hashMod(q, 78, 5000)) };
  const info = { labels: Array.from({ length: 10 }, (_, c) => `cluster ${c}`), measure: 'a hash of the row id (test stand-in)' };
  return {
    ...data,
    attrs: { ...data.attrs, ...rows },
    queryAttrs: { ...data.queryAttrs, ...realQueryAttributes({ info, rows, queries }) },
    real: info,
  };
}

/** Opens a participant (by name, or one already loaded, e.g. by path) in this process, its
 * server first if it has one (src/runner/engine-lifecycle.ts, as the ceiling and the benches open
 * engines), and loads the synthetic set into it (or `opts.data`, e.g. a prepared set with its
 * ground truth). A load that fails stops the engine and removes its directory. */
export async function openOnSynthetic(
  name: string | LoadedParticipant,
  opts: { n?: number; nq?: number; maxConcurrency?: number; data?: PreparedData; settingsPath?: string } = {},
) {
  const data = opts.data ?? syntheticForTests(opts.n ?? 3000, opts.nq ?? 60);
  const p = typeof name === 'string' ? await loadParticipant(name, opts.settingsPath) : name;
  const dataset = { name: 'synthetic-test', n: data.n, d: data.d, metric: data.metric, hasText: false };
  const engine = await openEngine(p, { dataset, maxConcurrency: opts.maxConcurrency ?? 4 });
  const { session, workDir, ctx, server } = engine;
  try {
    const batch = 1000;
    for (let from = 0; from < data.n; from += batch) {
      const to = Math.min(data.n, from + batch);
      const ids = new Int32Array(to - from).map((_, i) => from + i);
      await session.ingest({ ids, vectors: data.base.slice(from * data.d, to * data.d), attrs: sliceAttrs(data.attrs, from, to) });
    }
    await session.buildIndex();
  } catch (e) {
    await engine.stop({ closeErrors: 'ignore' });
    throw e;
  }
  // An in-process engine's close is part of what its tests check: its failure is theirs; a
  // server's session at the end of a test may find its server already gone.
  const closeErrors = server ? 'ignore' : 'throw';
  /** Closes the session and stops the server, removing the directory. */
  const cleanup = () => engine.stop({ closeErrors });
  /** Closes the session and stops the server, keeping their data in workDir (for a reopen or a
   * restart); cleanup then only removes it. */
  const stopKeepingData = () => engine.stop({ keepData: true, closeErrors: 'throw' });
  return { data, participant: p, session, workDir, ctx, server, cleanup, stopKeepingData };
}

/** What checkPoint needs of an opened participant (in-process or server). */
export interface OpenedOnSynthetic {
  data: PreparedData;
  participant: LoadedParticipant;
  session: EngineSession;
}

/** Each query's filter of a filter kind and its exact top k among the base rows. */
export function truthsFor(data: PreparedData, filter: string, k: number): { f: FilterExpr | null; ids: number[] }[] {
  const kind = filterKind(filter);
  return Array.from({ length: data.nq }, (_, q) => {
    const f = kind.forQuery(q, data.queryAttrs);
    return { f, ids: naiveTopK(data, q, k, f) };
  });
}

/** Runs one ladder point of (filter, k) over the queries and scores it against `truths`. */
export async function checkPoint(
  opened: OpenedOnSynthetic,
  filter: string,
  k: number,
  knobs: Knobs,
  truths: { f: FilterExpr | null; ids: number[] }[] = truthsFor(opened.data, filter, k),
): Promise<PointCheck> {
  const { data, session } = opened;
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
  return { filter, k, knobs, recall: recallSum / data.nq, shortResults, violations, unknownOrDuplicate: bad };
}

/** Runs every ladder point of (filter, k) over the queries; returns the per-point recall. */
export async function checkLadder(opened: OpenedOnSynthetic, filter: string, k: number): Promise<PointCheck[]> {
  const truths = truthsFor(opened.data, filter, k);
  const out: PointCheck[] = [];
  for (const knobs of ladderFor(opened.participant.settings, filter, k)) out.push(await checkPoint(opened, filter, k, knobs, truths));
  return out;
}

// Checks and row builders the participant tests share.

/** What openOnSynthetic opens: the participant, its session and the data. */
export type Opened = Awaited<ReturnType<typeof openOnSynthetic>>;

/** No point returned an id that violates its filter, nor an unknown or repeated id. */
export function assertClean(points: PointCheck[]): void {
  for (const p of points) {
    assert.equal(p.violations, 0, `${p.filter}/${p.k} ${JSON.stringify(p.knobs)}: filter violations`);
    assert.equal(p.unknownOrDuplicate, 0, `${p.filter}/${p.k} ${JSON.stringify(p.knobs)}: unknown or duplicate ids`);
  }
}

/** Recall does not fall along a ladder (by more than 0.02: an approximate engine's noise). */
export function assertRising(points: PointCheck[]): void {
  for (let i = 1; i < points.length; i++) {
    assert.ok(
      points[i].recall >= points[i - 1].recall - 0.02,
      `recall falls at ${JSON.stringify(points[i].knobs)}: ${points[i - 1].recall} then ${points[i].recall}`,
    );
  }
}

/** The ladder's last point: its most exact. */
export const top = (points: PointCheck[]) => points[points.length - 1];

/** A batch of the dataset's rows `ids`, written under the ids `idsAs` when given. */
export function rowsOf(o: Opened, ids: number[], idsAs?: number[]): RowBatch {
  const { data } = o;
  const d = data.d;
  const vectors = new Float32Array(ids.length * d);
  ids.forEach((id, i) => vectors.set(data.base.subarray(id * d, (id + 1) * d), i * d));
  const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, Int32Array.from(ids, (id) => data.attrs[a][id])])) as RowAttributes;
  return { ids: Int32Array.from(idsAs ?? ids), vectors, attrs };
}

/** One base row's vector, as a copy. */
export const rowVector = (o: Opened, id: number) => o.data.base.slice(id * o.data.d, (id + 1) * o.data.d);
