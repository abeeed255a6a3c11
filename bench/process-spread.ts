// npm run bench:process-spread [-- --processes 6 --rounds 60 --ef 87]
// Whether two processes of one engine on one index run at different speeds (docs/method.md,
// "Paired leads"): builds an hnswlib graph of 20,000 x 128 random vectors (a fixed seed: the same
// graph every time), saves it, opens it in N child processes, and times 1,000 queries in each
// process once per round, in a shuffled order, for R rounds. Each pass's log QPS is centred on its
// round's mean over the processes (a drift of the machine falls on all of them alike), and the
// spread of the processes' means is printed beside the standard error a process's mean has from
// its passes' noise alone: a spread well above it is a per-process effect.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mean, sampleVariance } from '../src/metrics/stats.ts';

const require = createRequire(import.meta.url);
const hnswlib = require('hnswlib-node') as typeof import('hnswlib-node');
const D = 128;
const N = 20_000;
const NQ = 2_000;
const PASS = 1_000;

/** A small deterministic generator: every process draws the same queries. */
function uniform(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

if (process.argv[2] === '--child') {
  // One process: opens the saved index, answers each request with a timed pass.
  const [file, ef] = process.argv.slice(3);
  const index = new hnswlib.HierarchicalNSW('ip', D);
  index.readIndexSync(file);
  index.setEf(Number(ef));
  const rand = uniform(12345);
  const queries = Array.from({ length: NQ }, () => Array.from({ length: D }, rand));
  process.on('message', (m: { from: number } | 'exit') => {
    if (m === 'exit') process.exit(0);
    const t = performance.now();
    for (let i = 0; i < PASS; i++) index.searchKnn(queries[(m.from + i) % NQ], 10);
    process.send!({ ms: performance.now() - t });
  });
  process.send!({ ready: true });
} else {
  const { values } = parseArgs({
    options: { processes: { type: 'string', default: '6' }, rounds: { type: 'string', default: '60' }, ef: { type: 'string', default: '87' } },
  });
  const K = Number(values.processes);
  const R = Number(values.rounds);
  if (!Number.isInteger(K) || K < 2 || !Number.isInteger(R) || R < 3) {
    console.error('bench:process-spread: --processes must be an integer >= 2 and --rounds >= 3');
    process.exit(2);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'vecbench-spread-'));
  const file = path.join(dir, 'hnswlib.index');
  const rand = uniform(7);
  const index = new hnswlib.HierarchicalNSW('ip', D);
  index.initIndex({ maxElements: N, m: 16, efConstruction: 100, randomSeed: 100 });
  for (let i = 0; i < N; i++) index.addPoint(Array.from({ length: D }, rand), i);
  index.writeIndexSync(file);
  const self = fileURLToPath(import.meta.url);
  const kids: ChildProcess[] = [];
  for (let k = 0; k < K; k++) {
    const child = fork(self, ['--child', file, values.ef!], { execArgv: process.execArgv });
    await new Promise((resolve) => child.once('message', resolve));
    kids.push(child);
  }
  const pass = (i: number, from: number) =>
    new Promise<number>((resolve) => {
      kids[i].once('message', (m: { ms: number }) => resolve(Math.log((PASS * 1000) / m.ms)));
      kids[i].send({ from });
    });
  for (let i = 0; i < K; i++) for (let w = 0; w < 3; w++) await pass(i, 0);
  const logs: number[][] = kids.map(() => []);
  const shuffle = uniform(99);
  for (let r = 0; r < R; r++) {
    const order = kids.map((_, i) => i).sort(() => shuffle());
    for (const i of order) logs[i].push(await pass(i, (r * PASS) % NQ));
  }
  for (const c of kids) c.send('exit');
  rmSync(dir, { recursive: true, force: true });
  const sd = (xs: number[]) => Math.sqrt(sampleVariance(xs));
  const roundMean = Array.from({ length: R }, (_, r) => mean(logs.map((l) => l[r])));
  const centred = logs.map((l) => l.map((v, r) => v - roundMean[r]));
  const means = centred.map(mean);
  const passSd = mean(centred.map(sd));
  console.log(
    `${K} processes of hnswlib on one saved index, ef ${values.ef}, ${R} rounds of ${PASS} queries each (about ${Math.exp(mean(logs.flat())).toFixed(0)} QPS)`,
  );
  console.log(`processes' mean log QPS against their rounds' mean: ${means.map((m) => m.toFixed(3)).join(' ')}`);
  console.log(
    `spread between processes ${sd(means).toFixed(3)}; a process's mean from its passes' noise alone ${(passSd / Math.sqrt(R)).toFixed(3)} (one pass ${passSd.toFixed(3)})`,
  );
}
