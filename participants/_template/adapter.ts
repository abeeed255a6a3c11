// TEMPLATE PARTICIPANT: copy this directory to participants/<name>/ and replace the engine.
// The registry skips directories whose name starts with `_`, so this one is never listed or
// run; the contract suite (test/engines/participant-contract.test.ts) tests it by its path, and tests
// your copy as soon as it is in participants/.
//
// The "engine" here is a toy written in plain TypeScript so the template runs as it is: an
// inverted-file index. buildIndex picks `lists` rows as centroids and files every row under its
// nearest one; a search scans only the rows of the `probes` nearest lists (probes = lists is
// an exact scan). A real participant keeps the same shape and calls its engine instead: look for
// REPLACE below. The interface is `Participant` in src/contracts.ts, described in
// docs/contracts.md section 1.
import { join } from 'node:path';
import type { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';

// REPLACE: the engine's index parameters, as settings.json's `index` object holds them.
// sdk.settingsObject makes an unknown key an error; zod's message path names the bad field, and
// the runner prints it as one line (`participant NAME: ... index.lists: ...`).
const settingsSchema = sdk.settingsObject({
  /** How many lists (centroids) buildIndex makes. */
  lists: sdk.intSetting(1, 65_536, 16),
});
type Settings = z.infer<typeof settingsSchema>;

// REPLACE: the search knobs the ladders in settings.json sweep, each with the schema of its
// values (the SDK's intKnob, choiceKnob, knobWith). The harness refuses any other name or a bad
// value in one line before setKnobs sees it, so a typo in a ladder fails the run instead of
// measuring the default.
const KNOBS = { probes: sdk.intKnob(1) };

/** The one file the index keeps in workDir (src/adapters/persist.ts columns). REPLACE: the
 * engine's own files; an engine that persists by itself needs nothing of this. */
const INDEX_FILE = 'template.index.bin';

/** Distance, lower is closer: ip and cosine (unit vectors after prepare) rank by -dot, l2 by the
 * squared Euclidean distance (same order as the distance). */
function distance(metric: sdk.Metric, a: Float32Array, ai: number, b: Float32Array, bi: number, d: number): number {
  let s = 0;
  if (metric === 'l2') {
    for (let j = 0; j < d; j++) {
      const t = a[ai + j] - b[bi + j];
      s += t * t;
    }
    return s;
  }
  for (let j = 0; j < d; j++) s -= a[ai + j] * b[bi + j];
  return s;
}

/** One loaded index. REPLACE: hold the engine's handle (a native index, a client, a table). */
class TemplateSession implements sdk.EngineSession {
  /** Rows by slot: slot i holds id ids[i], its vector at i * d, its list, and live[i] = 0 once
   * deleted. slotOf maps a live id to its slot. */
  private vectors: Float32Array;
  private ids: Int32Array;
  private attrs: sdk.RowAttributes;
  private list: Int32Array;
  private live: Uint8Array;
  private slotOf = new Map<number, number>();
  private n = 0;
  private centroids: Float32Array = new Float32Array(0);
  private probes = 1;
  /** The file in workDir lags the rows in memory (a write after buildIndex). */
  private dirty = false;

  constructor(
    private readonly dataset: sdk.DatasetInfo,
    private readonly settings: Settings,
    private readonly workDir: string,
    capacity: number,
  ) {
    this.vectors = new Float32Array(capacity * dataset.d);
    this.ids = new Int32Array(capacity);
    this.list = new Int32Array(capacity);
    this.live = new Uint8Array(capacity);
    this.attrs = Object.fromEntries(sdk.ATTRIBUTES.map((a) => [a, new Int32Array(capacity)])) as sdk.RowAttributes;
  }

  /** The index a previous session left in workDir (written by buildIndex and close). */
  static reopen(dataset: sdk.DatasetInfo, settings: Settings, workDir: string): TemplateSession {
    const path = join(workDir, INDEX_FILE);
    const { meta, columns } = sdk.readColumns(path);
    if (meta.d !== dataset.d || meta.metric !== dataset.metric) {
      throw new Error(`template: ${path} holds d=${String(meta.d)} ${String(meta.metric)} rows, the dataset is d=${dataset.d} ${dataset.metric}`);
    }
    const s = new TemplateSession(dataset, settings, workDir, 0);
    s.vectors = columns.vectors as Float32Array;
    s.ids = columns.ids as Int32Array;
    s.list = columns.list as Int32Array;
    s.live = columns.live as Uint8Array;
    s.centroids = columns.centroids as Float32Array;
    s.attrs = Object.fromEntries(sdk.ATTRIBUTES.map((a) => [a, columns[a] as Int32Array])) as sdk.RowAttributes;
    s.n = s.ids.length;
    for (let i = 0; i < s.n; i++) if (s.live[i]) s.slotOf.set(s.ids[i], i);
    return s;
  }

  /** The nearest centroid of a vector, or -1 before buildIndex. */
  private nearestList(v: Float32Array, vi: number): number {
    const { d, metric } = this.dataset;
    let best = -1;
    let bestDist = Infinity;
    for (let c = 0; c * d < this.centroids.length; c++) {
      const dist = distance(metric, v, vi, this.centroids, c * d, d);
      if (dist < bestDist) [best, bestDist] = [c, dist];
    }
    return best;
  }

  private grow(need: number): void {
    if (need <= this.ids.length) return;
    const cap = Math.max(need, this.ids.length * 2);
    const more = <T extends Int32Array | Uint8Array | Float32Array>(a: T, size: number): T => {
      const b = new (a.constructor as new (n: number) => T)(size);
      b.set(a);
      return b;
    };
    this.vectors = more(this.vectors, cap * this.dataset.d);
    this.ids = more(this.ids, cap);
    this.list = more(this.list, cap);
    this.live = more(this.live, cap);
    for (const a of sdk.ATTRIBUTES) this.attrs[a] = more(this.attrs[a], cap);
  }

  /** Appends rows (a new id, or one deleted before); an id already live is replaced. */
  private add(batch: sdk.RowBatch): void {
    const d = this.dataset.d;
    this.grow(this.n + batch.ids.length);
    for (let i = 0; i < batch.ids.length; i++) {
      const id = batch.ids[i];
      const old = this.slotOf.get(id);
      if (old !== undefined) this.live[old] = 0;
      const slot = this.n++;
      this.vectors.set(batch.vectors.subarray(i * d, (i + 1) * d), slot * d);
      this.ids[slot] = id;
      for (const a of sdk.ATTRIBUTES) this.attrs[a][slot] = batch.attrs[a][i];
      this.list[slot] = this.nearestList(this.vectors, slot * d);
      this.live[slot] = 1;
      this.slotOf.set(id, slot);
    }
    this.dirty = true;
  }

  /** Writes the whole index to workDir in one file (through a temporary file, so a reader never
   * sees half of it). An engine with reopen must have its data in workDir from buildIndex on
   * (docs/contracts.md, the `reopen` row). */
  private persist(): void {
    const n = this.n;
    const cols: Record<string, Int32Array | Uint8Array | Float32Array> = {
      ids: this.ids.subarray(0, n),
      list: this.list.subarray(0, n),
      live: this.live.subarray(0, n),
      vectors: this.vectors.subarray(0, n * this.dataset.d),
      centroids: this.centroids,
    };
    for (const a of sdk.ATTRIBUTES) cols[a] = this.attrs[a].subarray(0, n);
    sdk.writeColumns(join(this.workDir, INDEX_FILE), { d: this.dataset.d, metric: this.dataset.metric }, cols);
    this.dirty = false;
  }

  /** Consecutive batches of base rows, timed as ingest. REPLACE: hand the batch to the engine. */
  async ingest(batch: sdk.RowBatch): Promise<void> {
    this.add(batch);
  }

  /** Timed as the index build. REPLACE: the engine's build (or nothing, when it builds as rows
   * arrive: then say so in README.md). Here: centroids at an even stride, every row filed under
   * its nearest, then the index saved for reopen. */
  async buildIndex(): Promise<void> {
    const d = this.dataset.d;
    const lists = Math.min(this.settings.lists, Math.max(1, this.n));
    this.centroids = new Float32Array(lists * d);
    for (let c = 0; c < lists; c++) {
      const slot = Math.floor((c * this.n) / lists);
      this.centroids.set(this.vectors.subarray(slot * d, (slot + 1) * d), c * d);
    }
    for (let slot = 0; slot < this.n; slot++) this.list[slot] = this.nearestList(this.vectors, slot * d);
    this.persist();
  }

  /** One ladder point's knobs, before its queries. */
  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    this.probes = (knobs.probes as number | undefined) ?? 1;
  }

  /** Row ids, best first, at most k, none violating the filter (the contract suite checks every
   * id it gets). REPLACE: translate request.filter into the engine's dialect (kit.ts has
   * compileFilter for engines that take a predicate) and call its search. */
  async search(request: sdk.SearchRequest): Promise<Int32Array> {
    const { d, metric } = this.dataset;
    const q = request.vector;
    // The probes nearest lists (all of them before buildIndex, or when probes >= lists).
    const lists = this.centroids.length / d;
    const open = new Uint8Array(Math.max(lists, 1));
    if (lists === 0 || this.probes >= lists) open.fill(1);
    else {
      const order = Array.from({ length: lists }, (_, c) => [distance(metric, q, 0, this.centroids, c * d, d), c] as const).sort((a, b) => a[0] - b[0]);
      for (let i = 0; i < this.probes; i++) open[order[i][1]] = 1;
    }
    const keep = request.filter ? sdk.compileFilter(request.filter, this.attrs) : () => true;
    // The best k so far, sorted by (distance, id).
    const best: { dist: number; id: number }[] = [];
    for (let slot = 0; slot < this.n; slot++) {
      if (!this.live[slot] || (lists > 0 && !open[this.list[slot]]) || !keep(slot)) continue;
      const dist = distance(metric, q, 0, this.vectors, slot * d, d);
      const id = this.ids[slot];
      if (best.length === request.k && (dist > best[best.length - 1].dist || (dist === best[best.length - 1].dist && id > best[best.length - 1].id))) continue;
      let i = best.length;
      while (i > 0 && (best[i - 1].dist > dist || (best[i - 1].dist === dist && best[i - 1].id > id))) i--;
      best.splice(i, 0, { dist, id });
      if (best.length > request.k) best.pop();
    }
    return Int32Array.from(best, (b) => b.id);
  }

  // Writes (live churn and the contract suite's write check). Leave out what the engine cannot
  // do: an absent method is reported as unsupported, never faked.
  async insert(batch: sdk.RowBatch): Promise<void> {
    this.add(batch);
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    this.add(batch);
  }

  /** A deleted id must never be returned again. */
  async delete(ids: Int32Array): Promise<void> {
    for (const id of ids) {
      const slot = this.slotOf.get(id);
      if (slot === undefined) continue;
      this.live[slot] = 0;
      this.slotOf.delete(id);
    }
    this.dirty = true;
  }

  /** Bytes of the engine's data: here the saved file, rewritten first after writes. */
  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'IVF probe', 'IVF probe + filter');
  }

  async diskBytes(): Promise<number> {
    if (this.dirty) this.persist();
    return sdk.fileBytes(join(this.workDir, INDEX_FILE));
  }

  /** Saves what writes changed, so a reopen finds what this session held. */
  async close(): Promise<void> {
    if (this.dirty) this.persist();
  }
}

