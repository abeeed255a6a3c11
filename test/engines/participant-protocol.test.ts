// The participant protocol (src/adapters/foreign.ts) against hosts in Python that behave and
// that do not: a host that dies mid-request, sends a broken frame, answers a request nobody
// asked, speaks another protocol version, returns more than k ids, or prints to stdout. Each
// ends in one line naming the participant, and nothing hangs. The hosts run on the system's
// python3 with the SDK's reference host (no numpy: vectors arrive as memoryviews).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { z } from 'zod';
import type { EngineSession, OpenContext } from '../../src/contracts.ts';
import { foreignParticipant, pythonSdkDir } from '../../src/adapters/foreign.ts';
import { intKnob } from '../../src/adapters/knobs.ts';
import { UserError } from '../../src/util/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'vecbench-protocol-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const D = 4;

/** A host whose engine is `body` (Python, the methods of an Engine subclass). */
function hostWith(name: string, body: string, prelude = ''): string {
  const path = join(dir, `${name}.py`);
  writeFileSync(
    path,
    `import os, sys, time
sys.path.insert(0, os.environ["VECBENCH_PYTHON_SDK"])
import vecbench_host
from vecbench_host import UserError
${prelude}
class E(vecbench_host.Engine):
    name = "test engine"
    def version(self): return "1.2.3"
    def open(self, dataset, settings, work_dir, max_concurrency, reopen): self.rows = []
    def ingest(self, rows): self.rows.extend(int(i) for i in rows.ids)
    def build(self): pass
    def knobs(self, knobs):
        for k in knobs:
            if k != "ef": raise UserError('unknown knob "%s"' % k)
    def search(self, vector, k, filter): return self.rows[:k]
${body}
vecbench_host.serve(E)
`,
  );
  return path;
}

function participant(script: string) {
  return foreignParticipant({
    name: 'proto-test',
    engine: 'test engine',
    settingsSchema: z.object({}).strict(),
    knobs: { ef: intKnob(1) },
    filters: null,
    filterStrategy: 'none',
    reopen: false,
    concurrency: 'requests',
    host: () => ({ command: 'python3', args: ['-u', script], env: { ...process.env, VECBENCH_PYTHON_SDK: pythonSdkDir() } }),
  });
}

const logs: string[] = [];
function ctx(): OpenContext<Record<string, never>> {
  return {
    dataset: { name: 'tiny', n: 8, d: D, metric: 'ip', hasText: false },
    settings: {},
    workDir: dir,
    maxConcurrency: 4,
    log: (m) => logs.push(m),
  };
}

async function openWith(script: string): Promise<EngineSession> {
  const s = await participant(script).open(ctx());
  const ids = Int32Array.from({ length: 8 }, (_, i) => 100 + i);
  const attrs = Object.fromEntries(
    ['cat10', 'cat100', 'cat1000', 'num', 'cluster', 'lang', 'region', 'tenant', 'label', 'measure'].map((a) => [a, new Int32Array(8)]),
  );
  await s.ingest({ ids, vectors: new Float32Array(8 * D), attrs: attrs as never });
  await s.buildIndex();
  return s;
}

/** Whether a log line matching `match` arrives within 5 s: stderr is a pipe of its own, so a
 * line written before a reply may arrive after it. */
async function logged(match: (line: string) => boolean): Promise<boolean> {
  for (let i = 0; i < 100 && !logs.some(match); i++) await new Promise((r) => setTimeout(r, 50));
  return logs.some(match);
}

const query = (k = 3) => ({ vector: new Float32Array(D), k, filter: null });

test('a host that behaves: version at hello, rows in, many searches in flight answered to their own requests, close ends it', async () => {
  const p = participant(hostWith('good', ''));
  assert.equal(await p.engineVersion(), '1.2.3');
  const s = await openWith(hostWith('good', ''));
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => s.search(query(1 + (i % 8)))));
  answers.forEach((ids, i) =>
    assert.deepEqual(
      Array.from(ids),
      Array.from({ length: 1 + (i % 8) }, (_, j) => 100 + j),
    ),
  );
  await s.close();
});

