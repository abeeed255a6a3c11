import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { prepareBeir, readBeir } from '../../src/prepare/beir.ts';
import { loadDataset } from '../../src/datasets/layout.ts';
import { parseEmbedSpec } from '../../src/embed/provider.ts';
import { checkModelDir } from '../../src/embed/transformer.ts';
import { UserError } from '../../src/util/errors.ts';

const root = mkdtempSync(join(tmpdir(), 'vecbench-beir-'));
after(() => rmSync(root, { recursive: true, force: true }));

// A tiny BEIR corpus about animals and machines; 8-d vectors made by hand: a topic direction
// plus a small per-document offset, so "dense" search has a right answer.
const TOPICS = ['cat', 'dog', 'bird', 'fish', 'car', 'train', 'plane', 'ship'];
const docs = Array.from({ length: 40 }, (_, i) => ({
  _id: `d${i}`,
  title: `${TOPICS[i % 8]} note ${i}`,
  text: `all about the ${TOPICS[i % 8]} number ${i} and its habits`,
}));
const queries = [
  { _id: 'q0', text: 'cat habits' },
  { _id: 'q1', text: 'dog number 9' },
  { _id: 'q2', text: 'ship facts' },
  { _id: 'q3', text: 'never judged' },
  // Seven more, each the exact twin of one document (a run needs at least 10 queries).
  ...Array.from({ length: 7 }, (_, t) => ({ _id: `q${4 + t}`, text: `${TOPICS[t]} number ${t}` })),
];
const QRELS = [
  'query-id\tcorpus-id\tscore',
  'q0\td0\t2',
  'q0\td8\t1',
  'q0\td16\t0',
  'q1\td9\t2',
  'q1\td1\t1',
  'q2\td7\t1',
  'q2\tgone\t2',
  ...Array.from({ length: 7 }, (_, t) => `q${4 + t}\td${t}\t1`),
  '',
].join('\n');

function vec(topic: number, jitter: number): number[] {
  const v = new Array(8).fill(0.01 * jitter);
  v[topic] = 1;
  return v;
}

function writeBeir(dir: string, opts: { qrels?: string; corpusExtra?: string } = {}): void {
  mkdirSync(join(dir, 'qrels'), { recursive: true });
  writeFileSync(join(dir, 'corpus.jsonl'), `${docs.map((d) => JSON.stringify(d)).join('\n')}\n${opts.corpusExtra ?? ''}`);
  writeFileSync(join(dir, 'queries.jsonl'), `${queries.map((q) => JSON.stringify(q)).join('\n')}\n`);
  writeFileSync(join(dir, 'qrels', 'test.tsv'), opts.qrels ?? QRELS);
}

function writeVectors(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'corpus.jsonl'), `${docs.map((d, i) => JSON.stringify({ _id: d._id, vector: vec(i % 8, i) })).join('\n')}\n`);
  const qv: Record<string, number[]> = { q0: vec(0, 0), q1: vec(1, 9), q2: vec(7, 0), q3: vec(3, 0) };
  for (let t = 0; t < 7; t++) qv[`q${4 + t}`] = vec(t, t);
  writeFileSync(
    join(dir, 'queries.jsonl'),
    `${Object.entries(qv)
      .map(([id, v]) => JSON.stringify({ _id: id, embedding: v }))
      .join('\n')}\n`,
  );
}

const beirDir = join(root, 'tiny');
const vecDir = join(root, 'vectors');
writeBeir(beirDir);
writeVectors(vecDir);

test('readBeir: documents, judged queries and graded qrels', async () => {
  const c = await readBeir(beirDir);
  assert.equal(c.docs.length, 40);
  assert.deepEqual(c.docs[3], { id: 'd3', title: 'fish note 3', text: 'all about the fish number 3 and its habits' });
  assert.equal(c.queries.length, 11);
  assert.deepEqual(
    [...c.qrels.get('q0')!],
    [
      ['d0', 2],
      ['d8', 1],
      ['d16', 0],
    ],
  );
  assert.equal(c.qrels.has('q3'), false);
});

