// Starts a server participant's real server (as the runner does: free 127.0.0.1 port, data
// directory of its own, health check) and opens the participant on the harness's small
// synthetic set. A missing server fails with the adapter's message naming its provision script.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineSession, Knobs, RowAttributes, ServerHandle } from '../../src/contracts.ts';
import { syntheticForTests } from './participant-harness.ts';
import { checkedSession, loadParticipant, type LoadedParticipant } from '../../src/runner/participants.ts';
import { reapOrphans, startServer } from '../../src/runner/server.ts';

function sliceAttrs(attrs: RowAttributes, from: number, to: number): RowAttributes {
  return Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k, v.slice(from, to)])) as RowAttributes;
}

export interface StartedParticipant {
  participant: LoadedParticipant;
  handle: ServerHandle;
  acceptS: number;
  workDir: string;
  serverDir: string;
  logFile: string;
}

/** Starts the participant's server in a fresh directory (or on `existing` data). */
export async function startParticipantServer(
  name: string | LoadedParticipant,
  opts: { n: number; d: number; workDir?: string; existing?: boolean; settingsPath?: string },
): Promise<StartedParticipant> {
  reapOrphans();
  const participant = typeof name === 'string' ? await loadParticipant(name, opts.settingsPath) : name;
  name = participant.name;
  const life = participant.adapter.server;
  if (!life) throw new Error(`participant ${name} has no server lifecycle`);
  const workDir = opts.workDir ?? mkdtempSync(join(tmpdir(), `vecbench-${name}-`));
  chmodSync(workDir, 0o755);
  const serverDir = join(workDir, 'server');
  mkdirSync(serverDir, { recursive: true });
  const logFile = join(workDir, 'server.log');
  const started = await startServer(
    life.start,
    {
      dataset: { name: 'synthetic-test', n: opts.n, d: opts.d, metric: 'ip', hasText: false },
      settings: participant.index,
      dataDir: serverDir,
      existing: opts.existing ?? false,
      logFile,
      log: () => {},
    },
    120,
  );
  return { participant, handle: started.handle, acceptS: started.acceptS, workDir, serverDir, logFile };
}

/** The participant-harness's openOnSynthetic, for a server participant. */
export async function openServerOnSynthetic(
  name: string | LoadedParticipant,
  opts: { n?: number; nq?: number; maxConcurrency?: number; settingsPath?: string } = {},
) {
  const data = syntheticForTests(opts.n ?? 3000, opts.nq ?? 60);
  const started = await startParticipantServer(name, { n: data.n, d: data.d, settingsPath: opts.settingsPath });
  const { participant, handle, workDir } = started;
  const ctx = {
    dataset: { name: 'synthetic-test', n: data.n, d: data.d, metric: data.metric, hasText: false },
    settings: participant.index,
    workDir,
    maxConcurrency: opts.maxConcurrency ?? 4,
    log: () => {},
    server: handle.connection,
  };
  let session: EngineSession;
  try {
    session = checkedSession(participant, await participant.adapter.open(ctx));
    const batch = 1000;
    for (let from = 0; from < data.n; from += batch) {
      const to = Math.min(data.n, from + batch);
      const ids = new Int32Array(to - from).map((_, i) => from + i);
      await session.ingest({ ids, vectors: data.base.slice(from * data.d, to * data.d), attrs: sliceAttrs(data.attrs, from, to) });
    }
    await session.buildIndex();
  } catch (e) {
    await handle.stop();
    rmSync(workDir, { recursive: true, force: true });
    throw e;
  }
  let closed = false;
  const cleanup = async () => {
    if (!closed) await session.close().catch(() => {});
    closed = true;
    await handle.stop();
    rmSync(workDir, { recursive: true, force: true });
  };
  /** Closes the session and stops the server, keeping its data (for a restart). */
  const stopKeepingData = async () => {
    if (!closed) await session.close();
    closed = true;
    await handle.stop();
  };
  /** Starts the server again, without ingest, on the data directory the loaded one left (after
   * stopKeepingData), logging to workDir/<log>; the caller stops it. */
  const restartOnData = (log: string) =>
    startServer(
      participant.adapter.server!.start,
      { dataset: ctx.dataset, settings: participant.index, dataDir: handle.connection.dataDir, existing: true, logFile: join(workDir, log), log: () => {} },
      120,
    );
  return { data, participant, session, workDir, handle, ctx, started, cleanup, stopKeepingData, restartOnData };
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