test("a participant's server reaches the host in open (self.server, before open()); the version read once open replaces hello's", async () => {
  const p = foreignParticipant({
    name: 'proto-test',
    engine: 'test engine',
    settingsSchema: z.object({}).strict(),
    knobs: { ef: intKnob(1) },
    filters: null,
    filterStrategy: 'none',
    reopen: false,
    host: () => ({
      command: 'python3',
      args: [
        '-u',
        hostWith(
          'served',
          '    def open(self, dataset, settings, work_dir, max_concurrency, reopen): self.rows = []; self.seen = self.server\n' +
            '    def opened_version(self): return "server %s:%d %s %s" % (self.seen["host"], self.seen["port"], self.seen["params"]["user"], self.seen["data_dir"])\n',
        ),
      ],
      env: { ...process.env, VECBENCH_PYTHON_SDK: pythonSdkDir() },
    }),
  });
  assert.equal(await p.engineVersion(), '1.2.3');
  const s = await p.open({ ...ctx(), server: { host: '127.0.0.1', port: 4242, dataDir: '/data/x', params: { user: 'u' } } });
  assert.equal(await p.engineVersion(), 'server 127.0.0.1:4242 u /data/x');
  await s.close();
  // Without a server, self.server is None and hello's version stands.
  const plain = participant(
    hostWith('plain', '    def open(self, dataset, settings, work_dir, max_concurrency, reopen):\n        assert self.server is None; self.rows = []\n'),
  );
  const s2 = await plain.open(ctx());
  assert.equal(await plain.engineVersion(), '1.2.3');
  await s2.close();
});

test("the engine's refusal of a knob is a UserError of one line naming the participant", async () => {
  const s = await openWith(hostWith('good2', ''));
  const e = await s.setKnobs({ efx: 3 }).catch((x: unknown) => x);
  assert.ok(e instanceof UserError, String(e));
  assert.equal((e as Error).message, 'proto-test: unknown knob "efx"');
  await s.setKnobs({ ef: 3 });
  await s.close();
});

test("an engine's own exception is one line (the trace goes to the log), and the host goes on", async () => {
  const s = await openWith(hostWith('raises', '    def explain(self, vector, k, filter): raise RuntimeError("boom\\nsecond line")\n'));
  await assert.rejects(s.explain!(query()), (e: Error) => e.message === 'proto-test: RuntimeError: boom' && !(e instanceof UserError));
  assert.ok(await logged((l) => l.includes('Traceback')));
  assert.equal((await s.search(query())).length, 3);
  await s.close();
});

test('a host that dies mid-request: every request in flight fails in one line naming it, with its last words', async () => {
  const s = await openWith(
    hostWith('dies', '    def search(self, vector, k, filter):\n        sys.stderr.write("about to die\\n"); sys.stderr.flush(); os._exit(3)\n'),
  );
  const results = await Promise.allSettled([s.search(query()), s.search(query())]);
  for (const r of results) {
    assert.equal(r.status, 'rejected');
    assert.match((r as PromiseRejectedResult).reason.message, /^proto-test: its host exited with code 3; its last words: about to die$/);
  }
  await assert.rejects(s.search(query()), /its host exited with code 3/);
});

test('a host that lies: more ids than k, a broken frame, an answer nobody asked for, another protocol version', async () => {
  const tooMany = await openWith(hostWith('toomany', '    def search(self, vector, k, filter): return list(range(k + 5))\n'));
  await assert.rejects(tooMany.search(query(2)), /^Error: proto-test: its host returned 7 ids for k = 2$/);
  await tooMany.close();

  // Writes 4 bytes saying "a frame of 3 bytes" on the protocol's stdout.
  const broken = await openWith(
    hostWith(
      'broken',
      '    def search(self, vector, k, filter):\n        import struct; self_out = vecbench_host._WIRE.out; self_out.write(struct.pack("<I", 3)); time.sleep(5)\n',
      '',
    ),
  );
  await assert.rejects(broken.search(query()), /proto-test: its host sent a frame of 3 bytes: not the participant protocol/);

  const stray = await openWith(hostWith('stray', '    def search(self, vector, k, filter):\n        w = vecbench_host._WIRE; w.write(999, {}); return [1]\n'));
  await assert.rejects(stray.search(query()), /proto-test: its host answered request 999, which is not in flight/);

  const oldHost = hostWith('old', '', 'vecbench_host.PROTOCOL_VERSION = 0');
  await assert.rejects(participant(oldHost).open(ctx()), /proto-test: its host speaks participant protocol 0, this vecbench 1; update one of them/);
});

test("a print to stdout in the engine's code goes to the log, not into the protocol", async () => {
  const s = await openWith(hostWith('prints', '    def search(self, vector, k, filter):\n        print("hello from the engine"); return [7]\n'));
  assert.deepEqual(Array.from(await s.search(query())), [7]);
  assert.ok(await logged((l) => l === 'hello from the engine'));
  await s.close();
});

test('a host that cannot start is one line naming the command', async () => {
  const p = foreignParticipant({
    name: 'proto-test',
    engine: 'x',
    settingsSchema: z.object({}).strict(),
    knobs: { ef: intKnob(1) },
    filters: null,
    filterStrategy: 'none',
    reopen: false,
    concurrency: 'requests',
    host: () => ({ command: join(dir, 'no-such-interpreter'), args: [] }),
  });
  await assert.rejects(p.open(ctx()), /^UserError: proto-test: cannot start its host .*no-such-interpreter: spawn .* ENOENT$/);
});

