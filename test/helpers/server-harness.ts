// Starts a server participant's real server (as the runner does: free 127.0.0.1 port, data
// directory of its own, health check) and opens the participant on the harness's small
// synthetic set. A missing server fails with the adapter's message naming its provision script.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Knobs, ServerHandle } from '../../src/contracts.ts';
import { openOnSynthetic } from './participant-harness.ts';
import { scratchEngineDir, startEngineServer } from '../../src/runner/engine-lifecycle.ts';
import { checkedSession, loadParticipant, type LoadedParticipant } from '../../src/runner/participants.ts';
import { reapOrphans } from '../../src/runner/server.ts';

export interface StartedParticipant {
  participant: LoadedParticipant;
  handle: ServerHandle;
  acceptS: number;
  workDir: string;
  serverDir: string;
  logFile: string;
}

/** Starts the participant's server in a fresh directory (or on `existing` data in `workDir`),
 * through the engine lifecycle the ceiling and the benches use. */
export async function startParticipantServer(
  name: string | LoadedParticipant,
  opts: { n: number; d: number; workDir?: string; existing?: boolean; settingsPath?: string },
): Promise<StartedParticipant> {
  reapOrphans();
  const participant = typeof name === 'string' ? await loadParticipant(name, opts.settingsPath) : name;
  const workDir = opts.workDir ?? scratchEngineDir(participant.name);
  const dataset = { name: 'synthetic-test', n: opts.n, d: opts.d, metric: 'ip' as const, hasText: false };
  const started = await startEngineServer(participant, { dataset, workDir, existing: opts.existing });
  return { participant, handle: started.handle, acceptS: started.acceptS, workDir, serverDir: join(workDir, 'server'), logFile: join(workDir, 'server.log') };
}

/** The participant-harness's openOnSynthetic, for a server participant: with its server's
 * handle, and a restart of the server on the data a stopKeepingData left. */
export async function openServerOnSynthetic(
  name: string | LoadedParticipant,
  opts: { n?: number; nq?: number; maxConcurrency?: number; settingsPath?: string } = {},
) {
  reapOrphans();
  const opened = await openOnSynthetic(name, opts);
  const started = opened.server;
  if (!started) {
    await opened.cleanup();
    throw new Error(`participant ${opened.participant.name} has no server lifecycle`);
  }
  /** Starts the server again, without ingest, on the data the loaded one left (after
   * stopKeepingData), logging to workDir/<log>; the caller stops it. */
  const restartOnData = (log: string) =>
    startEngineServer(opened.participant, { dataset: opened.ctx.dataset, workDir: opened.workDir, existing: true, logName: log });
  return { ...opened, handle: started.handle, started, restartOnData };
}

/**
 * A server the user runs, given by URL (--connect): the adapter's connection for `url` passes
 * its check, and a session reopened through it (no ingest) answers the first queries at `knobs`
 * exactly as the session the test loaded on the same server does.
 */
export async function remoteAnswersAsLoaded(opened: Awaited<ReturnType<typeof openServerOnSynthetic>>, url: string, knobs: Knobs, queries = 10): Promise<void> {
  const { participant, data, session, ctx } = opened;
  const remote = participant.adapter.server?.remote;
  assert.ok(remote, `${participant.name} takes no server given by URL (server.remote)`);
  assert.ok(participant.adapter.reopen, `${participant.name} cannot open a server's existing data (reopen)`);
  const connection = remote.connection(new URL(url));
  assert.equal(connection.dataDir, '', "a user's server keeps its data where it likes: no data directory");
  await remote.check(connection);
  const through = checkedSession(participant, await participant.adapter.reopen({ ...ctx, server: connection }));
  try {
    await session.setKnobs(knobs);
    await through.setKnobs(knobs);
    for (let q = 0; q < queries; q++) {
      const request = { vector: data.queries.subarray(q * data.d, (q + 1) * data.d), k: 10, filter: null };
      assert.deepEqual(Array.from(await through.search(request)), Array.from(await session.search(request)), `query ${q}`);
    }
  } finally {
    await through.close();
  }
}
