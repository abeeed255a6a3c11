// `vecbench prepare`: generates or converts a dataset into the prepared layout (vectors,
// attributes, ground truth): a registered one, a BEIR corpus (embedded while preparing), or the
// user's own files (prepare custom).
import { type Command, InvalidArgumentError } from 'commander';
import { CUSTOM_NAME, prepareCustom } from '../prepare/sources/custom.ts';
import type { Metric } from '../contracts.ts';
import { prepareDataset } from '../prepare/registry.ts';
import { prepareBeir } from '../prepare/beir.ts';
import { EMBED_HELP } from '../embed/provider.ts';
import { UserError } from '../util/errors.ts';
import { dataDir } from './common.ts';

export function registerPrepare(program: Command): void {
  program
    .command('prepare')
    .description('prepare a dataset (generate or convert it into the prepared layout); a second prepare is a no-op')
    .argument('<name>', 'dataset name, e.g. synthetic-20k (see vecbench datasets)')
    .option('--data <dir>', 'prepared datasets directory (default .vecbench/data or $VECBENCH_DATA)')
    .option('--force', 'prepare again even if prepared')
    .option('--name <name>', 'with "prepare beir": the dataset is called beir-<name>; with "prepare custom": the dataset\'s name')
    .option('--base <file>', 'with "prepare custom": base vectors (.fvecs .bvecs .npy .hdf5[:train] .parquet[:column] IDX)')
    .option('--queries <file>', 'with "prepare custom": query vectors, same formats (an .hdf5 file defaults to its "test" dataset)')
    .option('--groundtruth <file>', 'with "prepare custom": neighbour ids (.ivecs, .npy, .hdf5[:neighbors]) to check against vecbench\'s exact top-k')
    .option('--no-groundtruth', 'prepare the data alone; compute the ground truth later (vecbench groundtruth plan / shard / merge, or the first run)')
    .option('--metric <metric>', 'with "prepare custom": ip, cosine or l2 (default: the file\'s own, else l2)', (v: string) => {
      if (v !== 'ip' && v !== 'cosine' && v !== 'l2') throw new InvalidArgumentError('--metric must be ip, cosine or l2');
      return v as Metric;
    })
    .option('--dir <dir>', 'with "prepare beir": the BEIR directory (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)')
    .option('--split <split>', 'with "prepare beir": the qrels split', 'test')
    .option('--embed <provider>', `with "prepare beir": ${EMBED_HELP}`, 'glove')
    .action(
      async (
        name: string,
        o: {
          data?: string;
          force?: boolean;
          name?: string;
          dir?: string;
          split: string;
          embed: string;
          base?: string;
          queries?: string;
          groundtruth?: string | false;
          metric?: Metric;
        },
      ) => {
        if (name === CUSTOM_NAME) {
          if (!o.name || !o.base || !o.queries)
            throw new UserError('prepare custom needs --name N --base FILE --queries FILE (optional: --groundtruth FILE --metric ip|cosine|l2)');
          const { ds, check } = await prepareCustom(dataDir(o), {
            name: o.name,
            base: o.base,
            queries: o.queries,
            groundtruth: typeof o.groundtruth === 'string' ? o.groundtruth : undefined,
            metric: o.metric,
            force: o.force,
          });
          process.stdout.write(`${ds.name}: ${ds.n} x ${ds.d} ${ds.metric}, ${ds.nq} queries, in ${ds.dir}\n`);
          if (check)
            process.stdout.write(
              `ground truth ${o.groundtruth}: agrees with vecbench's exact top-${check.k} on all ${check.queries} queries (${check.tiesOnly} differ only by ties within 1e-6)\n`,
            );
          return;
        }
        if (name === 'beir') {
          if (!o.name || !o.dir)
            throw new UserError('prepare beir needs --name NAME and --dir DIR (a BEIR directory with corpus.jsonl, queries.jsonl and qrels/<split>.tsv)');
          const ds = await prepareBeir(dataDir(o), { name: o.name, dir: o.dir, embed: o.embed, split: o.split, force: o.force });
          process.stdout.write(`${ds.name}: ${ds.n} x ${ds.d} ${ds.metric}, ${ds.nq} labelled queries, in ${ds.dir}\n`);
          return;
        }
        const ds = await prepareDataset(dataDir(o), name, { force: o.force, groundTruth: o.groundtruth !== false });
        process.stdout.write(`${ds.name}: ${ds.n} x ${ds.d} ${ds.metric}, ${ds.nq} queries, in ${ds.dir}\n`);
      },
    );
}
