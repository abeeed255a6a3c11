import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { evaluateRun, ndcgAt, pairedLift, rrfFuse, scoreRanking, trecOrder, meanWithCI } from '../../src/metrics/quality.ts';

const close = (a: number, b: number, eps = 1e-12) => assert.ok(Math.abs(a - b) <= eps, `${a} != ${b}`);

// Graded qrels for query 1 (E is relevant but never retrieved; G is judged -1, which trec_eval
// treats as unjudged; C is judged non-relevant).
const QRELS = `# qid iter docno rel
q1 0 A 3
q1 0 B 2
q1 0 C 0
q1 0 D 1
q1 0 E 2
q1 0 G -1
q2 0 P 1
q4 0 Z 2
`;
// Ties: A and B share 5.0 (trec_eval puts the larger docno first: B, then A); C and D share
// 3.0 (D, then C). X is unjudged. The rank column is deliberately misleading: it is ignored.
const RUN = `q1 Q0 A 1 5.0 t
q1 Q0 C 2 3.0 t
q1 Q0 X 3 4.0 t
q1 Q0 B 4 5.0 t
q1 Q0 D 5 3.0 t
q1 Q0 G 6 2.0 t
q2 Q0 Y1 1 20 t
q2 Q0 Y2 2 19 t
q2 Q0 Y3 3 18 t
q2 Q0 Y4 4 17 t
q2 Q0 Y5 5 16 t
q2 Q0 Y6 6 15 t
q2 Q0 Y7 7 14 t
q2 Q0 Y8 8 13 t
q2 Q0 Y9 9 12 t
q2 Q0 Y10 10 11 t
q2 Q0 P 11 10 t
q3 Q0 A 1 1.0 t
`;

// By hand: ranking B(2) A(3) X(0) D(1) C(0) G(-1 -> no gain); rank r discounted by log2(r + 1).
const DCG_Q1 = 2 / 1 + 3 / Math.log2(3) + 1 / Math.log2(5);
// Ideal from all judged documents: 3, 2, 2, 1.
const IDCG_Q1 = 3 / 1 + 2 / Math.log2(3) + 2 / Math.log2(4) + 1 / Math.log2(5);
const NDCG_Q1 = DCG_Q1 / IDCG_Q1; // 0.7595...

function parseQrels(text: string) {
  const m = new Map<string, Map<string, number>>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const [q, , d, r] = line.split(' ');
    if (!m.has(q)) m.set(q, new Map());
    m.get(q)!.set(d, Number(r));
  }
  return m;
}
function parseRun(text: string) {
  const m = new Map<string, { docno: string; score: number }[]>();
  for (const line of text.split('\n')) {
    if (!line) continue;
    const [q, , d, , s] = line.split(' ');
    if (!m.has(q)) m.set(q, []);
    m.get(q)!.push({ docno: d, score: Number(s) });
  }
  return m;
}

test('trec order: score descending, ties by docno descending, rank column ignored', () => {
  assert.deepEqual(trecOrder(parseRun(RUN).get('q1')!), ['B', 'A', 'X', 'D', 'C', 'G']);
  // Byte order, as strcmp: 'a' (0x61) sorts after 'B' (0x42), so it comes first on a tie.
  assert.deepEqual(
    trecOrder([
      { docno: 'B', score: 1 },
      { docno: 'a', score: 1 },
      { docno: 'b10', score: 1 },
      { docno: 'b9', score: 1 },
    ]),
    ['b9', 'b10', 'a', 'B'],
  );
});

test('nDCG@10 with graded qrels and ties agrees with the hand computation', () => {
  const ev = evaluateRun(parseQrels(QRELS), parseRun(RUN));
  const q1 = ev.perQuery.find((q) => q.qid === 'q1')!.scores;
  close(q1.ndcg10, NDCG_Q1);
  assert.equal(q1.ndcg10.toFixed(4), '0.7595');
  assert.equal(q1.mrr10, 1);
  assert.equal(q1.hit10, 1);
  // Relevant (>= 1): A, B, D, E; retrieved: B, A, D.
  close(q1.recall100, 3 / 4);
  // Had the tie gone the other way (A before B), nDCG would differ: the tie rule matters.
  const swapped = (3 + 2 / Math.log2(3) + 1 / Math.log2(5)) / IDCG_Q1;
  assert.ok(Math.abs(q1.ndcg10 - swapped) > 0.01);
});

test('only the top 10 count for nDCG, MRR and Hit; recall@100 sees rank 11', () => {
  const ev = evaluateRun(parseQrels(QRELS), parseRun(RUN));
  const q2 = ev.perQuery.find((q) => q.qid === 'q2')!.scores;
  assert.deepEqual(q2, { ndcg10: 0, mrr10: 0, hit10: 0, recall100: 1 });
});

test('queries: run queries without judgements are ignored; -c counts missing ones as 0', () => {
  const qrels = parseQrels(QRELS);
  const run = parseRun(RUN);
  const ev = evaluateRun(qrels, run);
  assert.deepEqual(
    ev.perQuery.map((q) => q.qid),
    ['q1', 'q2'],
  );
  close(ev.mean.ndcg10, NDCG_Q1 / 2);
  close(ev.mean.recall100, (3 / 4 + 1) / 2);
  const complete = evaluateRun(qrels, run, { complete: true });
  assert.deepEqual(
    complete.perQuery.map((q) => q.qid),
    ['q1', 'q2', 'q4'],
  );
  close(complete.mean.ndcg10, NDCG_Q1 / 3);
});

