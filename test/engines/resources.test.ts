// Resource measurements (src/runner/resources.ts, src/runner/page-cache.ts) on real processes and files, and the runner's
// resources record and the report's general section on a real run (an in-process engine and a
// server, under the cold protocol).
// vecbench-test: alone (it measures CPU, memory and the page cache of real processes).
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, fsyncSync, linkSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readAllResults } from '../../src/results/store.ts';
import { evictPageCache, residentBytes } from '../../src/runner/page-cache.ts';
import { MemorySampler, diskUsage, sampleMemory } from '../../src/runner/resources.ts';
import { loadParticipant } from '../../src/runner/participants.ts';
import { run } from '../../src/runner/run.ts';
import { reapOrphans } from '../../src/runner/server.ts';

const MB = 1024 * 1024;
const tmp = mkdtempSync(join(tmpdir(), 'vecbench-resources-'));
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
  reapOrphans();
});

/** Starts python3 with a script that prints "ready" when its memory is in place. */
async function pythonReady(script: string): Promise<ChildProcess> {
  const c = spawn('python3', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(c);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    c.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('ready')) resolve();
    });
    c.on('exit', (code) => reject(new Error(`python exited with ${code}`)));
  });
  return c;
}

test('anonymous memory of a process is counted as anon, not file', async () => {
  const c = await pythonReady('import time\nb = bytearray(64 << 20)\nprint("ready", flush=True)\ntime.sleep(300)');
  const s = sampleMemory(c.pid!)!;
  assert.ok(s.anon >= 64 * MB, `anon ${s.anon}`);
  assert.ok(s.file < 64 * MB, `file ${s.file}`);
  assert.equal(s.processes, 1);
});

test('a mapped data file is counted as file-backed, not anon', async () => {
  const file = join(tmp, 'mapped.bin');
  writeFileSync(file, Buffer.alloc(48 * MB, 7));
  const c = await pythonReady(
    `import mmap, time\nf = open(${JSON.stringify(file)}, "rb")\nm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\ns = sum(m[i] for i in range(0, len(m), 4096))\nprint("ready", flush=True)\ntime.sleep(300)`,
  );
  const s = sampleMemory(c.pid!)!;
  assert.ok(s.file >= 48 * MB, `file ${s.file}`);
  assert.ok(s.anon < 48 * MB, `anon ${s.anon}`);
});

