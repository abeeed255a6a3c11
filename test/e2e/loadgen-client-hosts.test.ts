// Load from several client hosts (src/loadgen/remote.ts, remote-worker.ts, remote-wire.ts, docs/client-hosts.md): two
// `vecbench load-worker`s, each in a network namespace of this test's own reached over a veth
// pair on private addresses, drive the null HTTP server (bound to the root namespace's side of
// one pair) at two in-flight levels. Per level there is one merged point; its counts are the
// sum of the hosts', its histogram is exactly the histogram of the union of the requests'
// latencies, and one host at the same total in-flight level measures a median latency whose
// interval overlaps the merged one's; `vecbench run --client-hosts` against a Redis on the
// same address stores one merged point per level. Needs root (ip netns); without it the test fails.
// vecbench-test: alone (it compares latencies measured in two setups).
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { OK } from '../../src/loadgen/driver.ts';
import { LatencyHistogram } from '../../src/loadgen/histogram.ts';
import { ClientHosts } from '../../src/loadgen/remote.ts';
import type { LoadReply } from '../../src/loadgen/protocol.ts';
import { concurrencySchema } from '../../src/loadgen/schema.ts';
import { redisServerPath } from '../../participants/redis/adapter.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = import.meta.resolve('tsx');
const HTTP_CLIENT = fileURLToPath(new URL('../../src/loadgen/clients/http-json.ts', import.meta.url));
const NULL_SERVER = fileURLToPath(new URL('../../src/loadgen/null-http-server.ts', import.meta.url));

// Unique per run, so a leftover of a killed run never collides (names stay within IFNAMSIZ).
const tag = randomBytes(3).toString('hex');
const net = `10.${200 + (randomBytes(1)[0] % 50)}.${randomBytes(1)[0]}`;
const spaces = [
  { ns: `vb${tag}A`, root: `vh${tag}a`, inner: `vn${tag}a`, rootIp: `${net}.1`, innerIp: `${net}.2` },
  { ns: `vb${tag}B`, root: `vh${tag}b`, inner: `vn${tag}b`, rootIp: `${net}.5`, innerIp: `${net}.6` },
];
const made: { ns: string[]; links: string[] } = { ns: [], links: [] };
const dir = mkdtempSync(join(tmpdir(), 'vecbench-client-hosts-'));
// The shared secret of this test's coordinator and load-workers (they inherit the environment).
process.env.VECBENCH_LOAD_SECRET = randomBytes(24).toString('hex');
chmodSync(dir, 0o755);
const procs: ChildProcess[] = [];

function ip(...args: string[]): void {
  try {
    execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const err = (e as { stderr?: Buffer }).stderr?.toString().trim() ?? (e as Error).message;
    throw new Error(`\`ip ${args.join(' ')}\` failed (${err}): this test needs root and iproute2 to make its network namespaces`);
  }
}

/** Spawns a process and resolves with the first stdout match of `ready`. */
function started(cmd: string, args: string[], ready: RegExp, what: string): Promise<RegExpExecArray> {
  const p = spawn(cmd, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  procs.push(p);
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start within 60 s: ${err}`)), 60_000);
    p.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    p.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (code ${code}): ${err}`));
    });
    p.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
  });
}

let workers: string[] = [];
/** The load-workers' processes, in `workers` order. */
let workerProcs: ChildProcess[] = [];
let origin = '';

before(async () => {
  for (const s of spaces) {
    ip('netns', 'add', s.ns);
    made.ns.push(s.ns);
    ip('link', 'add', s.root, 'type', 'veth', 'peer', 'name', s.inner);
    made.links.push(s.root);
    ip('link', 'set', s.inner, 'netns', s.ns);
    ip('addr', 'add', `${s.rootIp}/30`, 'dev', s.root);
    ip('link', 'set', s.root, 'up');
    ip('netns', 'exec', s.ns, 'ip', 'addr', 'add', `${s.innerIp}/30`, 'dev', s.inner);
    ip('netns', 'exec', s.ns, 'ip', 'link', 'set', s.inner, 'up');
    ip('netns', 'exec', s.ns, 'ip', 'link', 'set', 'lo', 'up');
    // Every namespace reaches the server on the first pair's root address through its own pair.
    ip('netns', 'exec', s.ns, 'ip', 'route', 'add', 'default', 'via', s.rootIp);
  }
  const server = await started(process.execPath, ['--import', TSX, NULL_SERVER, '0', '10', spaces[0].rootIp], /listening (\d+)/, 'the null HTTP server');
  origin = `http://${spaces[0].rootIp}:${server[1]}`;
  workers = await Promise.all(
    spaces.map(async (s) => {
      const m = await started(
        'ip',
        ['netns', 'exec', s.ns, process.execPath, '--import', TSX, 'src/cli.ts', 'load-worker', '--listen', `${s.innerIp}:0`],
        /load-worker listening (\S+) /,
        `the load-worker in ${s.ns}`,
      );
      return m[1];
    }),
  );
  workerProcs = procs.slice(1);
});