test('nDCG: cutoff, no relevant documents, and ideal beyond what was retrieved', () => {
  // Two relevant documents, one retrieved at rank 2.
  close(ndcgAt([0, 1], [1, 1], 10), 1 / Math.log2(3) / (1 + 1 / Math.log2(3)));
  // Nothing relevant judged: 0, not NaN.
  assert.equal(ndcgAt([0, 0], [0, 0], 10), 0);
  // Gains past the cutoff do not count.
  assert.equal(ndcgAt([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5], [5], 10), 0);
  const s = scoreRanking(
    [7, 8, 9],
    new Map([
      [9, 1],
      [100, 2],
    ]),
  );
  close(s.ndcg10, 1 / Math.log2(4) / (2 + 1 / Math.log2(3)));
  close(s.mrr10, 1 / 3);
});

test('RRF (k = 60) on hand-made rankings', () => {
  // 1: 1/61 + 1/63, 3: 1/63 + 1/61 (tie -> smaller id), 2 and 4: 1/62 each (tie).
  assert.deepEqual(
    rrfFuse(
      [
        [1, 2, 3],
        [3, 4, 1],
      ],
      10,
    ),
    [1, 3, 2, 4],
  );
  // Ranked third in both lists beats first in one: 2/63 > 1/61.
  assert.deepEqual(
    rrfFuse(
      [
        [10, 11, 12],
        [20, 21, 12],
      ],
      3,
    ),
    [12, 10, 20],
  );
  // With k = 0 the first places win (1 > 1/3 + 1/3): k matters.
  assert.deepEqual(
    rrfFuse(
      [
        [10, 11, 12],
        [20, 21, 12],
      ],
      3,
      0,
    ),
    [10, 20, 12],
  );
  // Depth cuts the fused list; an empty list adds nothing; repeats are credited once.
  assert.deepEqual(rrfFuse([[5, 6, 7], []], 2), [5, 6]);
  assert.deepEqual(rrfFuse([[5, 5, 6], [6]], 2), [6, 5]);
});

test('paired lift and CI over queries', () => {
  const a = [0.5, 0.7, 0.9, 0.4];
  const b = [0.4, 0.6, 0.8, 0.3];
  const lift = pairedLift(a, b);
  close(lift.estimate, 0.1, 1e-12);
  close(lift.low, 0.1, 1e-12);
  close(lift.high, 0.1, 1e-12);
  const varied = pairedLift([1, 0, 1, 0, 1, 1, 0, 1], [0, 0, 0, 0, 1, 0, 0, 0]);
  close(varied.estimate, 4 / 8);
  assert.ok(varied.low < varied.estimate && varied.estimate < varied.high && varied.low >= 0 && varied.high <= 1);
  assert.throws(() => pairedLift([1], [1, 2]), /same queries/);
  const ci = meanWithCI([0, 1, 0, 1]);
  assert.ok(ci.low < 0.5 && ci.high > 0.5);
});

test('vecbench eval scores a TREC run like the hand computation', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-eval-'));
  try {
    writeFileSync(join(dir, 'qrels.txt'), QRELS);
    writeFileSync(join(dir, 'run.txt'), RUN);
    const out = execFileSync('node', ['bin/vecbench.js', 'eval', '--qrels', join(dir, 'qrels.txt'), '--run', join(dir, 'run.txt')], { encoding: 'utf8' });
    const values = Object.fromEntries(
      out
        .trim()
        .split('\n')
        .map((l) => l.split('\t'))
        .map(([m, , v]) => [m.trim(), Number(v)]),
    );
    assert.equal(values.num_q, 2);
    assert.equal(values.ndcg_cut_10, Number((NDCG_Q1 / 2).toFixed(4)));
    assert.equal(values['recip_rank@10'], 0.5);
    assert.equal(values.success_10, 0.5);
    assert.equal(values.recall_100, 0.875);
    const json = JSON.parse(
      execFileSync('node', ['bin/vecbench.js', 'eval', '--qrels', join(dir, 'qrels.txt'), '--run', join(dir, 'run.txt'), '--complete', '--json'], {
        encoding: 'utf8',
      }),
    );
    assert.equal(json.queries, 3);
    close(json.mean.ndcg10, NDCG_Q1 / 3, 1e-12);
    // Bad input: one line naming the file and the fix, exit code 2.
    writeFileSync(join(dir, 'bad.txt'), 'q1 Q0 A 1 high t\n');
    const bad = spawnSync('node', ['bin/vecbench.js', 'eval', '--qrels', join(dir, 'qrels.txt'), '--run', join(dir, 'bad.txt')], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /bad\.txt line 1: score "high" is not a finite number/);
    writeFileSync(join(dir, 'dup.txt'), 'q1 Q0 A 1 1 t\nq1 Q0 A 2 0.5 t\n');
    const dup = spawnSync('node', ['bin/vecbench.js', 'eval', '--qrels', join(dir, 'qrels.txt'), '--run', join(dir, 'dup.txt')], { encoding: 'utf8' });
    assert.equal(dup.status, 2);
    assert.match(dup.stderr, /appears twice/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
