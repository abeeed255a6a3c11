// Download entries: datasets that live on the internet (not reachable from every machine).
// Each downloads its files resumably with a sha256 check (download.ts), then streams them
// into the prepared layout like the local sources.
//
// wiki-v3-1024-<size>: Cohere's wikipedia-2023-11-embed-multilingual-v3 on Hugging Face
// (1024-d Embed v3 paragraph embeddings, 246,838,423 paragraphs in 323 languages, Parquet per
// language with `emb`, `title`, `text`; the language is the directory, or a `lang` column).
// `1m` and `10m` take fixed shares of 16 languages (1-17 % each, WIKI_LANGUAGES), the first
// rows of each language in file order; `full` takes every file. 10,000 queries are held out
// from 7 languages by a seeded choice among the rows taken. Files are listed with the Hub's
// tree API, whose LFS object id is the file's sha256: every file is checked against it.
//
// dbpedia-openai-1000k-angular: the ann-benchmarks HDF5 file (990,000 OpenAI ada-002
// embeddings of DBpedia entities, 1536-d, `train` / `test` / `neighbors`). ann-benchmarks
// publishes no checksum: the first download's sha256 is recorded (trust on first use).
import { join } from 'node:path';
import { UserError } from '../../util/errors.ts';
import { isSafeName, shownName } from '../../util/names.ts';
import { log } from '../../util/progress.ts';
import type { DatasetSource } from '../dataset-source.ts';
import { hdf5Info, openHdf5 } from '../../datasets/readers/hdf5.ts';
import { openParquet, type ParquetReader } from '../../datasets/readers/parquet.ts';
import { heldOutRows, readAllRows, streamRows, type InputRecord } from './common.ts';
import { download, fetchJson, type Downloaded } from './download.ts';
import { NO_LANGUAGE, PreparedWriter, withWriter } from './writer.ts';

const downloadsDir = (dataDir: string) => join(dataDir, '.downloads');

// ---------------------------------------------------------------- Hugging Face: wiki-v3-1024

export const WIKI_REPO = 'CohereLabs/wikipedia-2023-11-embed-multilingual-v3';
const WIKI_REVISION = 'main';
export const WIKI_PREFIX = 'wiki-v3-1024-';
export const WIKI_FULL_ROWS = 246_838_423;
/** Shares (percent) of the 1m / 10m sets: a spread of 1-17 % per language, as docs/method.md §2 asks. */
export const WIKI_LANGUAGES: [string, number][] = [
  ['en', 17],
  ['de', 11],
  ['fr', 10],
  ['es', 9],
  ['ru', 8],
  ['ja', 7],
  ['it', 7],
  ['zh', 6],
  ['pt', 5],
  ['pl', 4],
  ['nl', 4],
  ['ar', 4],
  ['sv', 3],
  ['ko', 2],
  ['fa', 2],
  ['hi', 1],
];
export const WIKI_QUERY_LANGUAGES = ['en', 'de', 'fr', 'es', 'ja', 'zh', 'ar'];
const WIKI_SEED = 1024;

/**
 * A download base from the environment: https, or plain http only to this machine (a local
 * mirror, the tests' stand-ins). Data fetched over plain http from elsewhere could be swapped on
 * the way, and a file without a published sha256 would be trusted as it came.
 */
