// TREC-format files for `vecbench eval`: qrels ("qid iter docno rel", or BEIR's
// "query-id corpus-id score" with its header) and runs ("qid Q0 docno rank score tag").
// Fields are separated by white space; '#' lines are comments (as in trec_eval 10).
import { readFileSync } from 'node:fs';
import type { ScoredDoc } from '../metrics/quality.ts';
import { UserError } from '../util/errors.ts';

function lines(path: string, what: string): string[] {
  try {
    return readFileSync(path, 'utf8').split(/\r?\n/);
  } catch (e) {
    throw new UserError(`cannot read the ${what} file ${path} (${(e as Error).message.split('\n')[0]}); check the path`);
  }
}

export function readQrels(path: string): Map<string, Map<string, number>> {
  const qrels = new Map<string, Map<string, number>>();
  lines(path, 'qrels').forEach((line, i) => {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) return;
    const cols = t.split(/\s+/);
    if (i === 0 && cols[0] === 'query-id') return;
    let qid: string, docno: string, rel: string;
    if (cols.length === 4) [qid, , docno, rel] = cols;
    else if (cols.length === 3) [qid, docno, rel] = cols;
    else throw new UserError(`${path} line ${i + 1} has ${cols.length} fields; a qrels line is "qid iter docno rel" (or BEIR's "query-id corpus-id score")`);
    if (!/^-?\d+$/.test(rel)) throw new UserError(`${path} line ${i + 1}: relevance ${JSON.stringify(rel)} is not an integer`);
    let m = qrels.get(qid);
    if (!m) qrels.set(qid, (m = new Map()));
    if (m.has(docno)) throw new UserError(`${path} line ${i + 1}: document ${docno} is judged twice for query ${qid}`);
    m.set(docno, Number(rel));
  });
  if (qrels.size === 0) throw new UserError(`${path} holds no judgements; give a qrels file with "qid iter docno rel" lines`);
  return qrels;
}

export function readRun(path: string): Map<string, ScoredDoc[]> {
  const run = new Map<string, ScoredDoc[]>();
  const seen = new Set<string>();
  lines(path, 'run').forEach((line, i) => {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) return;
    const cols = t.split(/\s+/);
    if (cols.length !== 6) throw new UserError(`${path} line ${i + 1} has ${cols.length} fields; a run line is "qid Q0 docno rank score tag"`);
    const [qid, , docno, , scoreText] = cols;
    const score = Number(scoreText);
    if (!Number.isFinite(score)) throw new UserError(`${path} line ${i + 1}: score ${JSON.stringify(scoreText)} is not a finite number`);
    const key = `${qid}\u0000${docno}`;
    if (seen.has(key)) throw new UserError(`${path} line ${i + 1}: document ${docno} appears twice for query ${qid} (trec_eval refuses duplicates too)`);
    seen.add(key);
    let list = run.get(qid);
    if (!list) run.set(qid, (list = []));
    list.push({ docno, score });
  });
  if (run.size === 0) throw new UserError(`${path} holds no run lines; give a TREC run with "qid Q0 docno rank score tag" lines`);
  return run;
}
