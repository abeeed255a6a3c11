// `npm run bench:fidelity`: is vecbench's load generator as good a client as the reference tools?
//
// 1. pgvector: a private PostgreSQL cluster (started by the pgvector participant's own server
//    lifecycle, stopped by PID at the end) with N random 128-d vectors under an HNSW index and
//    1,000 query vectors stored in a table. ONE statement, prepared:
//      SELECT id FROM items ORDER BY embedding <-> (SELECT v FROM queries WHERE id = $1) LIMIT 10
//    pgbench runs it from a custom script (-M prepared, random query id) and vecbench runs it
//    through its worker-thread pool and closed loop (bench/fidelity-pg-client.ts, on the same
//    PostgreSQL fast path as pgvector's load client: src/loadgen/clients/pg-ids.ts), at the same
//    concurrency (1, 2, 4, 8, 16) and with the same client threads (-j = vecbench's workers).
//    Prints `fidelity pgvector c=N vecbench_qps=X pgbench_qps=Y ratio=R`.
// 2. HTTP: the null HTTP server against wrk (POST of the same JSON query body) and vecbench's
//    undici client, same connections and threads. Prints
//    `fidelity http vecbench_rps=X wrk_rps=Y ratio=R per_core_ratio=P`, where per_core_ratio
//    compares requests per client CPU-second (the server is shared, so the rate alone mostly
//    says how fast the null server is).
// Measurements are interleaved (vecbench, reference, vecbench, reference...) over --rounds and
// the best of each is kept, so a burst of other work on the machine hits both alike; the load
// average is printed with the figures. Options: --rows N --seconds S --rounds R --levels 1,2,4
// --workers W --skip-pg --skip-http.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { findPostgres } from '../participants/pgvector/adapter.ts';
import { HTTP_CLIENT_MODULE, randomQueries, spawnNullHttpServer } from '../src/loadgen/ceiling.ts';
import { CpuMeter, processCpuSeconds } from '../src/runner/cpu.ts';
import { nowMs } from '../src/loadgen/clock.ts';
import { defaultWorkers, WorkerPool } from '../src/loadgen/pool.ts';
import { scratchEngineDir, startEngineServer } from '../src/runner/engine-lifecycle.ts';
import { loadParticipant } from '../src/runner/participants.ts';

const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const ROWS = Number(opt('rows', '20000'));
const SECONDS = Number(opt('seconds', '5'));
const ROUNDS = Number(opt('rounds', '2'));
const LEVELS = opt('levels', '1,2,4,8,16').split(',').map(Number);
const WORKERS = Number(opt('workers', String(defaultWorkers())));
const D = 128;
const NQ = 1000;
const STATEMENT = 'SELECT id FROM items ORDER BY embedding <-> (SELECT v FROM queries WHERE id = $1) LIMIT 10';

const la = () => loadavg()[0].toFixed(2);
const say = (s: string) => process.stdout.write(`${s}\n`);

/** Runs a command under sh and returns its output plus the CPU seconds it used (the shell's
 * cutime + cstime after waiting for it: the children's user and system time). */
function timedCommand(cmd: string[], env?: NodeJS.ProcessEnv): { out: string; cpuS: number } {
  const quoted = cmd.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('sh', ['-c', `${quoted} 2>&1; echo; echo "STAT $(cat /proc/$$/stat)"`], { encoding: 'utf8', maxBuffer: 1 << 24, env });
  const out = r.stdout ?? '';
  const stat = /STAT (.*)$/m.exec(out)?.[1] ?? '';
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  return { out, cpuS: (Number(f[13]) + Number(f[14])) / ticks };
}

