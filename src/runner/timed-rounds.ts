// Timed passes in rounds (docs/measurement.md, "Stable points", "Interleaved timing").
//
// A group's (point, view) entries are timed in rounds, each entry's passes spread evenly over all
// the rounds (3 passes among 60 fall near rounds 0, 20 and 40). Several groups, and several
// participants' groups (interleaved timing), take their rounds in turn, so a slow drift of the
// machine's speed (tens of percent over a minute on a shared host) falls on every point alike
// instead of on whichever participant was measured in the slow minute. Each pass is kept as it
// completes (src/runner/kept-passes.ts) for a resumed run.
import { DemandMeter } from './cpu.ts';
import { passLatency, qpsHalfWidth } from '../metrics/intervals.ts';
import { HostError } from './client.ts';
import { engineProcesses, ioBetween, snapshotIo } from './engine-io.ts';
import { RECORD_EVERY_S, type HostSpeedMeter } from './host-speed.ts';
import { keyOf, passRecord, replayPasses, type KeptProgress } from './kept-passes.ts';
import { isBusy, MachineLoadMeter } from './machine-load.ts';
import type { LoadedParticipant } from './participants.ts';
import type { PointReply } from './point-reply.ts';
import type { AskedGroup } from './points.ts';
import type { View } from '../results/schema.ts';
import type { HostReply, HostRequest } from './protocol.ts';
import { leadWidths, type LeadWidth } from './lead-precision.ts';

/** Passes of a warm point: until both minimums are met, at most maxPasses (busy passes count
 * toward the maximum only). A point a table cell reads (throughput view) then goes on until its
 * QPS interval's relative half-width is at most cellHalfWidth, for at most cellSeconds of quiet
 * passes and cellMaxPasses passes: the cells' precision is where the time goes, the rest of the
 * curve keeps the base timing (docs/measurement.md, "Stable points"). cellHalfWidth 0 or absent:
 * no such extension. */
export interface Timing {
  minPasses: number;
  minSeconds: number;
  maxPasses: number;
  cellHalfWidth?: number;
  cellSeconds?: number;
  cellMaxPasses?: number;
  /** A cell's point whose row has other participants timed in the same rounds: passes until its
   * leads' paired intervals (src/runner/lead-precision.ts) are within this relative half-width,
   * instead of its own QPS interval; within the same caps. 0 or absent: the own interval only. */
  leadHalfWidth?: number;
}

/** The fewest quiet passes whose interval may end a cell point's timing: the bootstrap over a
 * handful of passes can read narrow by chance. */
export const MIN_CELL_PASSES = 10;

/** Busy passes a point may retake, per pass it needs, before it is flagged busy-machine. */
export const BUSY_RETAKES = 3;

/** Queries of the untimed warm-up pass an engine gets when its turn comes after another
 * engine's: the other engine's passes have evicted its index from the CPU caches. */
const WARM_UP_QUERIES = 100;

/** Most seconds one group's timing waits for a slowed host: past it, slowed rounds are only
 * retaken (and their points flagged when they run out of retakes). */
const HOST_WAIT_GROUP_S = 4;

/** What the timing needs of the engine. */
export interface TimedEngine {
  request<T extends HostReply['type']>(req: HostRequest, timeoutS: number, onRetry?: (e: HostError) => void): Promise<Extract<HostReply, { type: T }>>;
  loadPids(): { engine: number | undefined; engineTree: boolean; host: number | undefined };
}

/** How a view drives the participant, as results and tables say it. */
export function drivenBy(p: LoadedParticipant, view: View, clients: number, threads: number): { clients: number; threads: number; text: string } {
  const own = p.adapter.searchParallelism?.() ?? null;
  if (view === 'latency') return { clients: 1, threads: 1, text: own ? `1 at a time, ${own}` : '1 at a time' };
  if (p.adapter.concurrentSearch) return { clients, threads: 1, text: `${clients} in flight` };
  if (p.adapter.reopenInThreads && threads > 1) return { clients: 1, threads, text: `${threads} threads` };
  return { clients: 1, threads: 1, text: own ? `1 at a time, ${own}` : '1 at a time (no concurrent search)' };
}

