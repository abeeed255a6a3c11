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
export async function timedLoop(
  search: (i: number) => Promise<ArrayLike<number>>,
  n: number,
  clients: number,
): Promise<{ results: ArrayLike<number>[]; latenciesMs: Float64Array; errors: (string | null)[]; wallS: number }> {
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

/** The id no dataset has: what an id that cannot be stored becomes, so the harness counts it
 * as unknown. */
const UNKNOWN_ID = -2;

/** An engine's id as it may be stored in an Int32Array: ids that are not integers in the
 * int32 range become UNKNOWN_ID (a wrapped 2^32 + id must never pass as a real id). Every
 * place that stores engine ids goes through this check. */
function storableId(id: number): number {
  return Number.isInteger(id) && id >= -2147483648 && id <= 2147483647 ? id : UNKNOWN_ID;
}

/** Concatenates the answers into one Int32Array (offsets filled in; a null answer is empty);
 * with keep false, only the offsets. Ids go through storableId. */
export function packIds(results: (ArrayLike<number> | null)[], offsets: Int32Array, keep: boolean): Int32Array {
  const n = results.length;
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + (results[i]?.length ?? 0);
  if (!keep) return new Int32Array(0);
  const ids = new Int32Array(offsets[n]);
  for (let i = 0; i < n; i++) {
    const r = results[i];
    if (!r) continue;
    for (let j = 0; j < r.length; j++) ids[offsets[i] + j] = storableId(r[j]);
  }
  return ids;
}