async function pgFidelity(): Promise<void> {
  const { bin } = findPostgres();
  const pgbench = join(bin, 'pgbench');
  const dir = scratchEngineDir('fidelity');
  const participant = await loadParticipant('pgvector');
  const settings = participant.adapter.settingsSchema.parse({ shared_buffers_mb: 256, maintenance_work_mem_mb: 256 });
  // Started as every engine outside a run is (src/runner/engine-lifecycle.ts), with the bench's
  // own buffers; the bench talks to it through pg and pgbench, not through a session.
  const started = await startEngineServer(participant, {
    dataset: { name: 'fidelity', n: ROWS, d: D, metric: 'l2', hasText: false },
    workDir: dir,
    settings,
    log: (m) => say(`postgres: ${m}`),
  });
  const server = started.handle;
  const { host, port } = server.connection;
  say(`postgres: private cluster pid ${server.pid} on ${host}:${port} (${dir})`);
  try {
    const c = new pg.Client({ host, port, user: 'postgres', database: 'postgres', password: String(server.connection.params.password) });
    await c.connect();
    await c.query('CREATE EXTENSION IF NOT EXISTS vector');
    await c.query(`CREATE TABLE items (id int4 PRIMARY KEY, embedding vector(${D}) NOT NULL)`);
    await c.query(`CREATE TABLE queries (id int4 PRIMARY KEY, v vector(${D}) NOT NULL)`);
    // Random vectors made in SQL (the correlated WHERE makes the subquery run once per row).
    const rows = (table: string, col: string, n: number) =>
      c.query(
        `INSERT INTO ${table} (id, ${col}) SELECT i, (SELECT array_agg(random() - 0.5)::vector FROM generate_series(1, ${D}) WHERE i > 0) FROM generate_series(1, ${n}) AS i`,
      );
    let t = nowMs();
    await rows('items', 'embedding', ROWS);
    await rows('queries', 'v', NQ);
    say(`postgres: ${ROWS} rows and ${NQ} queries inserted in ${((nowMs() - t) / 1000).toFixed(1)} s`);
    t = nowMs();
    await c.query("SET maintenance_work_mem = '256MB'");
    await c.query('CREATE INDEX ON items USING hnsw (embedding vector_l2_ops) WITH (m = 16, ef_construction = 64)');
    await c.query('ANALYZE items; ANALYZE queries');
    say(`postgres: HNSW index built in ${((nowMs() - t) / 1000).toFixed(1)} s`);
    const plan = (await c.query(`EXPLAIN ${STATEMENT.replace('$1', '1')}`)).rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join(' | ');
    if (!/items_embedding_idx/.test(plan)) throw new Error(`the statement does not use the HNSW index: ${plan}`);
    await c.end();

    const script = join(dir, 'query.sql');
    writeFileSync(script, `\\set q random(1, ${NQ})\n${STATEMENT.replace('$1', ':q')};\n`);
    const ids = new Float32Array(NQ);
    for (let i = 0; i < NQ; i++) ids[i] = i + 1;
    const spec = {
      module: fileURLToPath(new URL('./fidelity-pg-client.ts', import.meta.url)),
      options: { host, port, user: 'postgres', database: 'postgres', password: String(server.connection.params.password), text: STATEMENT },
    };

    say(
      `fidelity pgvector: ${ROWS} x ${D} HNSW, ${SECONDS} s per run, best of ${ROUNDS} interleaved rounds, vecbench workers = pgbench -j = ${WORKERS}; load average ${la()}`,
    );
    for (const conc of LEVELS) {
      const pool = await WorkerPool.start(spec, WORKERS, conc, ids, 1);
      let vb = { qps: 0, clientCores: 0, serverCores: 0 as number | null };
      let pb = { qps: 0, clientCores: 0, serverCores: 0 as number | null };
      const loads: string[] = [];
      try {
        const order = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * NQ));
        // Warm-up: connections, prepared statements, JIT of the client.
        const cal = await pool.closed(10, order(500), new Array(500).fill(null), conc, 30_000);
        const rate = 500 / cal.wallS;
        for (let round = 0; round < ROUNDS; round++) {
          loads.push(la());
          const n = Math.max(500, Math.round(rate * SECONDS));
          const cpu0 = process.cpuUsage();
          const sm = new CpuMeter({ pid: server.pid, tree: true });
          const t0 = nowMs();
          const r = await pool.closed(10, order(n), new Array(n).fill(null), conc, 30_000);
          const wall = (nowMs() - t0) / 1000;
          const used = process.cpuUsage(cpu0);
          if (r.errors + r.timeouts > 0) throw new Error(`vecbench: ${r.errors + r.timeouts} requests failed: ${r.firstError}`);
          const qps = n / r.wallS;
          if (qps > vb.qps) vb = { qps, clientCores: (used.user + used.system) / 1e6 / wall, serverCores: sm.cores() };

          const pm = new CpuMeter({ pid: server.pid, tree: true });
          const tp = nowMs();
          const b = timedCommand(
            [
              pgbench,
              '-n',
              '-M',
              'prepared',
              '-f',
              script,
              '-c',
              String(conc),
              '-j',
              String(Math.min(WORKERS, conc)),
              '-T',
              String(SECONDS),
              '-h',
              host,
              '-p',
              String(port),
              '-U',
              'postgres',
              'postgres',
            ],
            { ...process.env, PGPASSWORD: String(server.connection.params.password) },
          );
          const bwall = (nowMs() - tp) / 1000;
          const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(b.out)?.[1];
          if (!tps) throw new Error(`pgbench gave no tps:\n${b.out}`);
          if (Number(tps) > pb.qps) pb = { qps: Number(tps), clientCores: b.cpuS / bwall, serverCores: pm.cores() };
        }
      } finally {
        await pool.close();
      }
      const f = (v: number | null) => (v === null ? 'n/a' : v.toFixed(2));
      say(`fidelity pgvector c=${conc} vecbench_qps=${vb.qps.toFixed(0)} pgbench_qps=${pb.qps.toFixed(0)} ratio=${(vb.qps / pb.qps).toFixed(3)}`);
      // Client CPU per query: less sensitive to other work on the machine than the rates.
      const us = (cores: number, qps: number) => (qps > 0 ? ((cores / qps) * 1e6).toFixed(0) : 'n/a');
      say(
        `  detail c=${conc}: client cores vecbench ${f(vb.clientCores)} pgbench ${f(pb.clientCores)} (CPU per query ${us(vb.clientCores, vb.qps)} vs ${us(pb.clientCores, pb.qps)} us); server cores during vecbench ${f(vb.serverCores)} pgbench ${f(pb.serverCores)}; load average ${loads.join(', ')}`,
      );
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    void processCpuSeconds;
  }
}

