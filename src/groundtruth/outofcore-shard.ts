// The work of one out-of-core ground-truth worker thread: run its shard and copy the partial
// top-k lists into the shared buffers the main thread reads (see outofcore.ts; the shard itself is in partial-topk.ts).
import { runShard, type ShardSpec } from './partial-topk.ts';

interface WorkerShardData {
  spec: ShardSpec;
  index: number;
  control: SharedArrayBuffer;
  result: { ids: SharedArrayBuffer; dists: SharedArrayBuffer; counts: SharedArrayBuffer; matches: SharedArrayBuffer };
}

export function runWorkerShard(data: WorkerShardData): void {
  const control = new Int32Array(data.control);
  const p = runShard(data.spec, (done) => Atomics.store(control, 2 * data.index + 1, done));
  new Int32Array(data.result.ids).set(p.ids);
  new Float32Array(data.result.dists).set(p.dists);
  new Int32Array(data.result.counts).set(p.counts);
  new Int32Array(data.result.matches).set(p.matches);
}
