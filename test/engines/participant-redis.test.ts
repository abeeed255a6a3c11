// Redis 8 vector sets on a real redis-server, float32 (`redis`) and int8 (`redis-q8`), end to
// end on the harness's small synthetic set: recall against a naive exact search, FILTER
// expressions, a restart on the saved data, writes. Needs participants/redis/provision.sh.
// The contract suite runs on each one's load: its reads first, the tests here, then its writes
// and reopen, then the restart test here (on the data the suite's reopen left).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { passes } from '../../src/datasets/groups.ts';
import { PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { reapOrphans } from '../../src/runner/server.ts';
import { DISABLED_COMMANDS, filterToRedis } from '../../participants/redis/adapter.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder } from '../helpers/participant-harness.ts';
import { openServerOnSynthetic, startParticipantServer } from '../helpers/server-harness.ts';

after(() => {
  reapOrphans();
});

test('FilterExpr becomes a VSIM FILTER expression', () => {
  assert.equal(filterToRedis({ op: 'eq', field: 'cat10', value: 3 }), '.cat10 == 3');
  assert.equal(
    filterToRedis({
      op: 'and',
      args: [
        { op: 'eq', field: 'cat10', value: 3 },
        { op: 'range', field: 'num', gte: 100, lt: 200 },
      ],
    }),
    '.cat10 == 3 and (.num >= 100 and .num < 200)',
  );
  assert.throws(() => filterToRedis({ op: 'eq', field: 'color' as 'cat10', value: 1 }), /unknown filter field "color"/);
  assert.throws(() => filterToRedis({ op: 'eq', field: 'cat10', value: 1.5 }), /filter cat10 =: 1\.5 is not a 32-bit integer/);
});

test('a missing server fails with a message naming the provision script', async () => {
  const prev = process.env.VECBENCH_CACHE;
  process.env.VECBENCH_CACHE = '/nonexistent-vecbench-cache';
  try {
    await assert.rejects(startParticipantServer('redis', { n: 10, d: 4 }), /participants\/redis\/provision\.sh/);
  } finally {
    if (prev === undefined) delete process.env.VECBENCH_CACHE;
    else process.env.VECBENCH_CACHE = prev;
  }
});

for (const [name, minTop] of [
  ['redis', 0.95],
  ['redis-q8', 0.9],
] as const) {
  describe(name, () => {
    let opened: Awaited<ReturnType<typeof openServerOnSynthetic>>;
    before(async () => {
      opened = await openServerOnSynthetic(name, { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
    });
    after(async () => {
      await opened?.cleanup();
    });

    contractSuite(name, join(PARTICIPANTS_DIR, name), { shared: () => opened, part: 'reads' });

    test('the server asks for the password of this start: a local user without it gets NOAUTH', async () => {
      const { host, port, params } = opened.handle.connection;
      assert.match(String(params.password), /^[0-9a-f]{48}$/);
      const reply = await new Promise<string>((resolve, reject) => {
        const sock = connect({ host, port });
        let buf = '';
        sock.on('error', reject);
        sock.on('connect', () => sock.write('FLUSHALL\r\n'));
        sock.on('data', (d) => {
          buf += d.toString('latin1');
          if (buf.includes('\r\n')) {
            sock.destroy();
            resolve(buf);
          }
        });
      });
      assert.match(reply, /^-NOAUTH/);
      // With the password, the commands that would reach beyond the data are not there at all.
      for (const cmd of ['CONFIG GET dir', 'MODULE LIST', 'DEBUG SLEEP 0', 'REPLICAOF 127.0.0.1 1']) {
        const r = await new Promise<string>((resolve, reject) => {
          const sock = connect({ host, port });
          let buf = '';
          sock.on('error', reject);
          sock.on('connect', () => sock.write(`AUTH ${String(params.password)}\r\n${cmd}\r\n`));
          sock.on('data', (d) => {
            buf += d.toString('latin1');
            if (buf.split('\r\n').length > 2) {
              sock.destroy();
              resolve(buf.split('\r\n')[1]);
            }
          });
        });
        assert.match(r, /^-ERR unknown command/, `${cmd}: ${r}`);
      }
      assert.deepEqual([...DISABLED_COMMANDS].sort(), ['CONFIG', 'DEBUG', 'FAILOVER', 'MIGRATE', 'MODULE', 'PSYNC', 'REPLICAOF', 'SLAVEOF', 'SYNC']);
      // The rows are still there.
      const pts = await checkLadder(opened, 'none', 10);
      assert.ok(pts.at(-1)!.recall > 0.5);
    });

    test('version and quantization come from the server', async () => {
      assert.match(await opened.participant.adapter.engineVersion(), /^Redis 8\.\d+\.\d+ \(vector sets\)$/);
      assert.equal((opened.participant.index as { quantization: string }).quantization, name === 'redis' ? 'NOQUANT' : 'Q8');
    });

    test(`unfiltered k=10 reaches recall >= ${minTop}`, async () => {
      const pts = await checkLadder(opened, 'none', 10);
      assert.ok(pts[pts.length - 1].recall >= minTop, `top recall ${pts[pts.length - 1].recall}`);
      for (const p of pts) assert.equal(p.unknownOrDuplicate, 0);
    });

    for (const filter of ['cat10', 'num1', 'cat10+num10', 'lang']) {
      test(`filter ${filter}: no violations, recall >= 0.85 at the top`, async () => {
        const pts = await checkLadder(opened, filter, 10);
        for (const p of pts) assert.equal(p.violations, 0, `violations at ${JSON.stringify(p.knobs)}`);
        assert.ok(pts[pts.length - 1].recall >= 0.85, `top recall ${pts[pts.length - 1].recall}`);
      });
    }

    test('k=100 unfiltered reaches recall >= 0.9', async () => {
      const pts = await checkLadder(opened, 'none', 100);
      assert.ok(pts[pts.length - 1].recall >= 0.9, `top recall ${pts[pts.length - 1].recall}`);
    });

    test('writes: deleted ids never come back; a filtered search finds the row itself', async () => {
      const { session, data } = opened;
      await session.setKnobs({ ef: 200 });
      const vec = (id: number) => data.base.slice(id * data.d, (id + 1) * data.d);
      await session.delete!(Int32Array.from([7, 70]));
      for (const id of [7, 70]) assert.ok(!Array.from(await session.search({ vector: vec(id), k: 10, filter: null })).includes(id));
      const f = { op: 'eq', field: 'cat10', value: data.attrs.cat10[8] } as const;
      const got = Array.from(await session.search({ vector: vec(8), k: 10, filter: f }));
      assert.equal(got[0], 8);
      for (const id of got) assert.ok(passes(f, data.attrs, id));
      assert.ok((await session.diskBytes!()) > data.n * data.d);
    });

    // The suite's write checks and its reopen, which stops the server. The deletes above leave
    // base rows only.
    contractSuite(name, join(PARTICIPANTS_DIR, name), { shared: () => opened, part: 'writes' });

    // After the suite's reopen check, which stopped the loaded server and its restart: the
    // session restarted here is one on the server started again, without ingest, on the data
    // that check left.
    test('a restart loads the saved set without ingest and answers the same', async () => {
      const { participant, ctx, data } = opened;
      const startOnData = opened.restartOnData;
      const q = data.queries.slice(0, data.d);
      const live = await startOnData('server-live.log');
      let want: number[];
      try {
        const session = await participant.adapter.reopen!({ ...ctx, server: live.handle.connection });
        await session.setKnobs({ ef: 200 });
        want = Array.from(await session.search({ vector: q, k: 10, filter: null }));
        await session.close();
      } finally {
        await live.handle.stop();
      }
      const again = await startOnData('server2.log');
      try {
        const s2 = await participant.adapter.reopen!({ ...ctx, server: again.handle.connection });
        await s2.setKnobs({ ef: 200 });
        assert.deepEqual(Array.from(await s2.search({ vector: q, k: 10, filter: null })), want);
        await s2.close();
      } finally {
        await again.handle.stop();
      }
    });
  });
}
