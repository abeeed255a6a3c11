// A result file holding one measured group of a fake participant, and the empty group to measure
// into, for tests that measure a group through the real runner code against a fake engine and
// then derive its cells.
import type { Dataset } from '../../src/datasets/layout.ts';
import { resultSchema, type ResultFile, type ResultGroup } from '../../src/results/schema.ts';
import type { AskedGroup } from '../../src/runner/points.ts';
import type { GroupRun } from '../../src/runner/group-run.ts';

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

/** A measured group with nothing measured yet, as the runner starts one. */
export function emptyGroup(g: AskedGroup): ResultGroup {
  return { key: g.key, filter: g.filter, k: g.k, status: 'measured', median_matches: g.medianMatches, points: [], complete: false, skipped: [] };
}

/** A group run of one pass a point over every query of the set in order, on one client, no
 * machine-load retakes: what the cold protocol's tests share; they give the rest. */
export function onePassRun(parts: Pick<GroupRun, 'engine' | 'p' | 'ds' | 'g' | 'group' | 'onProgress' | 'save'> & Partial<GroupRun>): GroupRun {
  return {
    queries: Array.from({ length: parts.ds.nq }, (_, i) => i),
    clients: 1,
    threads: 1,
    pointTimeoutS: 60,
    timing: { minPasses: 1, minSeconds: 0, maxPasses: 1 },
    build: 0,
    busyCores: 64,
    ...parts,
  };
}
