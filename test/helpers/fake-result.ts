// A result file holding one measured group of a fake participant, for tests that measure a group
// through the real runner code against a fake engine and then derive its cells.
import type { Dataset } from '../../src/datasets/layout.ts';
import { resultSchema, type ResultFile, type ResultGroup } from '../../src/results/schema.ts';

export function fakeResultOf(ds: Dataset, group: ResultGroup, clients: number): ResultFile {
  return resultSchema.parse({
    format: 'vecbench-result/1',
    participant: 'fake',
    engine: 'fake',
    engine_version: '1',
    dataset: { name: ds.name, n: ds.n, d: ds.d, nq: ds.nq, metric: ds.metric, hash: ds.hash },
    settings: { index: {}, ladders: [] },
    filter_strategy: 'none',
    hardware: { cpu: 'x', cores: 2, memory_bytes: 1, os: 'x', node: 'x' },
    run: { vecbench_version: '0', started: 'x', updated: 'x', query_seed: 1, clients, complete: true },
    load: null,
    groups: [group],
  });
}