export type { Entry, Item } from './timed-entry.ts';
import type { Entry, Item } from './timed-entry.ts';

/** What one group's timing is given. */
export interface GroupTimingSpec {
  engine: TimedEngine;
  p: LoadedParticipant;
  g: AskedGroup;
  queries: number[];
  clients: number;
  threads: number;
  timing: Timing;
  pointTimeoutS: number;
  busyCores: number;
  hostSlow?: number;
  hostSpeed?: HostSpeedMeter;
  loadMeter?: { start(): void; stop(): { otherCores: number | null; steal: number | null } };
  onProgress: (what: string) => void;
  /** Where passes are kept as they complete, and found again by a resumed run. */
  kept?: KeptProgress;
}

const quietPasses = (e: Entry) => e.busy.filter((b) => !b).length;
/** The relative half-width of the entry's QPS interval over its quiet passes, computed once per
 * pass count (the rounds ask for it often; a bootstrap is a thousand resamples). */
function quietHalfWidth(e: Entry): number {
  const n = e.pass.qps.length;
  if (e.halfWidth?.passes !== n) e.halfWidth = { passes: n, value: qpsHalfWidth(e.pass.qps.filter((_, i) => !e.busy[i])) };
  return e.halfWidth.value;
}

/** Whether the entry is timed to the cells' precision. */
export const forCell = (e: Entry, t: Timing) => (t.cellHalfWidth ?? 0) > 0 && e.view === 'throughput' && e.item.readsCell === true;
/** A cell point's caps: quiet seconds and passes. */
export const cellCaps = (t: Timing) => ({ seconds: t.cellSeconds ?? Infinity, passes: Math.max(t.maxPasses, t.cellMaxPasses ?? t.maxPasses) });

/** The timed passes of one group's entries. */
export class GroupTiming {
  readonly entries: Entry[];
  private readonly filters: AskedGroup['filters'];
  private readonly meter: { start(): void; stop(): { otherCores: number | null; steal: number | null } };
  private waitedS = 0;
  private ownRound = 0;
  /** The same group's timings of the other participants in the shared rounds (timeInRounds). */
  peers: GroupTiming[] = [];

  constructor(
    readonly spec: GroupTimingSpec,
    items: Item[],
    views: readonly View[],
  ) {
    const { p, g, queries } = spec;
    this.filters = queries.map((q) => g.filters[q]);
    this.entries = items.flatMap((item) =>
      views.map((view) => ({
        item,
        view,
        drive: drivenBy(p, view, spec.clients, spec.threads),
        pass: {
          qps: [],
          wall_s: [],
          latency_ms: { mean: [], p50: [], p95: [], p99: [], p999: [] },
          other_cores: [],
          steal: [],
          host_ms: [],
          at_unix_s: [],
          round_at_unix_s: [],
          read_bytes: [],
          major_faults: [],
        },
        busy: [],
        quietSeconds: 0,
        maxLatency: 0,
        varied: new Set<number>(),
        demand: { weighted: 0, wall: 0 },
        threadsUsed: 1,
        done: false,
      })),
    );
    const kept = spec.kept;
    if (kept) for (const e of this.entries) replayPasses(e, kept.journal.passesOf(keyOf(kept, e.item.knobs), e.view));
    for (const e of this.entries) e.done = e.busy.length > 0 && this.finished(e);
    const pids = spec.engine.loadPids();
    this.meter = spec.loadMeter ?? new MachineLoadMeter(() => [process.pid, ...(pids.engine !== undefined ? [pids.engine] : [])]);
  }

  get done(): boolean {
    return this.entries.every((e) => e.done);
  }