test('prepare beir with precomputed vectors: layout, labels and vectors round-trip', async () => {
  const data = join(root, 'data');
  const ds = await prepareBeir(data, { name: 'tiny', dir: beirDir, embed: `precomputed:${vecDir}` });
  assert.equal(ds.name, 'beir-tiny');
  const back = await loadDataset(data, 'beir-tiny');
  assert.equal(back.n, 40);
  assert.equal(back.d, 8);
  // q3 has no judgements and is left out.
  assert.equal(back.nq, 10);
  assert.equal(back.metric, 'cosine');
  assert.deepEqual(back.labels!.queryIds.slice(0, 4), ['q0', 'q1', 'q2', 'q4']);
  assert.deepEqual(back.labels!.queryText.slice(0, 4), ['cat habits', 'dog number 9', 'ship facts', 'cat number 0']);
  assert.equal(back.labels!.docIds[17], 'd17');
  // A judged document the corpus lacks stays in the qrels (it counts in the ideal nDCG).
  assert.deepEqual(
    [...back.labels!.qrels.get(2)!],
    [
      ['d7', 1],
      ['gone', 2],
    ],
  );
  assert.deepEqual(
    [...back.labels!.qrels.get(0)!],
    [
      ['d0', 2],
      ['d8', 1],
      ['d16', 0],
    ],
  );
  assert.equal(back.text![5], 'train note 5\nall about the train number 5 and its habits');
  // Vectors are the given ones scaled to unit length.
  const raw = vec(5 % 8, 5);
  const norm = Math.hypot(...raw);
  for (let j = 0; j < 8; j++) assert.ok(Math.abs(back.base[5 * 8 + j] - raw[j] / norm) < 1e-6);
  assert.equal(back.manifest.has_labels, true);
  assert.ok(back.manifest.files['qrels.tsv'] && back.manifest.files['queries.text.jsonl'] && back.manifest.files['base.ids.jsonl']);
  // A changed label file is caught by the manifest's sha256.
  const qrelsPath = join(data, 'beir-tiny', 'qrels.tsv');
  writeFileSync(qrelsPath, readFileSync(qrelsPath, 'utf8').replace('d0\t2', 'd0\t3'));
  await assert.rejects(loadDataset(data, 'beir-tiny'), (e: Error) => e instanceof UserError && /qrels\.tsv does not match the sha256/.test(e.message));
});

test('bad BEIR input: one clear error naming the file and the fix', async () => {
  const bad = join(root, 'bad');
  writeBeir(bad, { corpusExtra: '{"_id": "x", "text": \n' });
  await assert.rejects(readBeir(bad), /corpus\.jsonl line 41 is not valid JSON/);
  writeBeir(bad, { qrels: 'query-id\tcorpus-id\tscore\nq99\td1\t1\n' });
  await assert.rejects(readBeir(bad), /judges query "q99", which queries\.jsonl does not have/);
  writeBeir(bad, { qrels: 'query-id\tcorpus-id\tscore\nq0\td1\thigh\n' });
  await assert.rejects(readBeir(bad), /test\.tsv line 2 is not "query-id<TAB>corpus-id<TAB>integer score"/);
  await assert.rejects(readBeir(bad, 'dev'), (e: Error) => e instanceof UserError && /lacks qrels\/dev\.tsv/.test(e.message));
  await assert.rejects(readBeir(join(root, 'nowhere')), /does not exist/);
});

function fvecs(rows: number[][]): Buffer {
  const parts = rows.map((r) => {
    const b = Buffer.alloc(4 + 4 * r.length);
    b.writeInt32LE(r.length, 0);
    r.forEach((x, j) => b.writeFloatLE(x, 4 + 4 * j));
    return b;
  });
  return Buffer.concat(parts);
}

test('precomputed vectors in a matrix format with an ids file, matched by id not by order', async () => {
  const dir = join(root, 'matrix');
  mkdirSync(dir, { recursive: true });
  // Rows deliberately in another order than the ids are asked in.
  writeFileSync(
    join(dir, 'corpus.fvecs'),
    fvecs([
      [0, 3, 4],
      [1, 0, 0],
      [0, 0, 2],
    ]),
  );
  writeFileSync(join(dir, 'corpus.ids.txt'), 'b\na\nc\n');
  writeFileSync(join(dir, 'queries.fvecs'), fvecs([[0, 0, 5]]));
  writeFileSync(join(dir, 'queries.ids.txt'), 'q\n');
  const e = parseEmbedSpec(`precomputed:${dir}`);
  const got = await e.embed({ ids: ['a', 'b', 'c'], texts: ['', '', ''] }, 'corpus');
  assert.equal(got.d, 3);
  assert.deepEqual(
    Array.from(got.vectors).map((x) => Math.round(x * 1000) / 1000),
    [1, 0, 0, 0, 0.6, 0.8, 0, 0, 1],
  );
  assert.deepEqual(Array.from((await e.embed({ ids: ['q'], texts: [''] }, 'queries')).vectors), [0, 0, 1]);
  assert.match(String(e.describe.corpus_sha256), /^[0-9a-f]{64}$/);
  writeFileSync(join(dir, 'corpus.ids.txt'), 'b\na\n');
  await assert.rejects(e.embed({ ids: ['a'], texts: [''] }, 'corpus'), /has 3 rows but .*corpus\.ids\.txt names 2 ids/);
  rmSync(join(dir, 'queries.ids.txt'));
  assert.throws(() => parseEmbedSpec(`precomputed:${dir}`), /queries\.fvecs needs queries\.ids\.txt beside it/);
});