export function remoteBase(variable: string, value: string | undefined, fallback: string): string {
  const base = (value ?? fallback).replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new UserError(`${variable} is not a URL (got ${shownName(base)}); give https://HOST[/PATH]`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new UserError(`${variable} must be an https:// URL (plain http only to this machine), got ${shownName(base)}`);
  return base;
}

function hfEndpoint(): string {
  const variable = process.env.VECBENCH_HF_ENDPOINT !== undefined ? 'VECBENCH_HF_ENDPOINT' : 'HF_ENDPOINT';
  return remoteBase(variable, process.env.VECBENCH_HF_ENDPOINT ?? process.env.HF_ENDPOINT, 'https://huggingface.co');
}

interface HfEntry {
  type: string;
  path: string;
  size: number;
  lfs?: { oid: string; size: number };
}

/** The Hub's file listing of a directory (all pages). */
async function hfTree(repo: string, revision: string, path: string, recursive: boolean): Promise<HfEntry[]> {
  const out: HfEntry[] = [];
  let url: string | null = `${hfEndpoint()}/api/datasets/${repo}/tree/${revision}${path ? `/${path}` : ''}${recursive ? '?recursive=true' : ''}`;
  while (url) {
    const { body, next } = await fetchJson(url);
    if (!Array.isArray(body)) throw new UserError(`${url} did not answer a file list; the Hub API changed: report it`);
    out.push(...(body as HfEntry[]));
    url = next;
  }
  return out;
}

/** Parses `wiki-v3-1024-1m`, `-10m`, `-full`, or any `-<N>[k|m]` (smaller sets, for tests). */
export function parseWikiName(name: string): { n: number | 'full'; nq: number } | null {
  if (!name.startsWith(WIKI_PREFIX)) return null;
  const rest = name.slice(WIKI_PREFIX.length);
  if (rest === 'full') return { n: 'full', nq: 10_000 };
  const m = /^(\d+)(k|m)?$/.exec(rest);
  if (!m) return null;
  const n = Number(m[1]) * (m[2] === 'k' ? 1000 : m[2] === 'm' ? 1_000_000 : 1);
  if (n < 100) throw new UserError(`dataset ${name}: needs at least 100 rows; try ${WIKI_PREFIX}1m`);
  return { n, nq: Math.min(10_000, Math.max(WIKI_QUERY_LANGUAGES.length, Math.round(n / 100))) };
}

/** Splits `total` by percentage shares, exactly (largest remainder). */
export function splitByShares(total: number, shares: number[]): number[] {
  const sum = shares.reduce((a, b) => a + b, 0);
  const exact = shares.map((s) => (total * s) / sum);
  const out = exact.map(Math.floor);
  let left = total - out.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let i = 0; left > 0; i = (i + 1) % order.length, left--) out[order[i][1]]++;
  return out;
}

interface LangPlan {
  lang: string;
  /** Rows taken from this language (base + held-out queries), from its first file on. */
  take: number;
  queries: number;
  files: Downloaded[];
  fileRows: number[];
}

async function wikiFiles(lang: string): Promise<HfEntry[]> {
  const entries = await hfTree(WIKI_REPO, WIKI_REVISION, lang, true);
  const files = entries.filter((e) => e.type === 'file' && e.path.endsWith('.parquet')).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // The listing is input from the network: its paths become file names under the downloads
  // directory, so each must be the language's directory and plain names (no '..', nothing
  // absolute), and its hash, when given, a sha256.
  for (const e of files) {
    if (!e.path.startsWith(`${lang}/`) || !e.path.split('/').every(isSafeName))
      throw new UserError(
        `${WIKI_REPO}'s listing names the file ${shownName(e.path)}, not a plain path under ${lang}/; the listing is not the Hub's: check VECBENCH_HF_ENDPOINT`,
      );
    if (e.lfs !== undefined && !/^[0-9a-f]{64}$/.test(String(e.lfs.oid)))
      throw new UserError(
        `${WIKI_REPO}'s listing gives ${shownName(e.path)} the hash ${shownName(String(e.lfs.oid))}, not a sha256; the listing is not the Hub's: check VECBENCH_HF_ENDPOINT`,
      );
  }
  if (files.length === 0) throw new UserError(`${WIKI_REPO} has no Parquet files for language "${lang}"; the repository layout changed: report it`);
  return files;
}

async function fetchWikiFile(dataDir: string, entry: HfEntry, quiet?: boolean): Promise<Downloaded> {
  return download(
    {
      url: `${hfEndpoint()}/datasets/${WIKI_REPO}/resolve/${WIKI_REVISION}/${entry.path}`,
      path: join(downloadsDir(dataDir), 'hf', WIKI_REPO, entry.path),
      sha256: entry.lfs?.oid,
      bytes: entry.lfs?.size ?? entry.size,
    },
    { quiet },
  );
}

async function parquetRows(path: string): Promise<number> {
  const r = await openParquet(path);
  await r.close();
  return r.rows;
}

