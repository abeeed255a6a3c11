// A server that checks no credential starts only behind a closed port guard: without one (not
// root, no nft) the start is one line saying why and what to do, unless the user sets
// VECBENCH_OPEN_PORTS=1, and then the log names the open ports and who can reach them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OPEN_PORTS_ENV, requireClosed, type PortGuard } from '../../src/runner/port-guard.ts';
import { UserError } from '../../src/util/errors.ts';

const closed: PortGuard = { closed: true, why: null, release() {} };
const open: PortGuard = { closed: false, why: 'only root can add the firewall rule that closes it to other local users', release() {} };

test('a closed guard lets the server start, whatever the variable says', () => {
  requireClosed(closed, 8000, 'the chroma server', {});
  requireClosed(closed, { ports: [1, 2], everyInterface: true }, 'the milvus server', { [OPEN_PORTS_ENV]: '0' });
});

test('an open guard refuses the start in one line naming the ports, who could reach them, why, and the ways out', () => {
  assert.throws(
    () => requireClosed(open, 8000, 'the chroma server', {}),
    (e: Error) => {
      assert.ok(e instanceof UserError);
      assert.ok(!e.message.includes('\n'));
      assert.match(
        e.message,
        /^the chroma server checks no credential on its port 8000, and vecbench cannot close them to every other local user: only root can/,
      );
      assert.match(e.message, /run vecbench as root, or run the server yourself with authentication and give it with --connect, or set VECBENCH_OPEN_PORTS=1/);
      return true;
    },
  );
  assert.throws(
    () => requireClosed(open, { ports: [19530, 2379], everyInterface: true }, 'the milvus server', { [OPEN_PORTS_ENV]: 'yes' }),
    /its ports 19530, 2379, and vecbench cannot close them to every other local user and every other host/,
  );
});

test('VECBENCH_OPEN_PORTS=1 starts it with the ports open, and the log says so', () => {
  const said: string[] = [];
  const write = process.stderr.write;
  const quiet = process.env.VECBENCH_QUIET;
  delete process.env.VECBENCH_QUIET;
  process.stderr.write = ((chunk: string) => {
    said.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    requireClosed(open, { ports: [8080, 50051], everyInterface: true }, 'the weaviate server', { [OPEN_PORTS_ENV]: '1' });
  } finally {
    process.stderr.write = write;
    if (quiet !== undefined) process.env.VECBENCH_QUIET = quiet;
  }
  assert.match(
    said.join(''),
    /the weaviate server: its ports 8080, 50051 answer every other local user and every other host without a credential while it runs \(only root can .*\); VECBENCH_OPEN_PORTS=1 allowed it/,
  );
});
