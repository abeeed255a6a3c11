// The load generator (src/loadgen): HDR percentiles against known distributions, the open-loop
// schedule (intended send times, so a stall shows in the requests queued behind it: no
// coordinated omission), the client-limited flag on a deliberately slow client, and a sweep and
// open loop against real engines through `vecbench run`.
// vecbench-test: alone (the client-limited flag depends on the client getting its core).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { nowMs } from '../../src/loadgen/clock.ts';
import { parseLevels } from '../../src/loadgen/cli.ts';
import { CpuMeter, DemandMeter } from '../../src/runner/cpu.ts';
import { closedLoop, openLoop, OK } from '../../src/loadgen/driver.ts';
import { isClientLimited } from '../../src/runner/client-limit.ts';
import { LatencyHistogram } from '../../src/loadgen/histogram.ts';
import { WorkerPool } from '../../src/loadgen/pool.ts';
import { poissonSchedule } from '../../src/loadgen/schedule.ts';
import { antiScalingOf, saturationOf } from '../../src/loadgen/sweep.ts';
import { concurrencySchema, openLoopSchema } from '../../src/loadgen/schema.ts';
import { httpCeiling, inProcessCeiling } from '../../src/loadgen/ceiling.ts';
import { idsFromJson } from '../../src/loadgen/clients/http-json.ts';
import { makeRng } from '../../src/util/hash.ts';

const TEST_CLIENT = fileURLToPath(new URL('../helpers/loadgen-clients.ts', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));

/** The exact order statistic the histogram approximates: the smallest value with at least p %
 * of the values at or below it. */