/** Downloads (resumably) the files each language needs and fixes its row counts. */
async function planWiki(dataDir: string, n: number | 'full', nq: number, quiet?: boolean): Promise<LangPlan[]> {
  let langs: string[];
  let quotas: number[];
  if (n === 'full') {
    const root = await hfTree(WIKI_REPO, WIKI_REVISION, '', false);
    langs = root
      .filter((e) => e.type === 'directory')
      .map((e) => e.path)
      .sort();
    quotas = langs.map(() => Infinity);
  } else {
    langs = WIKI_LANGUAGES.map(([l]) => l);
    quotas = splitByShares(
      n,
      WIKI_LANGUAGES.map(([, s]) => s),
    );
  }
  const qsplit = splitByShares(
    nq,
    WIKI_QUERY_LANGUAGES.map(() => 1),
  );
  const plans: LangPlan[] = [];
  for (let i = 0; i < langs.length; i++) {
    const lang = langs[i];
    const qi = WIKI_QUERY_LANGUAGES.indexOf(lang);
    const queries = qi >= 0 ? qsplit[qi] : 0;
    const want = quotas[i] + queries;
    const plan: LangPlan = { lang, take: 0, queries, files: [], fileRows: [] };
    let have = 0;
    for (const entry of await wikiFiles(lang)) {
      if (have >= want) break;
      const file = await fetchWikiFile(dataDir, entry, quiet);
      const rows = await parquetRows(file.path);
      plan.files.push(file);
      plan.fileRows.push(rows);
      have += rows;
    }
    if (n !== 'full' && have < want) throw new UserError(`${WIKI_REPO} has only ${have} rows for "${lang}", ${want} needed; the repository changed: report it`);
    plan.take = Math.min(have, want);
    if (plan.take <= queries) throw new UserError(`${WIKI_REPO}: language "${lang}" has ${plan.take} rows, too few for its ${queries} queries`);
    plans.push(plan);
  }
  return plans;
}

async function prepareWiki(dataDir: string, name: string, quiet?: boolean) {
  const parsed = parseWikiName(name)!;
  log(`${name}: listing and downloading ${WIKI_REPO} (resumable; files are kept in ${downloadsDir(dataDir)})`);
  const plans = await planWiki(dataDir, parsed.n, parsed.nq, quiet);
  const nq = plans.reduce((a, p) => a + p.queries, 0);
  const baseRows = plans.reduce((a, p) => a + p.take - p.queries, 0);
  const first = await openParquet(plans[0].files[0].path);
  const d = first.dim;
  const hasText = first.columns.includes('text');
  const hasLangColumn = first.columns.includes('lang');
  await first.close();
  const langIndex = new Map<string, number>(plans.map((p, i) => [p.lang, i]));
  const langs = plans.map((p) => p.lang);
  const codeOf = (l: string) => {
    let c = langIndex.get(l);
    if (c === undefined) {
      c = langs.length;
      langs.push(l);
      langIndex.set(l, c);
    }
    return c;
  };
  const writer = new PreparedWriter({ dataDir, name, d, metric: 'cosine', rows: baseRows, hasText, quiet });
  return withWriter(writer, async (w) => {
    const queries = new Float32Array(nq * d);
    const queryLang = new Int32Array(nq);
    let q = 0;
    for (const [pi, plan] of plans.entries()) {
      // Held-out rows are chosen among the rows taken from this language.
      const held = plan.queries > 0 ? heldOutRows(plan.take, plan.queries, WIKI_SEED + pi) : new Int32Array(0);
      let offset = 0;
      for (const [fi, file] of plan.files.entries()) {
        if (offset >= plan.take) break;
        const limit = Math.min(plan.fileRows[fi], plan.take - offset);
        const reader: ParquetReader = await openParquet(file.path);
        try {
          if (reader.dim !== d)
            throw new UserError(
              `${reader.label}: ${reader.dim}-d vectors, the first file has ${d}-d; the download is inconsistent: delete ${downloadsDir(dataDir)} and prepare again`,
            );
          const local = held.filter((r) => r >= offset && r < offset + limit).map((r) => r - offset);
          const r = await streamRows(reader, w, {
            metric: 'cosine',
            heldOut: local,
            limit,
            langOf: async (from, count) => {
              if (!hasLangColumn) return new Int32Array(count).fill(langIndex.get(plan.lang)!);
              const v = await reader.readStrings('lang', from, count);
              return Int32Array.from(v, (x) => codeOf(x ?? plan.lang));
            },
            textOf: hasText
              ? async (from, count) => {
                  const text = await reader.readStrings('text', from, count);
                  const title = reader.columns.includes('title') ? await reader.readStrings('title', from, count) : null;
                  return text.map((t, i) => (title?.[i] ? `${title[i]}\n${t ?? ''}` : (t ?? '')));
                }
              : undefined,
          });
          queries.set(r.queries, q * d);
          queryLang.set(r.queryLang, q);
          q += local.length;
        } finally {
          await reader.close();
        }
        offset += limit;
      }
    }
    if (q !== nq) throw new Error(`wiki: ${q} queries collected, ${nq} planned`);
    w.setQueries(queries, nq, queryLang);
    const inputs: (InputRecord & { url: string; check: string })[] = plans.flatMap((p) =>
      p.files.map((f) => ({ path: f.path, url: f.url, bytes: f.bytes, sha256: f.sha256, check: f.check })),
    );
    return w.finish({
      langs,
      source: {
        kind: 'huggingface',
        repo: WIKI_REPO,
        revision: WIKI_REVISION,
        size: parsed.n,
        inputs,
        languages: parsed.n === 'full' ? 'all' : Object.fromEntries(WIKI_LANGUAGES),
        queries: `${nq} rows held out from ${WIKI_QUERY_LANGUAGES.join(', ')} by a seeded choice (seed ${WIKI_SEED} + language), removed from the base set`,
        lang: hasLangColumn ? "the files' lang column" : 'the language directory of each file',
        text: hasText ? 'title + newline + text' : 'none',
      },
    });
  });
}

