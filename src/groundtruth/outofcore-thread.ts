// A worker thread of out-of-core ground truth (outofcore.ts): runs its shard and reports the
// outcome through shared memory, because the main thread waits on it synchronously and cannot
// hear a worker's 'error' event meanwhile. The build starts this file; from the sources,
// outofcore-worker.mjs registers tsx and imports it (and reports a failed import the same way).
import { workerData } from 'node:worker_threads';
import { runWorkerShard } from './outofcore-shard.ts';

/** Writes a failure where the main thread reads it: state 2 and the message. */
export function reportFailure(data: { index: number; control: SharedArrayBuffer; errorText: SharedArrayBuffer }, e: unknown): void {
  const err = e as { name?: string; message?: string } | null;
  const text = new TextEncoder().encode(`${err?.name === 'UserError' ? 'UserError: ' : ''}${err?.message ? err.message : String(e)}`).subarray(0, 4095);
  new Uint8Array(data.errorText, 4096 * data.index, 4096).set(text);
  const state = new Int32Array(data.control);
  Atomics.store(state, 2 * data.index, 2);
  Atomics.notify(state, 2 * data.index);
}

const state = new Int32Array(workerData.control);
try {
  runWorkerShard(workerData);
  Atomics.store(state, 2 * workerData.index, 1);
  Atomics.notify(state, 2 * workerData.index);
} catch (e) {
  reportFailure(workerData, e);
}
