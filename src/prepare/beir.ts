// BEIR-format labelled corpora: DIR/corpus.jsonl ({_id, title, text} per line),
// DIR/queries.jsonl ({_id, text}) and DIR/qrels/<split>.tsv (a header, then query-id,
// corpus-id and an integer graded score per line). `vecbench prepare beir --name N --dir DIR`
// embeds them and writes the dataset `beir-N`.
import { createReadStream, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseEmbedSpec } from '../embed/provider.ts';
import { UserError } from '../util/errors.ts';
import { sha256File } from '../util/hash.ts';
import { log } from '../util/progress.ts';
import { assembleLabelled, type LabelledCorpus } from './labelled.ts';
import { isPrepared, loadDataset, writePrepared, type Dataset } from '../datasets/layout.ts';
import { whilePreparing } from '../datasets/preparing.ts';

const BEIR_PREFIX = 'beir-';

function beirDatasetName(name: string): string {
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(name)) throw new UserError(`--name ${JSON.stringify(name)}: use lower-case letters, digits, '.', '_' or '-'`);
  return name.startsWith(BEIR_PREFIX) ? name : BEIR_PREFIX + name;
}

async function* jsonLines(path: string): AsyncGenerator<{ line: number; value: Record<string, unknown> }> {
  const rl = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let line = 0;
  for await (const text of rl) {
    line++;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new UserError(`${path} line ${line} is not valid JSON; fix the file`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UserError(`${path} line ${line} is not a JSON object; fix the file`);
    yield { line, value: value as Record<string, unknown> };
  }
}

const idOf = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : null);

/** Reads a BEIR directory. qrels entries with score <= 0 are kept (judged non-relevant). */
export async function readBeir(dirArg: string, split = 'test'): Promise<LabelledCorpus> {
  const dir = resolve(dirArg);
  const files = { corpus: join(dir, 'corpus.jsonl'), queries: join(dir, 'queries.jsonl'), qrels: join(dir, 'qrels', `${split}.tsv`) };
  if (!existsSync(dir)) throw new UserError(`BEIR directory ${dir} does not exist; pass --dir with corpus.jsonl, queries.jsonl and qrels/${split}.tsv`);
  for (const f of Object.values(files))
    if (!existsSync(f))
      throw new UserError(
        `BEIR directory ${dir} lacks ${f.slice(dir.length + 1)}; a BEIR dataset holds corpus.jsonl, queries.jsonl and qrels/${split}.tsv (choose another split with --split)`,
      );

  const docs: LabelledCorpus['docs'] = [];
  const seen = new Set<string>();
  for await (const { line, value } of jsonLines(files.corpus)) {
    const id = idOf(value._id);
    if (id === null) throw new UserError(`${files.corpus} line ${line} has no "_id"; every document needs one`);
    if (seen.has(id)) throw new UserError(`${files.corpus} line ${line}: document id ${JSON.stringify(id)} appears twice; ids must be unique`);
    seen.add(id);
    const title = typeof value.title === 'string' ? value.title : '';
    const text = typeof value.text === 'string' ? value.text : '';
    if (title.trim() === '' && text.trim() === '')
      throw new UserError(`${files.corpus} line ${line}: document ${JSON.stringify(id)} has neither title nor text`);
    docs.push({ id, title, text });
  }
  const queries: LabelledCorpus['queries'] = [];
  const qseen = new Set<string>();
  for await (const { line, value } of jsonLines(files.queries)) {
    const id = idOf(value._id);
    if (id === null || typeof value.text !== 'string' || value.text.trim() === '')
      throw new UserError(`${files.queries} line ${line} needs "_id" and a non-empty "text"`);
    if (qseen.has(id)) throw new UserError(`${files.queries} line ${line}: query id ${JSON.stringify(id)} appears twice; ids must be unique`);
    qseen.add(id);
    queries.push({ id, text: value.text });
  }
  const qrels = new Map<string, Map<string, number>>();
  const rl = createInterface({ input: createReadStream(files.qrels, 'utf8'), crlfDelay: Infinity });
  let lineNo = 0;
  for await (const text of rl) {
    lineNo++;
    if (text.trim() === '') continue;
    const cols = text.trim().split(/\t|\s+/);
    if (lineNo === 1 && cols[0] === 'query-id') continue;
    if (cols.length !== 3 || !/^-?\d+$/.test(cols[2]))
      throw new UserError(`${files.qrels} line ${lineNo} is not "query-id<TAB>corpus-id<TAB>integer score"; fix the file`);
    const [qid, doc, score] = cols;
    if (!qseen.has(qid)) throw new UserError(`${files.qrels} line ${lineNo} judges query ${JSON.stringify(qid)}, which queries.jsonl does not have`);
    let m = qrels.get(qid);
    if (!m) qrels.set(qid, (m = new Map()));
    if (m.has(doc)) throw new UserError(`${files.qrels} line ${lineNo} judges document ${JSON.stringify(doc)} for query ${JSON.stringify(qid)} twice`);
    m.set(doc, Number(score));
  }
  return {
    origin: `BEIR ${dir}`,
    docs,
    queries,
    qrels,
    source: {
      generator: 'beir',
      dir,
      split,
      files: {
        'corpus.jsonl': await sha256File(files.corpus),
        'queries.jsonl': await sha256File(files.queries),
        [`qrels/${split}.tsv`]: await sha256File(files.qrels),
      },
    },
  };
}

/** Prepares beir-<name> from a BEIR directory; a second prepare is a no-op unless forced. */
export async function prepareBeir(dataDir: string, opts: { name: string; dir: string; embed?: string; split?: string; force?: boolean }): Promise<Dataset> {
  const name = beirDatasetName(opts.name);
  return whilePreparing(dataDir, name, async () => {
    if (!opts.force && isPrepared(dataDir, name)) {
      log(`${name} is already prepared; pass --force to prepare it again from ${opts.dir}`);
      return loadDataset(dataDir, name);
    }
    const embedder = parseEmbedSpec(opts.embed ?? 'glove');
    const corpus = await readBeir(opts.dir, opts.split ?? 'test');
    log(`${name}: ${corpus.docs.length} documents, ${corpus.queries.length} queries, ${corpus.qrels.size} judged`);
    return writePrepared(dataDir, name, await assembleLabelled(corpus, embedder));
  });
}

/** Registry entry: a BEIR dataset is made only by `vecbench prepare beir`; once prepared it
 * loads like any other. */
export const beirSource = {
  pattern: `${BEIR_PREFIX}<name>`,
  describe: 'a BEIR-format labelled corpus, prepared with: vecbench prepare beir --name <name> --dir DIR [--embed glove|precomputed:DIR|model:DIR]',
  size: 'any, text, labels',
  metric: 'cosine',
  origin: 'local BEIR directory',
  matches: (name: string) => name.startsWith(BEIR_PREFIX),
  make: async (name: string): Promise<never> => {
    throw new UserError(
      `dataset ${name} is not prepared; prepare it from its files first: vecbench prepare beir --name ${name.slice(BEIR_PREFIX.length)} --dir DIR`,
    );
  },
};