test('embedding providers: precomputed needs every id; unknown providers are refused', async () => {
  const partial = join(root, 'partial');
  mkdirSync(partial, { recursive: true });
  writeFileSync(join(partial, 'corpus.jsonl'), `${JSON.stringify({ _id: 'd0', vector: [1, 0] })}\n`);
  writeFileSync(join(partial, 'queries.jsonl'), `${JSON.stringify({ _id: 'q0', vector: [1, 0] })}\n`);
  const e = parseEmbedSpec(`precomputed:${partial}`);
  await assert.rejects(e.embed({ ids: ['d0', 'd1'], texts: ['a', 'b'] }, 'corpus'), /no vector for document id "d1"/);
  writeFileSync(join(partial, 'corpus.jsonl'), `${JSON.stringify({ _id: 'd0', vector: [1, 0] })}\n${JSON.stringify({ _id: 'd1', vector: [1, 0, 0] })}\n`);
  await assert.rejects(e.embed({ ids: ['d0', 'd1'], texts: ['a', 'b'] }, 'corpus'), /line 2 has 3 dimensions, earlier lines 2/);
  writeFileSync(join(partial, 'corpus.jsonl'), `${JSON.stringify({ _id: 'd0', vector: [0, 0] })}\n`);
  await assert.rejects(e.embed({ ids: ['d0'], texts: ['a'] }, 'corpus'), /all zeros/);
  assert.throws(() => parseEmbedSpec('word2vec'), /not a known provider/);
  assert.throws(() => parseEmbedSpec(`precomputed:${join(root, 'none')}`), /does not exist/);
});

test('model:DIR names what to put where and never downloads', async () => {
  const model = join(root, 'model');
  assert.throws(
    () => checkModelDir(model),
    (e: Error) => e instanceof UserError && /no model directory/.test(e.message) && /never downloads/.test(e.message),
  );
  mkdirSync(join(model, 'onnx'), { recursive: true });
  writeFileSync(join(model, 'config.json'), '{}');
  assert.throws(() => checkModelDir(model), /lacks tokenizer\.json, tokenizer_config\.json, onnx\/model\.onnx/);
  writeFileSync(join(model, 'tokenizer.json'), '{}');
  writeFileSync(join(model, 'tokenizer_config.json'), '{}');
  writeFileSync(join(model, 'onnx', 'model_quantized.onnx'), 'not a model');
  assert.deepEqual(checkModelDir(model).weights, 'onnx/model_quantized.onnx');
  // Files in place but not a real model: whichever way it fails here (no runtime installed,
  // or the runtime refusing the weights), it is a UserError naming the directory, not a
  // download attempt.
  const embedder = parseEmbedSpec(`model:${model}`);
  await assert.rejects(
    embedder.embed({ ids: ['a'], texts: ['hello'] }, 'queries'),
    (e: Error) => e instanceof UserError && /model:/.test(e.message) && (/transformers\.js runtime/.test(e.message) || /does not load/.test(e.message)),
  );
});