export const wikiSource: DatasetSource = {
  pattern: `${WIKI_PREFIX}{1m,10m,full}`,
  describe: `Cohere Embed v3 multilingual Wikipedia paragraphs (huggingface.co/datasets/${WIKI_REPO}); 1m/10m: 16 languages at fixed shares; full: all 323; 10,000 queries held out from 7 languages; download`,
  size: '1m: 1,000,000 x 1024 / 10m: 10,000,000 x 1024 / full: 246,828,423 x 1024; 10,000 queries; text',
  metric: 'cosine',
  origin: `download: ${hfEndpoint()}/datasets/${WIKI_REPO} (sha256 from the Hub)`,
  matches: (name) => parseWikiName(name) !== null,
  prepare: (dataDir, name, opts) => prepareWiki(dataDir, name, opts?.quiet),
};

// ---------------------------------------------------------------- ann-benchmarks: dbpedia

const DBPEDIA_NAME = 'dbpedia-openai-1000k-angular';

// ann-benchmarks publishes no sha256 of its files, and this project's machines cannot reach the
// site to record one: the first download's sha256 is kept (and checked on every later prepare),
// over https so that nothing between can swap the file.
function annBenchmarksUrl(): string {
  return remoteBase('VECBENCH_ANN_BENCHMARKS_URL', process.env.VECBENCH_ANN_BENCHMARKS_URL, 'https://ann-benchmarks.com');
}

async function prepareDbpedia(dataDir: string, name: string, quiet?: boolean) {
  const file = await download(
    { url: `${annBenchmarksUrl()}/${DBPEDIA_NAME}.hdf5`, path: join(downloadsDir(dataDir), 'ann-benchmarks', `${DBPEDIA_NAME}.hdf5`) },
    { quiet },
  );
  const info = await hdf5Info(file.path);
  if (info.metric !== null && info.metric !== 'cosine')
    throw new UserError(`${file.path}: its distance is "${info.distance}", expected angular; the file changed upstream: report it`);
  const base = await openHdf5(file.path, 'train');
  const test = await openHdf5(file.path, 'test');
  try {
    if (test.dim !== base.dim)
      throw new UserError(`${file.path}: test is ${test.dim}-d, train ${base.dim}-d; the file is corrupt: delete it and prepare again`);
    const writer = new PreparedWriter({ dataDir, name, d: base.dim, metric: 'cosine', rows: base.rows, quiet });
    return await withWriter(writer, async (w) => {
      await streamRows(base, w, { metric: 'cosine' });
      w.setQueries(await readAllRows(test, 'cosine'), test.rows, new Int32Array(test.rows).fill(NO_LANGUAGE));
      return w.finish({
        langs: ['en'],
        source: {
          kind: 'ann-benchmarks',
          inputs: [{ path: file.path, url: file.url, bytes: file.bytes, sha256: file.sha256, check: file.check }],
          checksum: file.check === 'pinned' ? 'published sha256' : 'ann-benchmarks publishes none: sha256 recorded at the first download',
          queries: "the file's `test` rows (held out by ann-benchmarks)",
          lang: 'one language (English): queries carry none, so the lang/otherlang groups are not asked',
        },
      });
    });
  } finally {
    await base.close();
    await test.close();
  }
}

export const dbpediaSource: DatasetSource = {
  pattern: DBPEDIA_NAME,
  describe: 'OpenAI ada-002 embeddings of DBpedia entities, the ann-benchmarks HDF5 file (train / test / neighbors); download',
  size: '990,000 x 1536, 10,000 queries',
  metric: 'cosine',
  origin: `download: ${annBenchmarksUrl()}/${DBPEDIA_NAME}.hdf5`,
  matches: (name) => name === DBPEDIA_NAME,
  prepare: (dataDir, name, opts) => prepareDbpedia(dataDir, name, opts?.quiet),
};
