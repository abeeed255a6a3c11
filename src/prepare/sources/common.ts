// Shared steps of the real-data sources: choosing held-out queries, streaming a reader into
// the prepared layout, hashing inputs, finding files that npm or Debian packages ship.
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type { Metric } from '../../contracts.ts';
import { UserError } from '../../util/errors.ts';
import { makeRng, sha256File } from '../../util/hash.ts';
import { log } from '../../util/progress.ts';
import type { MatrixReader } from '../../datasets/readers/common.ts';
import { checkAndNormalise, type PreparedWriter } from './writer.ts';
import { yieldToSignals } from '../../util/at-exit.ts';

/** Rows per streamed block: about 16 MB of float32, whatever the dimension. */
export function blockRowsFor(d: number): number {
  return Math.max(256, Math.floor((16 << 20) / (4 * d)));
}

/** A seeded choice of `count` distinct rows of [0, n), ascending (Floyd's algorithm: memory
 * is O(count), not O(n)). The same (n, count, seed) always gives the same rows. */
export function heldOutRows(n: number, count: number, seed: number): Int32Array {
  if (count > n) throw new Error(`cannot hold out ${count} of ${n} rows`);
  const rng = makeRng(seed);
  const chosen = new Set<number>();
  for (let j = n - count; j < n; j++) {
    const t = Math.floor(rng.uniform() * (j + 1));
    chosen.add(chosen.has(t) ? j : t);
  }
  return Int32Array.from(chosen).sort();
}

export interface InputRecord {
  path: string;
  bytes: number;
  sha256: string;
}

/** sha256 of each input file, for the manifest's `source.inputs`. */
export async function hashInputs(paths: string[], known: Record<string, string> = {}): Promise<InputRecord[]> {
  const out: InputRecord[] = [];
  for (const p of paths) {
    const abs = resolve(p);
    const bytes = statSync(abs).size;
    if (bytes > 256 << 20) log(`hashing ${abs} (${(bytes / 2 ** 20).toFixed(0)} MB) for the manifest ...`);
    out.push({ path: abs, bytes, sha256: known[abs] ?? (await sha256File(abs)) });
  }
  return out;
}

/** Checks an input against the sha256 vecbench pinned for it. */
export function checkPinned(record: InputRecord, expected: string, fix: string): void {
  if (record.sha256 !== expected) {
    throw new UserError(
      `${record.path}: sha256 ${record.sha256.slice(0, 12)}... is not the pinned ${expected.slice(0, 12)}... (corrupt or a different version); ${fix}`,
    );
  }
}

/** Finds a file inside an installed npm package. */
export function packageFile(pkg: string, file: string, installHint: string): string {
  const require = createRequire(import.meta.url);
  let root: string;
  try {
    root = dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new UserError(`the npm package ${pkg} is not installed; ${installHint}`);
  }
  const path = join(root, file);
  if (!existsSync(path)) throw new UserError(`${path} is missing from the npm package ${pkg}; reinstall it (${installHint})`);
  return path;
}

interface StreamOptions {
  metric: Metric;
  /** Rows of the reader that become queries instead of base rows (ascending). */
  heldOut?: Int32Array;
  /** Language code of each row in [from, from + count). Default: all 0. */
  langOf?: (from: number, count: number) => Promise<Int32Array>;
  /** Text of each row in [from, from + count), when the dataset has text. */
  textOf?: (from: number, count: number) => Promise<(string | null)[]>;
  /** Read only the first `limit` rows of the reader. */
  limit?: number;
}

/** Streams every row of `reader` into the writer's base set, except held-out rows, which are
 * returned as the queries (with their languages). Rows are checked (finite; no zero vector
 * under cosine) and, for cosine, normalised on the way. */
export async function streamRows(reader: MatrixReader, writer: PreparedWriter, o: StreamOptions): Promise<{ queries: Float32Array; queryLang: Int32Array }> {
  const d = reader.dim;
  const held = o.heldOut ?? new Int32Array(0);
  const queries = new Float32Array(held.length * d);
  const queryLang = new Int32Array(held.length);
  let h = 0;
  const block = blockRowsFor(d);
  const end = Math.min(reader.rows, o.limit ?? reader.rows);
  for (let from = 0; from < end; from += block) {
    const count = Math.min(block, end - from);
    const v = await reader.readFloats(from, count);
    checkAndNormalise(v, count, d, o.metric, reader.label, from);
    const lang = o.langOf ? await o.langOf(from, count) : new Int32Array(count);
    const text = o.textOf ? await o.textOf(from, count) : undefined;
    if (h < held.length && held[h] < from + count) {
      // Split the block: held-out rows become queries, the rest stay in order.
      const keep: number[] = [];
      for (let i = 0; i < count; i++) {
        if (h < held.length && held[h] === from + i) {
          queries.set(v.subarray(i * d, i * d + d), h * d);
          queryLang[h] = lang[i];
          h++;
        } else keep.push(i);
      }
      const kv = new Float32Array(keep.length * d);
      const kl = new Int32Array(keep.length);
      keep.forEach((i, j) => {
        kv.set(v.subarray(i * d, i * d + d), j * d);
        kl[j] = lang[i];
      });
      writer.appendBase(kv, keep.length, kl, text ? keep.map((i) => text[i]) : undefined);
    } else {
      writer.appendBase(v, count, lang, text);
    }
    await yieldToSignals();
  }
  if (h !== held.length) throw new Error(`streamRows: ${held.length - h} held-out rows lie beyond row ${end}`);
  return { queries, queryLang };
}

/** Reads a whole (query-sized) matrix, checked and normalised. */
export async function readAllRows(reader: MatrixReader, metric: Metric): Promise<Float32Array> {
  const out = new Float32Array(reader.rows * reader.dim);
  const block = blockRowsFor(reader.dim);
  for (let from = 0; from < reader.rows; from += block) {
    const count = Math.min(block, reader.rows - from);
    const v = await reader.readFloats(from, count);
    checkAndNormalise(v, count, reader.dim, metric, reader.label, from);
    out.set(v, from * reader.dim);
  }
  return out;
}
