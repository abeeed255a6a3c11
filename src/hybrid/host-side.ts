// The quality run inside a participant's host process: the dense, keyword and fused arms of
// every labelled query, timed beside the engine like any point. The keyword arm is the
// engine's own keywordSearch where it has one, else client-side BM25 over the dataset text;
// the fused arm is the engine's hybridSearch where it has one (one round trip), else both arms
// issued together and fused here with reciprocal rank fusion (two round trips).
import { packIds, timedLoop } from '../runner/timed-loop.ts';
import type { EngineSession } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import { rrfFuse } from '../metrics/quality.ts';
import type { PointReply } from '../runner/point-reply.ts';
import { hostFeature } from '../runner/feature.ts';
import { Bm25Index, bm25Description } from './bm25.ts';
import type { QualityHostReply, QualityHostRequest } from './protocol.ts';

let bm25: Bm25Index | null = null;

type KeywordFn = (text: string, k: number) => Promise<ArrayLike<number>>;

function keywordArm(session: EngineSession): KeywordFn {
  if (session.keywordSearch) return (text, k) => session.keywordSearch!(text, k, null);
  return async (text, k) => bm25!.search(text, k);
}

async function handleQuality(session: EngineSession, ds: Dataset, concurrent: boolean, req: QualityHostRequest): Promise<QualityHostReply> {
  if (!ds.labels || !ds.text) return { type: 'quality-setup', keyword: null, fusion: null, reason: `dataset ${ds.name} has no relevance labels or no text` };
  if (req.type === 'quality-setup') {
    let keyword;
    if (session.keywordSearch) {
      keyword = { where: 'native' as const, scoring: req.keywordScoring ?? 'the engine did not say how it ranks (Participant.keywordScoring)', build_s: 0 };
    } else {
      const t0 = performance.now();
      bm25 ??= new Bm25Index(ds.text);
      keyword = { where: 'client-side' as const, scoring: bm25Description(), build_s: (performance.now() - t0) / 1000 };
    }
    const fusion = session.hybridSearch
      ? { where: 'native' as const, method: req.fusionMethod ?? 'the engine did not say how it fuses (Participant.fusionMethod)' }
      : { where: 'client-side' as const, method: 'reciprocal rank fusion, k = 60, of the dense and keyword top-k' };
    return { type: 'quality-setup', keyword, fusion, reason: null };
  }
  const { arm, k, queries } = req;
  if (req.knobs) await session.setKnobs(req.knobs);
  const texts = ds.labels.queryText;
  const vec = (q: number) => ds.queries.slice(q * ds.d, (q + 1) * ds.d);
  const keyword = keywordArm(session);
  let roundTrips: number;
  let ask: (q: number) => Promise<ArrayLike<number>>;
  if (arm === 'dense') {
    roundTrips = 1;
    ask = (q) => session.search({ vector: vec(q), k, filter: null });
  } else if (arm === 'keyword') {
    roundTrips = 1;
    ask = (q) => keyword(texts[q], k);
  } else if (session.hybridSearch) {
    roundTrips = 1;
    ask = (q) => session.hybridSearch!({ vector: vec(q), k, filter: null }, texts[q]);
  } else {
    roundTrips = 2;
    ask = async (q) => {
      const [dense, kw] = await Promise.all([session.search({ vector: vec(q), k, filter: null }), keyword(texts[q], k)]);
      return rrfFuse([dense, kw], k);
    };
  }
  return { type: 'quality-arm', reply: await timeQueries(queries, ask, concurrent ? req.clients : 1), roundTrips };
}

/** Runs every query once with `clients` in flight, timing each beside the engine. */
async function timeQueries(queries: number[], ask: (q: number) => Promise<ArrayLike<number>>, clients: number): Promise<PointReply> {
  const { results, latenciesMs, errors, wallS } = await timedLoop((i) => ask(queries[i]), queries.length, clients);
  const offsets = new Int32Array(queries.length + 1);
  return { ids: packIds(results, offsets, true), offsets, latenciesMs, wallS, errors };
}

/** Answer quality's messages in the participant host. */
export const qualityHost = hostFeature<QualityHostRequest>('quality', { 'quality-setup': true, 'quality-arm': true }, (state, req) =>
  handleQuality(state.session!, state.dataset!, state.concurrent, req),
);