after(() => {
  // By PID, each process this test started; then the namespaces and links it made.
  const attempt = (f: () => void) => {
    try {
      f();
    } catch {
      /* already gone */
    }
  };
  for (const p of procs) if (p.exitCode === null && p.signalCode === null && p.pid !== undefined) attempt(() => process.kill(p.pid!, 'SIGKILL'));
  for (const l of made.links) attempt(() => execFileSync('ip', ['link', 'del', l], { stdio: 'ignore' }));
  for (const n of made.ns) attempt(() => execFileSync('ip', ['netns', 'del', n], { stdio: 'ignore' }));
  rmSync(dir, { recursive: true, force: true });
});

const D = 16;
const K = 10;
const queries = Float32Array.from({ length: 100 * D }, (_, i) => Math.sin(i));
const REQUESTS = 1500;

function okLatencies(r: LoadReply): number[] {
  const out: number[] = [];
  for (let i = 0; i < r.status.length; i++) if (r.status[i] === OK) out.push(r.latenciesMs[i]);
  return out;
}

/** Distribution-free 95 % interval of the median: the order statistics n/2 -+ 1.96 sqrt(n)/2. */
function medianInterval(values: number[]): [number, number] {
  const s = [...values].sort((a, b) => a - b);
  const h = (1.96 * Math.sqrt(s.length)) / 2;
  return [s[Math.max(0, Math.floor(s.length / 2 - h))], s[Math.min(s.length - 1, Math.ceil(s.length / 2 + h))]];
}

async function point(hosts: ClientHosts, inFlight: number) {
  const qs = Array.from({ length: REQUESTS }, (_, i) => i % 100);
  return hosts.closed(K, qs, new Array(REQUESTS).fill(null), inFlight, 10_000);
}