test('the null path crosses the same host and frames but never asks the engine (the harness-overhead pass)', async () => {
  const s = await openWith(hostWith('nullpath', '    def search(self, vector, k, filter): raise RuntimeError("the engine was asked")\n'));
  const path = s.nullPath!();
  await path.setKnobs({ anything: 1 });
  assert.deepEqual(Array.from(await path.search(query(4))), [0, 1, 2, 3]);
  await assert.rejects(s.search(query()), /the engine was asked/);
  await s.close();
});

test('a timed pass runs next to the engine: ids, latencies and errors per query, one frame each way; the null pass too', async () => {
  const s = await openWith(
    hostWith(
      'timed',
      '    def search(self, vector, k, filter):\n        if filter is not None: raise RuntimeError("no filters here")\n        time.sleep(0.002); return self.rows[:k]\n',
    ),
  );
  const requests = Array.from({ length: 5 }, (_, i) => ({
    vector: new Float32Array(D),
    k: 3,
    filter: i === 2 ? ({ op: 'eq', field: 'cat10', value: 1 } as const) : null,
  }));
  const pass = await s.timedPass!(requests, 1);
  assert.equal(pass.results.length, 5);
  assert.deepEqual(Array.from(pass.results[0]), [100, 101, 102]);
  assert.deepEqual(Array.from(pass.results[2]), []);
  assert.equal(pass.errors[2], 'proto-test: RuntimeError: no filters here');
  assert.deepEqual([pass.errors[0], pass.errors[4]], [null, null]);
  // Each search sleeps 2 ms in the engine: its latency holds it, and the wall time all of them.
  for (const i of [0, 1, 3, 4]) assert.ok(pass.latenciesMs[i] >= 2, `latency ${pass.latenciesMs[i]}`);
  assert.ok(pass.wallS >= 0.008);
  const nothing = await s.nullPath!().timedPass!(requests, 1);
  assert.deepEqual(Array.from(nothing.results[2]), [0, 1, 2]);
  assert.ok(nothing.errors.every((e) => e === null));
  assert.ok(nothing.wallS < pass.wallS);
  await s.close();
});

/** Starts COMMAND (a host that prints its pid, then sleeps as a long engine call would) under a
 * parent process, kills the parent, and asks that the host ends within 5 s. */
async function endsWithParent(command: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const parent = spawn(
    process.execPath,
    [
      '-e',
      `require('child_process').spawn(${JSON.stringify(command[0])}, ${JSON.stringify(command.slice(1))}, { stdio: 'inherit' }); setInterval(() => {}, 1000);`,
    ],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (b: Buffer) => resolve(b.toString().trim()))));
  assert.ok(pid > 1, `the host's pid: ${pid}`);
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  assert.ok(alive());
  parent.kill('SIGKILL');
  for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
  const left = alive();
  if (left) process.kill(pid, 'SIGKILL');
  assert.ok(!left, `${command[0]}: the host outlived the process that started it`);
}

// The host's engine call (a build of an hour) does not read stdin, so the closed pipe alone
// would leave it running after a stopped run.
test('a Python host busy in a long engine call ends when the process that started it is killed', async () => {
  const script = join(dir, 'orphan.py');
  writeFileSync(
    script,
    `import os, sys, time
sys.path.insert(0, os.environ["VECBENCH_PYTHON_SDK"])
import vecbench_host
vecbench_host.exit_with_parent()
print(os.getpid(), flush=True)
time.sleep(60)
`,
  );
  await endsWithParent(['python3', script], { VECBENCH_PYTHON_SDK: pythonSdkDir() });
});

test('a Java host busy in a long engine call ends when the process that started it is killed', async () => {
  const classes = join(dir, 'orphan-java');
  writeFileSync(
    join(dir, 'Orphan.java'),
    `public class Orphan {
  public static void main(String[] a) throws Exception {
    VecbenchHost.exitWithParent();
    System.out.println(ProcessHandle.current().pid());
    System.out.flush();
    Thread.sleep(60_000);
  }
}
`,
  );
  const javac = spawnSync('javac', ['--release', '17', '-d', classes, join(pythonSdkDir(), '..', 'java', 'VecbenchHost.java'), join(dir, 'Orphan.java')], {
    encoding: 'utf8',
  });
  assert.equal(javac.status, 0, `javac (a JDK 17+, installed by npm run setup): ${javac.error?.message ?? javac.stderr}`);
  await endsWithParent(['java', '-cp', classes, 'Orphan'], {});
});
