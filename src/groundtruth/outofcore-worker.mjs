// Worker-thread entry of out-of-core ground truth from the sources (outofcore.ts; the build
// starts outofcore-thread.js directly). Plain JavaScript so it can register tsx first; a failed
// import is reported through shared memory like any other failure (outofcore-thread.ts).
import { workerData } from 'node:worker_threads';

try {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./outofcore-thread.ts');
} catch (e) {
  const text = new TextEncoder().encode(`${e && e.name === 'UserError' ? 'UserError: ' : ''}${e?.message ? e.message : String(e)}`).subarray(0, 4095);
  new Uint8Array(workerData.errorText, 4096 * workerData.index, 4096).set(text);
  const state = new Int32Array(workerData.control);
  Atomics.store(state, 2 * workerData.index, 2);
  Atomics.notify(state, 2 * workerData.index);
}
