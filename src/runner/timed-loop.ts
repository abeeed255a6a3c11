// The one timed query loop every kind of measurement uses in the participant host, and the
// packing of its answers for the runner. Pure of process state, so worker threads and the
// host's null-engine measurement run exactly the same code.

/** FNV-1a over a query's ids: equal answers give equal digests. */
export function digestOf(ids: ArrayLike<number>): number {
  let h = 0x811c9dc5;
  for (let j = 0; j < ids.length; j++) {
    h ^= ids[j] | 0;
    h = Math.imul(h, 0x01000193);
  }
  return (h ^ ids.length) >>> 0;
}

/** The one timed query loop: `clients` searches in flight over the requests, each timed. */
export async function timedLoop(search: (i: number) => Promise<ArrayLike<number>>, n: number, clients: number): Promise<{ results: ArrayLike<number>[]; latenciesMs: Float64Array; errors: (string | null)[]; wallS: number }> {
  const results: ArrayLike<number>[] = new Array(n);
  const latenciesMs = new Float64Array(n);
  const errors: (string | null)[] = new Array(n).fill(null);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      const t0 = performance.now();
      try {
        results[i] = await search(i);
      } catch (e) {
        results[i] = [];
        errors[i] = (e as Error).message ?? String(e);
      }
      latenciesMs[i] = performance.now() - t0;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.max(1, Math.min(clients, n)) }, worker));
  return { results, latenciesMs, errors, wallS: (performance.now() - start) / 1000 };
}

/** Concatenates the answers into one Int32Array (offsets filled in); with keep false, only the
 * offsets. Ids that are not integers in the int32 range become -2, an id no dataset has, so
 * the harness counts them as unknown (a wrapped 2^32 + id must never pass as a real id). */
export function packIds(results: ArrayLike<number>[], offsets: Int32Array, keep: boolean): Int32Array {
  const n = results.length;
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + results[i].length;
  if (!keep) return new Int32Array(0);
  const ids = new Int32Array(offsets[n]);
  for (let i = 0; i < n; i++) {
    const r = results[i];
    for (let j = 0; j < r.length; j++) {
      const id = r[j];
      ids[offsets[i] + j] = Number.isInteger(id) && id >= -2147483648 && id <= 2147483647 ? id : -2;
    }
  }
  return ids;
}