describe('load from two client hosts in network namespaces', () => {
  test('one merged point per level: summed counts, the exact histogram of the union, agreeing with one host', async () => {
    const spec = { module: HTTP_CLIENT, options: { origin, path: '/search' } };
    const two = await ClientHosts.connect(workers);
    // One host at the same total in flight, with as many client threads as the two together.
    const one = await ClientHosts.connect([workers[0]]);
    try {
      await two.init(spec, 1, 8, queries, D);
      await one.init(spec, 2, 8, queries, D);
      assert.equal(two.workers, 2);
      for (const inFlight of [2, 4]) {
        const merged: number[][] = [];
        const single: number[][] = [];
        // Alternated repeats: drift of the shared machine falls on both alike.
        for (let rep = 0; rep < 5; rep++) {
          const m = await point(two, inFlight);
          const r = m.reply;
          assert.equal(r.errors + r.timeouts, 0, `in-flight ${inFlight}: ${r.firstError}`);
          // One point: every request of the level, from both hosts, each holding half the load.
          assert.equal(r.status.length, REQUESTS);
          assert.deepEqual(
            m.hosts.map((h) => h.host),
            workers,
          );
          assert.deepEqual(
            m.hosts.map((h) => h.in_flight),
            [inFlight / 2, inFlight / 2],
          );
          const hist = LatencyHistogram.decode(r.histogram);
          const lat = okLatencies(r);
          // Counts: the merged point's are the hosts' summed.
          assert.equal(
            hist.count,
            m.hosts.reduce((a, h) => a + h.ok, 0),
          );
          assert.equal(hist.count, REQUESTS);
          assert.equal(
            m.hosts.reduce((a, h) => a + h.requests, 0),
            REQUESTS,
          );
          // Exact merge: the added histograms are the histogram of the union of the recordings.
          const union = LatencyHistogram.ofMs(lat);
          for (const p of [50, 90, 99, 99.9, 100]) assert.equal(hist.percentileMs(p), union.percentileMs(p), `p${p}`);
          assert.equal(hist.summary().mean, union.summary().mean);
          assert.ok(r.wallS > 0);
          merged.push(lat);
          const s = await point(one, inFlight);
          assert.equal(s.hosts.length, 1);
          assert.equal(s.reply.errors + s.reply.timeouts, 0, `one host, in-flight ${inFlight}: ${s.reply.firstError}`);
          single.push(okLatencies(s.reply));
        }
        // Agreement: the median latency's interval over the repeats, two hosts against one.
        const span = (runs: number[][]) => runs.map(medianInterval).reduce((a, b) => [Math.min(a[0], b[0]), Math.max(a[1], b[1])]);
        const a = span(merged);
        const b = span(single);
        assert.ok(a[0] <= b[1] && b[0] <= a[1], `in-flight ${inFlight}: two hosts' median in [${a}] ms, one host's in [${b}] ms: the intervals do not overlap`);
      }
    } finally {
      await two.close();
      await one.close();
    }
  });

  test('vecbench run --client-hosts: bad input is one line before any work', () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', TSX, 'src/cli.ts', 'run', '--dataset', 'synthetic-3000', '--participants', 'pgvector', ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, VECBENCH_QUIET: '1' },
      });
    const bad = run('--client-hosts', 'nohost', '--concurrency', '1');
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /^vecbench: --client-hosts: "nohost" is not HOST:PORT \(write e\.g\. 10\.0\.0\.2:7100\)\n$/);
    const open = run('--client-hosts', workers[0], '--concurrency', '1', '--open-loop', '100');
    assert.equal(open.status, 2);
    assert.match(open.stderr, /^vecbench: --client-hosts drives the closed-loop sweep only: drop --open-loop, .*\n$/);
  });

  test('vecbench run --client-hosts on a real Redis: one merged point per level, from both hosts', async () => {
    // A Redis the client hosts reach: on the first pair's root address (the runner's own servers
    // listen on 127.0.0.1 only), given to the run with --connect.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, spaces[0].rootIp, () => {
        const a = s.address();
        s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
      });
    });
    await started(
      redisServerPath(),
      ['--bind', spaces[0].rootIp, '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'no'],
      /Ready to accept connections/,
      'redis-server',
    );
    const out = join(dir, 'out');
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        TSX,
        'src/cli.ts',
        'run',
        '--dataset',
        'synthetic-3000',
        '--participants',
        'redis',
        '--connect',
        `redis=redis://${spaces[0].rootIp}:${port}`,
        '--groups',
        'none/10',
        '--out',
        out,
        '--concurrency',
        '2,4',
        '--load-requests',
        '1000',
        '--client-hosts',
        workers.join(','),
      ],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: join(dir, 'data') }, timeout: 600_000 },
    );
    assert.equal(r.status, 0, r.stderr);
    const res = JSON.parse(readFileSync(join(out, 'synthetic-3000', 'redis.json'), 'utf8'));
    const sweep = concurrencySchema.parse(res.extra.concurrency);
    assert.deepEqual(sweep.client.client_hosts, workers);
    assert.deepEqual(
      sweep.points.map((p) => p.in_flight),
      [2, 4],
    );
    for (const p of sweep.points) {
      const hosts = p.client_hosts!;
      assert.deepEqual(
        hosts.map((h) => [h.host, h.in_flight]),
        workers.map((w) => [w, p.in_flight / 2]),
      );
      assert.equal(p.errors + p.timeouts, 0, p.first_error);
      // The point's counts are the hosts' summed; its recall is scored from their ids.
      assert.equal(
        hosts.reduce((a, h) => a + h.requests, 0),
        p.requests,
      );
      assert.equal(
        hosts.reduce((a, h) => a + h.ok, 0),
        p.requests,
      );
      assert.ok(p.recall !== null && p.recall > 0.5, `recall ${p.recall}`);
      assert.ok(p.qps > 0 && p.p50_ms !== null && p.p99_ms !== null && p.p50_ms <= p.p99_ms);
    }
  });
  test('an unreachable host and a host that dies mid-point are one-line errors naming the host', async () => {
    await assert.rejects(ClientHosts.connect([`${spaces[1].innerIp}:1`], 3000), (e: Error) => {
      assert.equal(e.name, 'UserError');
      assert.match(
        e.message,
        new RegExp(`^client host ${spaces[1].innerIp}:1 is unreachable .*start \`vecbench load-worker --listen ${spaces[1].innerIp}:1\` there$`),
      );
      return true;
    });
    const hosts = await ClientHosts.connect(workers);
    try {
      await hosts.init({ module: HTTP_CLIENT, options: { origin, path: '/search' } }, 1, 2, queries, D);
      const n = 2_000_000;
      const running = hosts.closed(K, new Array(n).fill(0), new Array(n).fill(null), 2, 10_000);
      // Once the point runs (it starts 200 ms after the call), the second host's worker dies.
      setTimeout(() => process.kill(workerProcs[1].pid!, 'SIGKILL'), 1000);
      await assert.rejects(running, (e: Error) => {
        assert.equal(e.name, 'UserError');
        assert.match(e.message, new RegExp(`^client host ${workers[1]} closed the connection .*restart \`vecbench load-worker\` there and run again$`));
        return true;
      });
    } finally {
      await hosts.close();
    }
  });
});
