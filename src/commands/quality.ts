// `vecbench eval`: scores any TREC-format run against qrels with the harness's own measures
// (nDCG@10 as trec_eval's ndcg_cut_10, MRR@10, Hit@10, recall@100), so users can check
// vecbench's figures against their own tools. (The answer-quality run itself is part of
// `vecbench run` on datasets with relevance labels.)
import type { Command } from 'commander';
import { QUALITY_MEASURES, evaluateRun } from '../metrics/quality.ts';
import { readQrels, readRun } from '../hybrid/trec.ts';
import { UserError } from '../util/errors.ts';

/** trec_eval's names for the same measures, printed beside ours. */
const TREC_NAMES = { ndcg10: 'ndcg_cut_10', mrr10: 'recip_rank@10', hit10: 'success_10', recall100: 'recall_100' } as const;

export function registerQuality(program: Command): void {
  program
    .command('eval')
    .description('score a TREC-format run file against qrels: nDCG@10 (as trec_eval ndcg_cut_10), MRR@10, Hit@10, recall@100')
    .requiredOption('--qrels <file>', 'relevance judgements: "qid iter docno rel" lines (or BEIR qrels tsv)')
    .requiredOption('--run <file>', 'a TREC run: "qid Q0 docno rank score tag" lines')
    .option('--complete', 'average over every qrels query, a query missing from the run scoring 0 (trec_eval -c)')
    .option('--per-query', 'also print each query')
    .option('--json', 'print JSON')
    .action((o: { qrels: string; run: string; complete?: boolean; perQuery?: boolean; json?: boolean }) => {
      const qrels = readQrels(o.qrels);
      const run = readRun(o.run);
      const ev = evaluateRun(qrels, run, { complete: o.complete });
      if (ev.perQuery.length === 0)
        throw new UserError(`no query of ${o.run} is judged in ${o.qrels}; check that both use the same query ids (or pass --complete)`);
      if (o.json) {
        process.stdout.write(`${JSON.stringify({ queries: ev.perQuery.length, mean: ev.mean, per_query: o.perQuery ? ev.perQuery : undefined }, null, 1)}\n`);
        return;
      }
      const rows: string[] = [];
      if (o.perQuery)
        for (const q of ev.perQuery) for (const m of QUALITY_MEASURES) rows.push(`${TREC_NAMES[m].padEnd(16)}\t${q.qid}\t${q.scores[m].toFixed(4)}`);
      rows.push(`${'num_q'.padEnd(16)}\tall\t${ev.perQuery.length}`);
      for (const m of QUALITY_MEASURES) rows.push(`${TREC_NAMES[m].padEnd(16)}\tall\t${ev.mean[m].toFixed(4)}`);
      process.stdout.write(`${rows.join('\n')}\n`);
    });
}