async function httpFidelity(): Promise<void> {
  const have = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
  if (have.status !== 0) throw new Error('wrk is not installed: apt-get install wrk');
  const server = await spawnNullHttpServer(10);
  const conc = 64;
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-wrk-'));
  try {
    const q = randomQueries(1, D);
    const body = `{"vector":[${Array.from(q).join(',')}],"k":10}`;
    const lua = join(dir, 'post.lua');
    writeFileSync(lua, `wrk.method = "POST"\nwrk.headers["content-type"] = "application/json"\nwrk.body = '${body}'\n`);
    const queries = randomQueries(NQ, D);
    const pool = await WorkerPool.start(
      { module: HTTP_CLIENT_MODULE, options: { origin: `http://127.0.0.1:${server.port}`, path: '/search' } },
      WORKERS,
      conc,
      queries,
      D,
    );
    let vb = { rps: 0, cores: 0 };
    let wk = { rps: 0, cores: 0 };
    const loads: string[] = [];
    try {
      const order = (n: number) => Array.from({ length: n }, (_, i) => i % NQ);
      const cal = await pool.closed(10, order(3000), new Array(3000).fill(null), conc, 30_000);
      const rate = 3000 / cal.wallS;
      for (let round = 0; round < ROUNDS; round++) {
        loads.push(la());
        const n = Math.max(3000, Math.round(rate * SECONDS));
        const cpu0 = process.cpuUsage();
        const t0 = nowMs();
        const r = await pool.closed(10, order(n), new Array(n).fill(null), conc, 30_000);
        const wall = (nowMs() - t0) / 1000;
        const used = process.cpuUsage(cpu0);
        if (r.errors + r.timeouts > 0) throw new Error(`vecbench: ${r.errors + r.timeouts} requests failed: ${r.firstError}`);
        const rps = n / r.wallS;
        if (rps > vb.rps) vb = { rps, cores: (used.user + used.system) / 1e6 / wall };
        const tw = nowMs();
        const w = timedCommand(['wrk', '-t', String(WORKERS), '-c', String(conc), '-d', `${SECONDS}s`, '-s', lua, `http://127.0.0.1:${server.port}/search`]);
        const wwall = (nowMs() - tw) / 1000;
        const m = /Requests\/sec:\s+([\d.]+)/.exec(w.out);
        if (!m) throw new Error(`wrk gave no rate:\n${w.out}`);
        if (Number(m[1]) > wk.rps) wk = { rps: Number(m[1]), cores: w.cpuS / wwall };
      }
    } finally {
      await pool.close();
    }
    const perCore = vb.rps / vb.cores / (wk.rps / wk.cores);
    say(
      `fidelity http vecbench_rps=${vb.rps.toFixed(0)} wrk_rps=${wk.rps.toFixed(0)} ratio=${(vb.rps / wk.rps).toFixed(3)} per_core_ratio=${perCore.toFixed(3)}`,
    );
    say(
      `  detail http: ${conc} connections, ${WORKERS} client thread(s); client cores vecbench ${vb.cores.toFixed(2)} wrk ${wk.cores.toFixed(2)}; load average ${loads.join(', ')}`,
    );
  } finally {
    server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (!args.includes('--skip-pg')) await pgFidelity();
if (!args.includes('--skip-http')) await httpFidelity();
void spawn;
