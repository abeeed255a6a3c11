// Issue 15 item 3, the engine handle's side: a participant host whose pipe failed is dead at
// once (a retry must not reuse it), and a host that died of a stop signal stops the run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HostClient, HostError } from '../../src/runner/client.ts';
import { RunStopped } from '../../src/runner/stop.ts';

/** Blocks the event loop, so the host's exit is not yet seen when the next request is sent. */
function blockFor(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

test('a host killed by SIGTERM: the failed send marks it dead before its exit is seen, and the error stops the run', async () => {
  const host = new HostClient('exact');
  await host.request({ type: 'disk' }, 60);
  process.kill(host.pid!, 'SIGTERM');
  blockFor(500);
  const err = await host.request({ type: 'disk' }, 60).then(
    () => null,
    (e: Error) => e,
  );
  assert.equal(host.alive, false, 'dead as soon as its pipe failed');
  assert.ok(err instanceof RunStopped, `a stop, not an engine failure: ${err}`);
  assert.equal(err.signal, 'SIGTERM');
  assert.ok(!(err instanceof HostError), 'no handler of engine failures records it');
});

test('a host killed by SIGKILL is an engine failure (restarted by the runner), and dead at once', async () => {
  const host = new HostClient('exact');
  await host.request({ type: 'disk' }, 60);
  process.kill(host.pid!, 'SIGKILL');
  blockFor(500);
  const err = await host.request({ type: 'disk' }, 60).then(
    () => null,
    (e: Error) => e,
  );
  assert.equal(host.alive, false);
  assert.ok(err instanceof HostError, `${err}`);
  assert.match(err.message, /engine process (killed by SIGKILL|cannot take requests)/);
});

test('a host stopped for a request that took too long says so as its end (the reload records it)', async () => {
  const host = new HostClient('exact');
  await host.request({ type: 'disk' }, 60);
  assert.equal(host.end, null, 'a live host has not ended');
  try {
    // The loop is blocked past the 1 ms limit while the reply travels: after it, timers run
    // before the pipe is read, so the time limit wins.
    const pending = host.request({ type: 'disk' }, 0.001);
    blockFor(200);
    const err = await pending.then(
      () => null,
      (e: Error) => e,
    );
    assert.ok(err instanceof HostError && err.timedOut, `${err}`);
    for (let i = 0; i < 100 && host.alive; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(host.alive, false);
    assert.match(host.end ?? '', /^stopped after a disk request took longer than 0\.001s$/);
  } finally {
    host.kill();
  }
});