  /** Passes the entry is expected to need, from its passes so far (1 before its first). */
  private wanted(e: Entry): number {
    const t = this.spec.timing;
    if (e.pass.wall_s.length === 0) return 1;
    const meanWall = e.pass.wall_s.reduce((a, b) => a + b, 0) / e.pass.wall_s.length;
    const forSeconds = meanWall > 0 ? Math.ceil(t.minSeconds / meanWall) : 1;
    const base = Math.min(t.maxPasses, Math.max(t.minPasses, forSeconds));
    if (!forCell(e, t)) return base;
    // A cell's point: the passes its interval so far says the target half-width needs (the
    // half-width shrinks as one over the square root of the passes), within its caps.
    const quiet = quietPasses(e);
    const hw = quietHalfWidth(e);
    let forWidth = Math.max(MIN_CELL_PASSES, Number.isFinite(hw) && hw > 0 ? Math.ceil(quiet * (hw / t.cellHalfWidth!) ** 2) : base);
    const leads = this.leadWidths(e);
    if (leads) {
      // Its leads' pairs so far say what the lead target needs (a lead with too few pairs to
      // judge keeps the own interval's estimate).
      const judged = leads.filter((l) => Number.isFinite(l.hw));
      if (judged.length === leads.length) forWidth = Math.max(MIN_CELL_PASSES, ...judged.map((l) => Math.ceil(l.pairs * (l.hw / t.leadHalfWidth!) ** 2)));
    }
    const caps = cellCaps(t);
    const cap = Math.min(caps.passes, meanWall > 0 ? Math.max(1, Math.floor(caps.seconds / meanWall)) : caps.passes);
    return Math.max(base, Math.min(cap, forWidth));
  }

  /** Whether the entry has all the passes it needs. */
  private finished(e: Entry): boolean {
    const t = this.spec.timing;
    const quiet = quietPasses(e);
    // A busy machine gets a few retakes, not max_passes: a slow point's would hold the run.
    const busyPasses = e.busy.length - quiet;
    if (busyPasses >= BUSY_RETAKES * t.minPasses) return true;
    const cell = forCell(e, t);
    if (e.busy.length >= (cell ? cellCaps(t).passes : t.maxPasses)) return true;
    const base = quiet >= t.minPasses && e.quietSeconds >= t.minSeconds;
    if (!base || !cell) return base;
    if (e.quietSeconds >= cellCaps(t).seconds) return true;
    if (quiet < MIN_CELL_PASSES) return false;
    const leads = this.leadWidths(e);
    // A lead whose other side is done takes no more pairs: it is as precise as it will get.
    if (leads) return leads.every((l) => l.other.done || l.hw <= t.leadHalfWidth!);
    const hw = quietHalfWidth(e);
    return Number.isFinite(hw) && hw <= t.cellHalfWidth!;
  }

  /** A cell point's leads that must be precise, or null when the lead rule does not apply. */
  private leadWidths(e: Entry): LeadWidth[] | null {
    return (this.spec.timing.leadHalfWidth ?? 0) > 0 ? leadWidths(e, this, this.peers) : null;
  }

  /** Rounds this group's timing is expected to take: its most-wanting entry's passes. */
  plannedRounds(): number {
    let most = 1;
    for (const e of this.entries) if (!e.done) most = Math.max(most, this.wanted(e));
    return most;
  }

  /** Whether the entry takes a pass in round r of a timing planned for `rounds` rounds: when its
   * quiet passes fall behind an even share of the rounds so far (from the last planned round on,
   * every round until it is done). */
  private due(e: Entry, r: number, rounds: number): boolean {
    if (e.done) return false;
    if (r >= rounds - 1) return true;
    // A cell's point whose leads are paired takes a pass every round until done, as do its
    // counterparts: spread over the timing, a slow point's few passes fell in rounds where the
    // row's best, done early, took none, and its lead could not be paired.
    if (forCell(e, this.spec.timing) && this.leadWidths(e) !== null) return true;
    return quietPasses(e) < Math.ceil(((r + 1) * this.wanted(e)) / rounds);
  }