test('a process tree is summed: the children of the measured process count', async () => {
  const c = spawn('sh', ['-c', `python3 -c 'import time; b = bytearray(40 << 20); print("ready", flush=True); time.sleep(300)' & wait`], {
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  children.push(c);
  after(() => {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
  await new Promise<void>((resolve) => c.stdout!.on('data', (d) => String(d).includes('ready') && resolve()));
  const s = sampleMemory(c.pid!)!;
  assert.ok(s.processes >= 2, `processes ${s.processes}`);
  assert.ok(s.anon >= 40 * MB, `anon ${s.anon}`);
  assert.equal(sampleMemory(2 ** 22 + 12345), null, 'a missing process gives null');
});

test('the sampler keeps the peak of a transient allocation and the steady level after it', async () => {
  // The child holds its allocation until told to free it, and the test waits for samples rather
  // than for time: on a loaded machine a fixed window of a second could pass unsampled.
  const c = spawn(
    'python3',
    ['-c', 'import sys\nb = bytearray(96 << 20)\nprint("held", flush=True)\nsys.stdin.readline()\ndel b\nprint("freed", flush=True)\nsys.stdin.readline()'],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  children.push(c);
  let taken = 0;
  let lastAnon = 0;
  const counting = (pid: number) => {
    const s = sampleMemory(pid);
    if (s) {
      taken++;
      lastAnon = s.anon;
    }
    return s;
  };
  const sampler = new MemorySampler(() => c.pid, 50, counting).start();
  const said = (what: string) => new Promise<void>((resolve) => c.stdout!.on('data', (d) => String(d).includes(what) && resolve()));
  const until = async (ok: () => boolean, what: string) => {
    const end = Date.now() + 60_000;
    while (!ok()) {
      assert.ok(Date.now() < end, `no sample ${what} within 60 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await said('held');
  await until(() => lastAnon >= 96 * MB, 'saw the allocation');
  const freed = said('freed');
  c.stdin!.write('\n');
  await freed;
  const after = taken;
  await until(() => taken >= after + 2, 'after the free');
  const m = sampler.stop()!;
  assert.ok(m.samples >= 3, `samples ${m.samples}`);
  assert.ok(m.peak_anon_bytes >= 96 * MB, `peak anon ${m.peak_anon_bytes}`);
  const now = sampleMemory(c.pid!)!;
  assert.ok(now.anon < m.peak_anon_bytes - 64 * MB, `after the free ${now.anon}, peak ${m.peak_anon_bytes}`);
  c.stdin!.end();
});

test("a sample that is slow to read (a large engine's page tables) stretches the interval, holding the sampler's cost to 2 % of a core", async () => {
  const slowRead = (pid: number) => {
    const end = performance.now() + 20;
    while (performance.now() < end) {
      /* a 20 ms read, as smaps_rollup of a few-GB process takes */
    }
    return sampleMemory(pid);
  };
  const sampler = new MemorySampler(() => process.pid, 50, slowRead).start();
  await new Promise((r) => setTimeout(r, 2500));
  const m = sampler.stop()!;
  // At the base 50 ms there would be about 35 samples; 50 x 20 ms = 1 s apart there are at most 4.
  assert.ok(m.samples <= 5, `samples ${m.samples}`);
  assert.ok(m.longest_interval_ms >= 1000, `longest interval ${m.longest_interval_ms} ms`);
  // A fast read keeps the base interval.
  const sample = sampleMemory(process.pid)!;
  const fast = new MemorySampler(
    () => process.pid,
    50,
    () => sample,
  ).start();
  await new Promise((r) => setTimeout(r, 300));
  const f = fast.stop()!;
  assert.equal(f.longest_interval_ms, 50);
  assert.ok(f.samples >= 3, `samples ${f.samples}`);
});

test('diskUsage counts allocated bytes, a hard link once, and skips symlinks', () => {
  const dir = join(tmp, 'disk');
  mkdirSync(join(dir, 'sub'), { recursive: true });
  writeFileSync(join(dir, 'a.bin'), Buffer.alloc(1 * MB, 1));
  writeFileSync(join(dir, 'sub', 'b.bin'), Buffer.alloc(100 * 1024, 1));
  linkSync(join(dir, 'a.bin'), join(dir, 'a-link.bin'));
  symlinkSync('/usr/bin', join(dir, 'elsewhere'));
  const bytes = diskUsage(dir);
  assert.ok(bytes >= MB + 100 * 1024, `bytes ${bytes}`);
  assert.ok(bytes < 1.3 * MB, `bytes ${bytes}`);
  assert.equal(diskUsage(join(tmp, 'missing')), 0);
});

test('evictPageCache drops a data file from the page cache and measures it', () => {
  const dir = join(tmp, 'evict');
  mkdirSync(dir);
  const file = join(dir, 'data.bin');
  const fd = openSync(file, 'w');
  writeSync(fd, Buffer.alloc(32 * MB, 3));
  fsyncSync(fd);
  closeSync(fd);
  readFileSync(file);
  assert.ok(residentBytes(dir) >= 30 * MB, `resident before ${residentBytes(dir)}`);
  const ev = evictPageCache(dir);
  assert.ok(ev.resident_before_bytes >= 30 * MB);
  assert.ok(ev.resident_after_bytes < 1 * MB, `resident after ${ev.resident_after_bytes}`);
  assert.match(ev.method, /vmtouch -e/);
  assert.equal(/drop_caches/.test(ev.method), ev.drop_caches);
  if (process.getuid?.() !== 0) assert.equal(ev.drop_caches, false, 'only root drops the whole page cache');
});

test('a cold-protocol run records resources for an in-process engine and a server, and the report has them', async () => {
  const out = join(tmp, 'out');
  const data = join(tmp, 'data');
  await run({
    dataset: 'synthetic-2k',
    participants: ['hnswlib', 'redis'],
    outDir: out,
    dataDir: data,
    clients: 4,
    groups: [
      { filter: 'none', k: 10 },
      { filter: 'cat10', k: 10 },
    ],
    pointTimeoutS: 300,
    loadTimeoutS: 600,
    cold: true,
  });
  const results = readAllResults(out);
  assert.equal(results.length, 2);
  for (const r of results) {
    const res = r.resources!;
    assert.ok(res, `${r.participant} has resources`);
    assert.equal(r.run.protocol, 'cold');
    assert.equal(res.measured_process, r.participant === 'redis' ? 'server' : 'host');
    assert.ok(res.mem_build_peak_bytes! > 0 && res.mem_build_peak_anon_bytes! > 0, `${r.participant} build peak`);
    assert.ok(res.mem_serving_anon_bytes! > 0 && res.mem_serving_file_bytes! > 0, `${r.participant} serving`);
    assert.ok(res.mem_baseline_anon_bytes! > 0);
    assert.ok(res.disk_bytes !== null && res.disk_bytes >= 0);
    assert.ok(res.probe && res.probe.queries === 20);
    if (res.probe.answered) assert.ok(res.probe.recall! >= 0 && res.probe.latency_ms_p50! > 0);
    else assert.ok(res.probe.error);
    // --cold: an eviction measured before each measured group.
    assert.deepEqual(
      res.group_evictions.map((e) => e.group),
      ['none/10', 'cat10/10'],
    );
    for (const e of res.group_evictions) assert.ok(e.resident_after_bytes <= e.resident_before_bytes || e.resident_after_bytes < 1 * MB);
    // Every cold point records what the engine's processes read from storage for it.
    const points = r.groups.flatMap((g) => g.points);
    assert.ok(points.length > 0 && points.every((pt) => pt.io !== undefined && pt.io.read_bytes_per_query >= 0), `${r.participant} cold points carry io`);
    const p = await loadParticipant(r.participant);
    if (p.adapter.reopen) {
      assert.ok(
        res.cold_accept_s! > 0 && res.cold_first_query_s! >= res.cold_accept_s!,
        `${r.participant} cold ${res.cold_accept_s} ${res.cold_first_query_s}`,
      );
      assert.ok(res.cold_eviction);
    } else {
      assert.equal(res.cold_accept_s, null);
      assert.match(res.unmeasured.cold_accept_s, /no reopen/);
    }
  }
  const redis = results.find((r) => r.participant === 'redis')!;
  assert.ok(redis.resources!.cold_accept_s! > 0, 'redis has a cold start');
  // Redis saves no file while serving (saving off) but its snapshot on the clean stop.
  assert.equal(redis.resources!.disk_bytes, 0);
  assert.ok(redis.resources!.disk_stopped_bytes! > 100_000, `redis snapshot ${redis.resources!.disk_stopped_bytes}`);
  assert.ok(redis.resources!.probe!.answered, 'redis answers between ingest and (its no-op) build');
  // No server left running.
  assert.deepEqual(reapOrphans(), []);

  const cli = spawnSync(process.execPath, [join(import.meta.dirname, '..', '..', 'bin', 'vecbench.js'), 'report', '--json', '--out', out], {
    encoding: 'utf8',
  });
  assert.equal(cli.status, 0, cli.stderr);
  const report = JSON.parse(cli.stdout) as { general: Record<string, unknown>[] };
  assert.equal(report.general.length, 2);
  const keys = [
    'participant',
    'dataset',
    'ingest_s',
    'index_s',
    'disk_bytes',
    'disk_stopped_bytes',
    'mem_build_peak_bytes',
    'mem_serving_anon_bytes',
    'mem_serving_file_bytes',
    'cold_accept_s',
    'cold_first_query_s',
  ];
  for (const g of report.general) {
    for (const k of keys) assert.ok(k in g, `general entry lacks ${k}`);
    assert.equal(g.dataset, 'synthetic-2k');
  }
  const gRedis = report.general.find((g) => g.participant === 'redis')!;
  assert.equal(gRedis.cold_accept_s, redis.resources!.cold_accept_s);
  assert.equal(gRedis.disk_stopped_bytes, redis.resources!.disk_stopped_bytes);
  assert.equal(gRedis.ingest_s, redis.load!.ingest_s);
  const text = spawnSync(process.execPath, [join(import.meta.dirname, '..', '..', 'bin', 'vecbench.js'), 'report', '--out', out], { encoding: 'utf8' });
  assert.match(text.stdout, /synthetic-2k: load, size, memory/);
  assert.match(text.stdout, /cold accept/);
  assert.match(text.stdout, /disk stopped/);
});
