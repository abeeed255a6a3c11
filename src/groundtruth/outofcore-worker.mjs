// Worker-thread entry of out-of-core ground truth (outofcore.ts). Plain JavaScript so it can
// load the TypeScript sources through tsx whatever way the CLI was started; every failure,
// including a failed import, is reported through shared memory, because the main thread waits
// on it synchronously and cannot hear a worker's 'error' event meanwhile.
import { workerData } from 'node:worker_threads';

const { index, control, errorText } = workerData;
const state = new Int32Array(control);
try {
  const { register } = await import('tsx/esm/api');
  register();
  const { runWorkerShard } = await import('./outofcore-shard.ts');
  runWorkerShard(workerData);
  Atomics.store(state, 2 * index, 1);
} catch (e) {
  const text = new TextEncoder().encode(`${e && e.name === 'UserError' ? 'UserError: ' : ''}${e?.message ? e.message : String(e)}`).subarray(0, 4095);
  new Uint8Array(errorText, 4096 * index, 4096).set(text);
  Atomics.store(state, 2 * index, 2);
}
Atomics.notify(state, 2 * index);