  /**
   * Round r of a timing planned for `rounds` rounds: one pass of each due entry (alternating
   * direction), judged busy or not over the whole round. `warmUp`: another engine ran since
   * this one's last pass, so an untimed warm-up pass comes first. `roundAt`: when the shared round
   * began, stored with each pass as the round's identity. Returns whether any pass ran.
   */
  async round(r: number, rounds: number, warmUp: boolean, roundAt: number): Promise<boolean> {
    const { engine, g, queries, pointTimeoutS, busyCores } = this.spec;
    const round = this.ownRound++;
    const order = (round % 2 === 0 ? this.entries : [...this.entries].reverse()).filter((e) => this.due(e, r, rounds));
    if (order.length === 0) return false;
    if (warmUp) await this.warmUp(order[0]);
    // Load is judged per round: /proc's 10 ms ticks are too coarse for one pass of a few ms.
    const inRound: Entry[] = [];
    const found = new Map<Entry, { maxLatencyMs: number; varied: number[]; demand: number | null }>();
    // The engine's processes, found once a round (a server's tree walks all of /proc); found
    // again after a pass only for a server, whose connections may fork backends meanwhile.
    let processes = engineProcesses(engine.loadPids());
    this.meter.start();
    for (const e of order) {
      const demand = new DemandMeter(engine.loadPids().host);
      const at = Date.now() / 1000;
      const ioBefore = snapshotIo(processes);
      let reply: PointReply;
      try {
        reply = (
          await engine.request<'point'>(
            { type: 'point', knobs: e.item.knobs, k: g.k, queries, filters: this.filters, clients: e.drive.clients, threads: e.drive.threads, ids: false },
            pointTimeoutS,
          )
        ).reply;
      } catch (err) {
        if (!(err instanceof HostError) || err.userError) throw err;
        e.skipped = err.message;
        e.done = true;
        continue;
      }
      const failed = reply.errors.filter((x) => x !== null);
      if (failed.length > 0) {
        e.skipped = `${failed.length} of ${queries.length} queries failed: ${failed[0]}`;
        e.done = true;
        continue;
      }
      e.threadsUsed = Math.max(e.threadsUsed, reply.threadsUsed?.length ?? 1);
      const lat = passLatency(reply.latenciesMs);
      e.pass.qps.push(queries.length / reply.wallS);
      e.pass.wall_s.push(reply.wallS);
      e.pass.at_unix_s.push(at);
      e.pass.round_at_unix_s.push(roundAt);
      if (engine.loadPids().engineTree) processes = engineProcesses(engine.loadPids());
      const io = ioBetween(ioBefore, snapshotIo(processes));
      e.pass.read_bytes.push(io?.readBytes ?? null);
      e.pass.major_faults.push(io?.majorFaults ?? null);
      for (const k of ['mean', 'p50', 'p95', 'p99', 'p999'] as const) e.pass.latency_ms[k].push(lat[k]);
      e.maxLatency = Math.max(e.maxLatency, lat.max);
      const d = demand.busiestThread();
      if (d !== null) {
        e.demand.weighted += d * reply.wallS;
        e.demand.wall += reply.wallS;
      }
      const first = e.item.recall!.digests;
      const varied: number[] = [];
      if (first && reply.digests) for (let i = 0; i < first.length; i++) if (first[i] !== reply.digests[i]) varied.push(i);
      for (const i of varied) e.varied.add(i);
      found.set(e, { maxLatencyMs: lat.max, varied, demand: d });
      inRound.push(e);
    }
    const load = this.meter.stop();
    const hostSlow = this.spec.hostSpeed && this.spec.hostSlow ? this.spec.hostSlow : 0;
    // Off (host_slow 0), the probe only records the host's speed, every few seconds.
    const host = this.spec.hostSpeed ? await this.spec.hostSpeed.sample(hostSlow > 0 ? undefined : RECORD_EVERY_S) : null;
    const slowHost = hostSlow > 0 && host !== null && host.slowdown > hostSlow;
    const busy = slowHost || (load.otherCores !== null && load.otherCores > busyCores) || isBusy({ otherCores: null, steal: load.steal });
    for (const e of inRound) {
      e.pass.other_cores.push(load.otherCores);
      e.pass.steal.push(load.steal);
      e.pass.host_ms.push(host?.ms ?? null);
      e.busy.push(busy);
      (e.rounds ??= []).push(r);
      if (!busy) e.quietSeconds += e.pass.wall_s[e.pass.wall_s.length - 1];
      if (this.spec.kept) this.spec.kept.journal.keepPass(keyOf(this.spec.kept, e.item.knobs), passRecord(e, found.get(e)!));
      e.done = this.finished(e);
    }
    this.spec.onProgress(
      `${g.key}: timing round ${r + 1}${slowHost ? ` (host slowed x${host!.slowdown.toFixed(2)}: retaken)` : busy ? ' (machine busy: retaken)' : ''}, ${this.entries.filter((x) => x.done).length}/${this.entries.length} points done`,
    );
    // A slowed host: probe (which keeps the cores busy, unlike sleeping, whose wake-up a probe
    // would time) until it is back to speed, a few seconds at most, rather than spend the next
    // round's passes on it.
    if (slowHost && !this.done && this.waitedS < HOST_WAIT_GROUP_S) {
      const t0 = performance.now();
      await this.spec.hostSpeed!.waitForSpeed(hostSlow);
      this.waitedS += (performance.now() - t0) / 1000;
    }
    return true;
  }