const participant: sdk.Participant<Settings> = {
  // REPLACE: the engine's name and its loaded version, read at run time, never typed in
  // (kit.ts packageVersion('<npm package>') for a package; a server's own version query).
  engine: 'vecbench template (plain TypeScript inverted file)',
  engineVersion: async () => `vecbench ${sdk.VECBENCH_VERSION} template`,
  settingsSchema,
  knobs: KNOBS,
  // Which attribute fields and operators the engine applies itself; null when it has no filters
  // (the filtered groups are then unsupported, and the contract suite skips its filter checks).
  filters: sdk.EVERY_FILTER,
  filterStrategy: 'predicate on each scanned row of the probed lists (pre-filter, exact within the lists)',
  // A synchronous in-process search: the throughput view runs one request at a time, or, with
  // reopenInThreads, one reopened copy per worker thread.
  concurrentSearch: false,
  // reopen reads only the file buildIndex and close write; searches never write it.
  reopenInThreads: true,
  /** Why these settings cannot run on a dataset, one line naming the setting and the fix. */
  checkDataset: (settings, dataset) =>
    settings.lists > dataset.n ? `index.lists ${settings.lists} exceeds the dataset's ${dataset.n} rows; set index.lists to at most ${dataset.n}` : null,
  open: async (ctx: sdk.OpenContext<Settings>) => new TemplateSession(ctx.dataset, ctx.settings, ctx.workDir, ctx.dataset.n),
  // Optional: opens what a closed session left in workDir without ingest (cold start, resume).
  // Leave it out when the engine cannot; the contract suite then skips its reopen check.
  reopen: async (ctx: sdk.OpenContext<Settings>) => TemplateSession.reopen(ctx.dataset, ctx.settings, ctx.workDir),
  // A server engine also has `server: { provision, start }` (participants/pgvector is one).
};
export default participant;