test('vecbench prepare beir + run: dense, keyword and hybrid quality in the result and the report', () => {
  const data = join(root, 'cli-data');
  const out = join(root, 'cli-out');
  const env = { ...process.env, VECBENCH_QUIET: '1' };
  const prep = execFileSync(
    'node',
    ['bin/vecbench.js', 'prepare', 'beir', '--name', 'tiny', '--dir', beirDir, '--embed', `precomputed:${vecDir}`, '--data', data],
    { encoding: 'utf8', env },
  );
  assert.match(prep, /beir-tiny: 40 x 8 cosine, 10 labelled queries/);
  const missing = spawnSync('node', ['bin/vecbench.js', 'prepare', 'beir', '--name', 'tiny'], { encoding: 'utf8', env });
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /prepare beir needs --name NAME and --dir DIR/);
  // Without the quality run first: no quality rows. A second run adds the missing section to
  // the complete result (its groups are kept) and measures hnswlib afresh.
  execFileSync(
    'node',
    ['bin/vecbench.js', 'run', '--dataset', 'beir-tiny', '--participants', 'exact', '--groups', 'none/10', '--no-quality', '--data', data, '--out', out],
    { encoding: 'utf8', env },
  );
  const before = JSON.parse(execFileSync('node', ['bin/vecbench.js', 'report', '--json', '--out', out], { encoding: 'utf8', env })) as { quality: unknown[] };
  assert.deepEqual(before.quality, []);
  const started = (JSON.parse(readFileSync(join(out, 'beir-tiny', 'exact.json'), 'utf8')) as { run: { started: string } }).run.started;
  execFileSync(
    'node',
    ['bin/vecbench.js', 'run', '--dataset', 'beir-tiny', '--participants', 'exact,hnswlib', '--groups', 'none/10', '--data', data, '--out', out],
    { encoding: 'utf8', env },
  );
  const exactFile = JSON.parse(readFileSync(join(out, 'beir-tiny', 'exact.json'), 'utf8')) as {
    run: { started: string; resumed: number };
    extra: { quality?: { status: string } };
  };
  assert.equal(exactFile.run.started, started, 'the complete result was resumed, not measured afresh');
  assert.equal(exactFile.extra.quality?.status, 'measured');
  const report = JSON.parse(execFileSync('node', ['bin/vecbench.js', 'report', '--json', '--out', out], { encoding: 'utf8', env })) as {
    quality: Record<string, unknown>[];
  };
  const arms = report.quality.filter((r) => r.dataset === 'beir-tiny' && r.participant === 'exact');
  assert.deepEqual(arms.map((r) => r.arm).sort(), ['dense', 'hybrid', 'keyword']);
  for (const r of arms) {
    for (const f of ['ndcg10', 'mrr10', 'hit10', 'ndcg10_ci_low', 'ndcg10_ci_high']) assert.equal(typeof r[f], 'number', `${r.arm} ${f}`);
    assert.ok('delta_ndcg10' in r);
  }
  const dense = arms.find((r) => r.arm === 'dense')!;
  // By hand, with the hand-made vectors: q0 (cat) ranks d0 (grade 2, no jitter) then d8 (1):
  // ideal order, nDCG 1. q1 (dog, jitter 9) finds its twin d9 (2) first, then d17, whose
  // jitter 0.17 is closer to 0.09 than d1's 0.01 (cos 0.982 vs 0.979), then d1 (1):
  // (2 + 1/log2 4) / (2 + 1/log2 3). q2 (ship) finds d7 (1) first, but the judged "gone" (2)
  // is not in the corpus and still makes the ideal 2, 1: 1 / (2 + 1/log2 3).
  const ideal = 2 + 1 / Math.log2(3);
  // q4-q10 each find their one judged twin first: nDCG 1.
  const expected = (1 + (2 + 1 / Math.log2(4)) / ideal + 1 / ideal + 7) / 10;
  assert.ok(Math.abs((dense.ndcg10 as number) - expected) < 1e-9, `dense nDCG ${dense.ndcg10} vs ${expected}`);
  assert.equal(dense.delta_ndcg10, 0);
  assert.equal(arms.find((r) => r.arm === 'hybrid')!.round_trips, 2);
  assert.equal(arms.find((r) => r.arm === 'keyword')!.where, 'client-side');
  // hnswlib's ladders all name k; with 40 documents the depth is clamped to 40 but the dense
  // arm still follows its none/100 ladder, one dense and one hybrid row per point.
  const hnsw = report.quality.filter((r) => r.dataset === 'beir-tiny' && r.participant === 'hnswlib');
  assert.ok(hnsw.filter((r) => r.arm === 'dense').length >= 2);
  assert.equal(hnsw.filter((r) => r.arm === 'dense').length, hnsw.filter((r) => r.arm === 'hybrid').length);
  for (const r of hnsw.filter((x) => x.arm === 'dense')) assert.ok(Math.abs((r.ndcg10 as number) - expected) < 1e-9, 'on 40 rows HNSW is exact');
});