function exactPercentile(sorted: Float64Array, p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

describe('HDR latency histograms', () => {
  test('percentiles of a uniform distribution are within 0.1 % of the exact ones', () => {
    // 1 us .. 100 ms in 1 us steps: p50 = 50 ms, p99 = 99 ms, p99.9 = 99.9 ms.
    const values = Float64Array.from({ length: 100_000 }, (_, i) => (i + 1) / 1000);
    const h = LatencyHistogram.ofMs(values);
    assert.equal(h.count, 100_000);
    for (const p of [50, 95, 99, 99.9]) {
      const exact = exactPercentile(values, p);
      assert.ok(Math.abs(h.percentileMs(p) - exact) <= exact * 0.001 + 0.001, `p${p}: ${h.percentileMs(p)} vs ${exact}`);
    }
    const s = h.summary();
    assert.ok(Math.abs(s.mean - 50.0005) < 0.05, `mean ${s.mean}`);
    assert.ok(Math.abs(s.max - 100) <= 0.1, `max ${s.max}`);
  });

  test('percentiles of a long-tailed (exponential + rare stalls) distribution match the order statistics', () => {
    const rng = makeRng(5);
    // Mean 2 ms, plus 0.5 % of requests stalled by 200-400 ms: p99.9 must land in the stalls.
    const values = Float64Array.from({ length: 50_000 }, () => -Math.log(1 - rng.uniform()) * 2 + (rng.uniform() < 0.005 ? 200 + 200 * rng.uniform() : 0));
    const sorted = Float64Array.from(values).sort();
    const h = LatencyHistogram.ofMs(values);
    for (const p of [50, 95, 99, 99.9]) {
      // Within 3 significant digits (and whole microseconds) of the order statistic at that rank,
      // or of a neighbouring rank: where the values are sparse (the stalls) a rank apart is far.
      const rank = Math.ceil((p / 100) * sorted.length) - 1;
      const lo = sorted[Math.max(0, rank - 1)] * 0.999 - 0.0015;
      const hi = sorted[Math.min(sorted.length - 1, rank + 1)] * 1.001 + 0.0015;
      const v = h.percentileMs(p);
      assert.ok(v >= lo && v <= hi, `p${p}: ${v} not in [${lo}, ${hi}] (exact ${exactPercentile(sorted, p)})`);
    }
    assert.ok(h.percentileMs(99.9) >= 200, 'the stalls are in p99.9');
    assert.ok(h.percentileMs(99) < 20, 'p99 is below the stalls (0.5 % of requests)');
  });

  test('histograms added up (as the pool merges its workers) equal one of all values, also after encoding', () => {
    const rng = makeRng(9);
    const a = Float64Array.from({ length: 7000 }, () => rng.uniform() * 10);
    const b = Float64Array.from({ length: 3000 }, () => 50 + rng.uniform() * 10);
    const merged = LatencyHistogram.decode(LatencyHistogram.ofMs(a).encode());
    merged.add(LatencyHistogram.decode(LatencyHistogram.ofMs(b).encode()));
    const all = LatencyHistogram.ofMs(Float64Array.from([...a, ...b]));
    assert.equal(merged.count, 10_000);
    for (const p of [50, 69, 71, 99, 99.9]) assert.equal(merged.percentileMs(p), all.percentileMs(p), `p${p}`);
    assert.ok(merged.percentileMs(69) < 10 && merged.percentileMs(71) >= 50, 'the two halves are where they belong');
  });
});

describe('open-loop schedule', () => {
  test('Poisson arrivals: increasing, seeded, mean gap 1 / rate, exponential spread', () => {
    const s = poissonSchedule(500, 20_000, 3);
    assert.deepEqual(s, poissonSchedule(500, 20_000, 3));
    assert.notDeepEqual(s, poissonSchedule(500, 20_000, 4));
    const gaps = Array.from(s, (t, i) => t - (i === 0 ? 0 : s[i - 1]));
    assert.ok(gaps.every((g) => g > 0));
    const mean = gaps.reduce((x, y) => x + y, 0) / gaps.length;
    assert.ok(Math.abs(mean - 2) < 0.06, `mean gap ${mean} ms, want 2`);
    const sd = Math.sqrt(gaps.reduce((x, g) => x + (g - mean) ** 2, 0) / gaps.length);
    assert.ok(Math.abs(sd / mean - 1) < 0.05, `coefficient of variation ${sd / mean}, want 1`);
    assert.throws(() => poissonSchedule(0, 10, 1), /positive/);
  });

  test('a 200 ms stall shows in the latency of every request scheduled behind it (no coordinated omission)', async () => {
    // A synchronous engine (one search at a time) that blocks the thread for 200 ms on request
    // 40; requests are due every 2 ms. Measured from the send, the requests queued behind the
    // stall would look instant; measured from their intended times, each carries its wait.
    const n = 200;
    const intended = Float64Array.from({ length: n }, (_, i) => i * 2);
    const stallAt = 40;
    const spin = (ms: number) => {
      const end = performance.now() + ms;
      while (performance.now() < end);
    };
    const search = (i: number) => {
      if (i === stallAt) spin(200);
      return [i];
    };
    const start = nowMs() + 20;
    const r = await openLoop(search, {
      indices: Int32Array.from({ length: n }, (_, i) => i),
      intendedMs: intended,
      startAtMs: start,
      maxInFlight: 1,
      timeoutMs: Infinity,
    });
    const lat = new Float64Array(n);
    r.indices.forEach((i, j) => (lat[i] = r.latenciesMs[j]));
    assert.ok(r.status.every((s) => s === OK));
    assert.ok(lat[stallAt] >= 199, `the stalled request: ${lat[stallAt]}`);
    // Request i was due 2 * (i - 40) ms after the stall began: it waited the rest of the stall.
    for (let i = stallAt + 1; i < stallAt + 90; i++) {
      const owed = 200 - (intended[i] - intended[stallAt]);
      assert.ok(lat[i] >= owed - 2, `request ${i} due ${intended[i] - intended[stallAt]} ms into the stall shows ${lat[i]} ms, owed ${owed}`);
    }
    const h = LatencyHistogram.decode(r.histogram);
    assert.ok(h.percentileMs(75) >= 20, `a quarter of the requests were behind the stall: p75 ${h.percentileMs(75)}`);

    // The same stall in a closed loop: one slow request, and the ones after it look fine.
    const c = await closedLoop(search, { inFlight: 1, timeoutMs: Infinity, n });
    const slow = Array.from(c.latenciesMs).filter((x) => x >= 100).length;
    assert.equal(slow, 1, 'closed loop hides the queueing: only the stalled request is slow');
  });

  test('through worker threads too: a client thread that stalls once delays what was due meanwhile', async () => {
    const n = 150;
    const queries = Float32Array.from({ length: n }, (_, i) => i);
    const pool = await WorkerPool.start({ module: TEST_CLIENT, options: { behaviour: 'stall', ms: 200, at: 30 } }, 1, 8, queries, 1);
    try {
      const intended = Float64Array.from({ length: n }, (_, i) => i * 2);
      const r = await pool.open(
        10,
        Array.from({ length: n }, (_, i) => i),
        new Array(n).fill(null),
        intended,
        64,
        10_000,
      );
      assert.equal(r.errors + r.timeouts, 0);
      // Ids come back per request, in request order.
      for (let i = 0; i < n; i++) assert.deepEqual(Array.from(r.ids.subarray(r.offsets[i], r.offsets[i + 1])), [i]);
      const behind = Array.from({ length: 60 }, (_, j) => 31 + j).filter((i) => intended[i] - intended[30] < 180);
      for (const i of behind) assert.ok(r.latenciesMs[i] >= 200 - (intended[i] - intended[30]) - 5, `request ${i}: ${r.latenciesMs[i]} ms`);
      // They left late, and the pool says so (the client fell behind its schedule).
      assert.ok(Math.max(...Array.from(r.sendLagMs)) >= 150, 'send lag records the stall');
      assert.ok(isClientLimited({ mode: 'threads', qps: 0, sendLagP99Ms: Array.from(r.sendLagMs).sort((a, b) => a - b)[Math.ceil(0.99 * n) - 1] }));
    } finally {
      await pool.close();
    }
  });
});

describe('client-limited flag', () => {
  test('a client that burns CPU on every request is flagged; one that waits on a slow engine is not', async () => {
    const queries = Float32Array.from({ length: 100 }, (_, i) => i);
    const measure = async (behaviour: 'burn' | 'wait', ms: number, inFlight: number, n: number) => {
      const pool = await WorkerPool.start({ module: TEST_CLIENT, options: { behaviour, ms } }, 1, inFlight, queries, 1);
      try {
        const cpu = new CpuMeter({ pid: process.pid, tree: false });
        const demand = new DemandMeter(process.pid);
        const r = await pool.closed(
          10,
          Array.from({ length: n }, (_, i) => i % 100),
          new Array(n).fill(null),
          inFlight,
          10_000,
        );
        return { qps: n / r.wallS, wallS: r.wallS, n, cpu: cpu.cores()!, busiest: demand.busiestThread() };
      } finally {
        await pool.close();
      }
    };
    // The burning client's thread is always runnable (3 ms of spinning per request): running or
    // waiting for a core, it reads busy ~100 % however loaded the machine is. The waiting client's
    // thread wakes 100 times a second for a moment: its busy share is those moments, plus the
    // run-queue wait of each wake-up on a loaded machine (what made a 3 ms wait at 4 in flight,
    // 1,333 wake-ups a second, read 52 % busy on an overloaded machine).
    // 1,000 burning requests (3 s): the meter's wall time also holds the pool's start and its
    // reply's trip back, tens of milliseconds on a loaded machine, which over 300 requests (0.9 s)
    // once brought the burning thread's share under the 0.9 bound.
    const burn = await measure('burn', 3, 4, 1000);
    const wait = await measure('wait', 20, 2, 100);
    // The busiest thread's run + run-queue wait reads a saturated thread as busy even when other
    // work on the machine keeps it off the CPU; CPU time is the fallback without schedstat.
    const busy = (m: { cpu: number; busiest: number | null }) => m.busiest ?? m.cpu;
    assert.ok(busy(burn) >= 0.9, `the burning client kept its thread busy: ${JSON.stringify(burn)}`);
    assert.ok(isClientLimited({ mode: 'threads', qps: burn.qps, busiestThread: busy(burn) }));
    assert.ok(!isClientLimited({ mode: 'threads', qps: wait.qps, busiestThread: busy(wait) }), `the waiting client is not flagged: ${JSON.stringify(wait)}`);
    // The margin, from what was measured: the waiting thread's busy time per request is small
    // beside the 20 ms each request waits (the burning one's is its whole 3 ms).
    const busyPerRequestMs = (m: { cpu: number; busiest: number | null; wallS: number; n: number }) => (busy(m) * m.wallS * 1000) / m.n;
    assert.ok(busyPerRequestMs(wait) < 20 / 4, `waiting client: ${busyPerRequestMs(wait).toFixed(2)} ms busy per request`);
    assert.ok(busyPerRequestMs(burn) >= 3 * 0.9, `burning client: ${busyPerRequestMs(burn).toFixed(2)} ms busy per request`);
    // A protocol's null ceiling flags a point whose rate nears it, whatever its threads' load.
    assert.ok(isClientLimited({ mode: 'threads', qps: 600, ceilingQps: 1000, busiestThread: 0.1 }));
    assert.ok(!isClientLimited({ mode: 'threads', qps: 100, ceilingQps: 1000, busiestThread: 0.1 }));
  });

  test('in process: a rate near the null ceiling is flagged, a slow engine is not', async () => {
    const ceiling = await inProcessCeiling(1, 50_000);
    assert.equal(ceiling.protocol, 'in-process');
    assert.ok(ceiling.rps > 10_000, `the host loop answers a null engine fast: ${ceiling.rps}`);
    assert.ok(isClientLimited({ mode: 'in-process', qps: ceiling.rps * 0.8, ceilingQps: ceiling.rps }));
    assert.ok(!isClientLimited({ mode: 'in-process', qps: ceiling.rps * 0.05, ceilingQps: ceiling.rps }));
  });

  test("HTTP ceiling: the undici client against the null HTTP server, with both sides' CPU", async () => {
    const f = await httpCeiling({ inFlight: 8, workers: 1, seconds: 1 });
    assert.equal(f.protocol, 'http');
    assert.ok(f.rps > 50, `rps ${f.rps}`);
    assert.ok(f.client_cpu_cores !== null && f.client_cpu_cores > 0);
    assert.ok(f.null_engine_cpu_cores !== null && f.null_engine_cpu_cores > 0, 'the null server did answer');
    assert.deepEqual(idsFromJson(Buffer.from('{"ids":[[12,7,300]],"distances":[[0.1,0.2,0.3]]}')), [12, 7, 300]);
    assert.deepEqual(idsFromJson(Buffer.from('{"took":1,"ids":[5]}')), [5]);
    assert.throws(() => idsFromJson(Buffer.from('{"error":"x"}')), /no "ids"/);
  });
});

describe('sweep readings', () => {
  test('levels parse with "..." and saturation / anti-scaling are read from the points', () => {
    assert.deepEqual(parseLevels('1,2,4,...,64', '--concurrency', true), [1, 2, 4, 8, 16, 32, 64]);
    assert.deepEqual(parseLevels('100,200,...,500', '--open-loop', false), [100, 200, 300, 400, 500]);
    assert.deepEqual(parseLevels('8,1,2', '--concurrency', true), [1, 2, 8]);
    assert.throws(() => parseLevels('1,x', '--concurrency', true), /not a positive integer/);
    const pts = [
      { in_flight: 1, qps: 100 },
      { in_flight: 2, qps: 190 },
      { in_flight: 4, qps: 300 },
      { in_flight: 8, qps: 310 },
      { in_flight: 16, qps: 250 },
    ];
    assert.deepEqual(saturationOf(pts), { in_flight: 4, qps: 300 });
    assert.deepEqual(antiScalingOf(pts), [{ from_in_flight: 8, to_in_flight: 16, qps_from: 310, qps_to: 250 }]);
  });
});

describe('vecbench run --concurrency / --open-loop on real engines', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-loadgen-'));
  // The PostgreSQL server runs as its own user and must reach its data directory under here.
  chmodSync(dir, 0o755);
  after(() => rmSync(dir, { recursive: true, force: true }));
  const vecbench = (...args: string[]) =>
    spawnSync(process.execPath, [BIN, ...args], {
      encoding: 'utf8',
      env: { ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: join(dir, 'data') },
      timeout: 900_000,
    });

  test('hnswlib (searches one at a time) and lancedb (overlapping): sweep, open loop, flags, report', () => {
    const out = join(dir, 'out');
    const args = ['--dataset', 'synthetic-3000', '--groups', 'none/10', '--out', out, '--clients', '4', '--load-requests', '200', '--open-step', '0.5'];
    // First the sweep alone for hnswlib; then, with both participants, the complete hnswlib result
    // gets its missing open loop (groups and sweep kept) and lancedb everything.
    const first = vecbench('run', ...args, '--participants', 'hnswlib', '--concurrency', '1,2,4');
    assert.equal(first.status, 0, first.stderr);
    const hnswPath = join(out, 'synthetic-3000', 'hnswlib.json');
    const before = JSON.parse(readFileSync(hnswPath, 'utf8'));
    assert.ok(before.extra.concurrency && before.extra.open_loop === undefined);
    const r = vecbench('run', ...args, '--participants', 'hnswlib,lancedb', '--concurrency', '1,2,4', '--open-loop', '100,200');
    assert.equal(r.status, 0, r.stderr);
    const withOpen = JSON.parse(readFileSync(hnswPath, 'utf8'));
    assert.deepEqual(withOpen.extra.concurrency, before.extra.concurrency, 'the sweep was kept');
    assert.deepEqual(withOpen.groups, before.groups, 'the groups were kept');
    assert.match(r.stdout, /concurrency sweep \(closed loop\)/);
    assert.match(r.stdout, /open loop \(Poisson arrivals/);
    for (const name of ['hnswlib', 'lancedb']) {
      const res = JSON.parse(readFileSync(join(out, 'synthetic-3000', `${name}.json`), 'utf8'));
      const sweep = concurrencySchema.parse(res.extra.concurrency);
      const open = openLoopSchema.parse(res.extra.open_loop);
      assert.equal(sweep.group, 'none/10');
      assert.equal(sweep.client.mode, 'in-process');
      assert.ok(sweep.client.ceiling_qps! > 0);
      const levels = sweep.points.map((p) => p.in_flight);
      assert.deepEqual(levels, name === 'hnswlib' ? [1] : [1, 2, 4], `${name} levels`);
      if (name === 'hnswlib') assert.match(sweep.notes.join(' '), /do not overlap/);
      for (const p of sweep.points) {
        assert.ok(p.qps > 0 && p.requests >= 200 && p.errors === 0 && p.timeouts === 0);
        assert.ok(p.recall !== null && p.recall >= 0.9, `${name} recall ${p.recall} at ${JSON.stringify(sweep.knobs)}`);
        assert.ok(p.p50_ms! <= p.p99_ms! && p.p99_ms! <= p.p999_ms! && p.p999_ms! <= p.max_ms! * 1.001);
        assert.ok(p.engine_cpu_pct !== null);
        // The null ceiling is tens of thousands per second: these engines are not client-bound.
        assert.ok(!p.flags.includes('client-limited'), `${name} in-flight ${p.in_flight} flagged: ${p.qps} vs ${sweep.client.ceiling_qps}`);
      }
      assert.deepEqual(
        open.steps.map((s) => s.offered_qps),
        [100, 200],
      );
      for (const s of open.steps) {
        assert.ok(s.requests >= 50 && s.achieved_qps > 0 && s.p99_ms !== null);
        assert.equal(s.within_budget, s.p99_ms! <= 100 && s.errors + s.timeouts === 0 && !s.flags.includes('client-limited'));
      }
      assert.equal(
        open.max_qps_within_budget,
        open.steps
          .filter((s) => s.within_budget)
          .map((s) => s.offered_qps)
          .sort((a, b) => b - a)[0] ?? null,
      );
      // Ordinary points carry flags too (none expected here), and the ceiling was measured for them.
      for (const g of res.groups) for (const p of g.points) assert.ok(Array.isArray(p.flags) && !p.flags.includes('client-limited'));
    }
    const json = vecbench('report', '--out', out, '--json');
    assert.equal(json.status, 0, json.stderr);
    const load = JSON.parse(json.stdout).load as { participant: string; concurrency: unknown; open_loop: unknown }[];
    assert.deepEqual(
      load.map((l) => l.participant),
      ['hnswlib', 'lancedb'],
    );
    assert.ok(load.every((l) => l.concurrency && l.open_loop));
    const page = readFileSync(join(out, 'report', 'index.html'), 'utf8');
    assert.match(page, /Concurrency sweep/);
    assert.match(page, /Open-loop latency/);
    assert.match(page, /qps by in_flight/);
    assert.match(page, /p99_ms by offered_qps/);

    // Asked again, a complete result with both sections is left as it is.
    const stored = readFileSync(hnswPath, 'utf8');
    const again = vecbench('run', ...args, '--participants', 'hnswlib', '--concurrency', '1,2,4', '--open-loop', '100,200');
    assert.equal(again.status, 0, again.stderr);
    assert.equal(readFileSync(hnswPath, 'utf8'), stored);
  });

  test('pgvector on a real PostgreSQL: driven from worker threads through its load client', () => {
    // Needs participants/pgvector/provision.sh (CI runs it); a missing server fails with its message.
    const out = join(dir, 'out-pg');
    const r = vecbench(
      'run',
      '--dataset',
      'synthetic-3000',
      '--participants',
      'pgvector',
      '--groups',
      'none/10',
      '--out',
      out,
      '--clients',
      '4',
      '--concurrency',
      '1,4',
      '--open-loop',
      '1000',
      '--open-step',
      '2',
      '--load-requests',
      '3000',
      '--client-workers',
      '2',
    );
    // 3,000 requests a sweep point and 2,000 in the open loop: enough server CPU to move /proc's
    // 10 ms ticks at the cheapest knobs (200 requests took 20 ms).
    assert.equal(r.status, 0, r.stderr);
    const res = JSON.parse(readFileSync(join(out, 'synthetic-3000', 'pgvector.json'), 'utf8'));
    const sweep = concurrencySchema.parse(res.extra.concurrency);
    const open = openLoopSchema.parse(res.extra.open_loop);
    assert.equal(sweep.client.mode, 'workers');
    assert.equal(sweep.client.workers, 2);
    assert.match(sweep.client.client, /participants\/pgvector\/load-client\.ts$/);
    // The points were held against the PostgreSQL protocol's null ceiling, measured at the
    // sweep's levels and the open loop's.
    assert.equal(sweep.client.protocol, 'postgres');
    assert.deepEqual(
      sweep.client.protocol_ceilings?.map((c) => c.in_flight),
      [1, 4, 64],
    );
    for (const c of sweep.client.protocol_ceilings ?? []) assert.ok(c.qps > 0);
    assert.equal(sweep.client.ceiling_qps, sweep.client.protocol_ceilings?.[0].qps);
    assert.ok(
      sweep.notes.some((n) => /postgres null ceiling \(.*PostgreSQL.* holding 10 rows/.test(n)),
      sweep.notes.join('; '),
    );
    // Each point is flagged when its rate reaches half the ceiling at its level.
    for (const p of sweep.points) {
      const ceiling = sweep.client.protocol_ceilings!.find((c) => c.in_flight === p.in_flight)!.qps;
      if (p.qps >= 0.5 * ceiling) assert.ok(p.flags.includes('client-limited'), `in-flight ${p.in_flight}: ${p.qps} QPS against a ceiling of ${ceiling}`);
    }
    assert.deepEqual(
      sweep.points.map((p) => p.in_flight),
      [1, 4],
    );
    for (const p of [...sweep.points, ...open.steps]) {
      assert.equal(p.errors + p.timeouts, 0, p.first_error);
      // The worker clients ran the session's own statement at the same knobs: same recall.
      assert.ok(p.recall !== null && p.recall >= 0.9, `recall ${p.recall}`);
      assert.equal(p.client_cpu_estimated, false);
      assert.ok(p.client_cpu_pct !== null && p.client_cpu_pct > 0, 'the client threads used CPU');
      assert.ok(p.engine_cpu_pct !== null && p.engine_cpu_pct > 0, `the server process tree used CPU: ${JSON.stringify(p)}`);
      assert.ok(p.client_busy_pct !== null && p.client_busy_pct >= 0 && p.client_busy_pct <= 100);
    }
  });

  test("vecbench ceiling: PostgreSQL and Redis through the participants' own clients against their servers holding k rows", () => {
    const out = join(dir, 'ceiling');
    const r = vecbench('ceiling', '--protocols', 'postgres,redis', '--in-flight', '1,4', '--seconds', '1', '--out', out);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^ceiling postgres in_flight=1 workers=1 rps=\d+/m);
    assert.match(r.stdout, /^ceiling redis in_flight=4 workers=1 rps=\d+/m);
    const file = JSON.parse(readFileSync(join(out, 'ceiling.json'), 'utf8')) as {
      format: string;
      machine: { cores: number };
      figures: {
        protocol: string;
        in_flight: number;
        rps: number;
        requests: number;
        null_engine: string;
        null_engine_cpu_cores: number | null;
        client_cpu_cores: number | null;
      }[];
    };
    assert.equal(file.format, 'vecbench-ceiling/1');
    assert.deepEqual(
      file.figures.map((f) => `${f.protocol}@${f.in_flight}`),
      ['postgres@1', 'postgres@4', 'redis@1', 'redis@4'],
    );
    for (const f of file.figures) {
      assert.ok(f.rps > 0 && f.requests >= 300, JSON.stringify(f));
      assert.match(
        f.null_engine,
        f.protocol === 'postgres'
          ? /PostgreSQL.* holding 10 rows, queried through participants\/pgvector's load client/
          : /Redis 8.* holding 10 rows, queried through participants\/redis's load client/,
      );
      // Both sides worked: the client threads, and the server's process tree.
      assert.ok(f.client_cpu_cores !== null && f.client_cpu_cores > 0 && f.null_engine_cpu_cores !== null && f.null_engine_cpu_cores > 0, JSON.stringify(f));
    }
    const bad = vecbench('ceiling', '--protocols', 'mysql', '--out', out);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /unknown protocol "mysql"; known protocols: in-process, http, postgres, redis/);
  });

  test('bad levels are one-line errors', () => {
    const r = vecbench('run', '--dataset', 'synthetic-3000', '--participants', 'hnswlib', '--concurrency', '1,0,4', '--out', join(dir, 'bad'));
    // Bad input: one line naming the option, exit 2 (src/cli.ts), as every other bad input.
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^vecbench: .*--concurrency: "0" is not a positive integer.*\n$/);
  });
});