  /** An untimed pass over the first queries at the entry's knobs and drive. */
  private async warmUp(e: Entry): Promise<void> {
    const { engine, g, queries, pointTimeoutS } = this.spec;
    const some = queries.slice(0, Math.min(queries.length, WARM_UP_QUERIES));
    try {
      await engine.request<'point'>(
        {
          type: 'point',
          knobs: e.item.knobs,
          k: g.k,
          queries: some,
          filters: some.map((q) => g.filters[q]),
          clients: e.drive.clients,
          threads: e.drive.threads,
          ids: false,
        },
        pointTimeoutS,
      );
    } catch (err) {
      // A failing engine fails its timed pass next, with the reason, where it is recorded.
      if (!(err instanceof HostError) || err.userError) throw err;
    }
  }
}

/** Progress of a timing in rounds: rounds run and planned (the plan grows when passes are
 * retaken or slower than the first), and entries done of all. */
export interface RoundsProgress {
  round: number;
  rounds: number;
  done: number;
  total: number;
}

/**
 * Times several groups (of one participant, or of several: interleaved) together: round after
 * round, each group whose entries are due takes its passes, in alternating order, until every
 * entry is done. An engine whose turn follows another engine's gets a warm-up pass first.
 */
export async function timeInRounds(timings: GroupTiming[], onRound?: (p: RoundsProgress) => void, onDone?: (t: GroupTiming) => Promise<void>): Promise<void> {
  let last: TimedEngine | null = null;
  const total = timings.reduce((n, t) => n + t.entries.length, 0);
  // A group whose points are all done is handed on at once (stored), not at the end of every
  // group's rounds: a long shared timing stopped part-way keeps the groups it finished.
  const handed = new Set<GroupTiming>();
  const handOn = async (t: GroupTiming): Promise<void> => {
    if (!onDone || handed.has(t) || !t.done) return;
    handed.add(t);
    await onDone(t);
  };
  // A group's row: the other participants' timings of the same group, whose leads pair by round.
  for (const t of timings) t.peers = timings.filter((o) => o !== t && o.spec.g.key === t.spec.g.key && o.spec.p.name !== t.spec.p.name);
  for (const t of timings) await handOn(t);
  for (let r = 0; timings.some((t) => !t.done); r++) {
    const rounds = Math.max(1, ...timings.map((t) => t.plannedRounds()));
    const order = r % 2 === 0 ? timings : [...timings].reverse();
    const roundAt = Date.now() / 1000;
    for (const t of order) {
      if (t.done) continue;
      const ran = await t.round(r, rounds, last !== null && last !== t.spec.engine, roundAt);
      if (ran) last = t.spec.engine;
      await handOn(t);
    }
    const planned = Math.max(r + 1, ...timings.map((t) => (t.done ? 0 : t.plannedRounds())));
    onRound?.({ round: r + 1, rounds: planned, done: timings.reduce((n, t) => n + t.entries.filter((e) => e.done).length, 0), total });
  }
}
