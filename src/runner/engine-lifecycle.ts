// An engine opened in this process, for the callers that drive a session themselves instead of
// through an engine host: the load generator's null-engine ceiling, the benches and the tests'
// harness. It is laid out as run lays out an engine's work directory (docs/runs.md, "Resume and
// index reuse"): the session's files in `workDir`, a server's data in `workDir/server`, its output
// in `workDir/server.log`, the directory opened to a server that runs as its own user. The server
// is started on a free port and answers its health check before the session opens on it; the
// session closes before the server stops; the directory goes unless its data is kept.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatasetInfo, EngineSession, OpenContext } from '../contracts.ts';
import { checkedSession, type LoadedParticipant } from './participants.ts';
import { startServer, type StartedServer } from './server.ts';

/** How long a server started here may take to answer its health check, s. */
const START_TIMEOUT_S = 120;

interface EngineServerOptions {
  dataset: DatasetInfo;
  workDir: string;
  /** Start on the data an earlier start left in workDir/server (a restart): nothing initialised. */
  existing?: boolean;
  /** Index settings other than the participant's own (a bench's). */
  settings?: unknown;
  /** The server's output file, in workDir (default server.log). */
  logName?: string;
  log?: (message: string) => void;
  timeoutS?: number;
}

/** A new temporary directory (mkdtemp) for an engine named `name`, outside any run's --out
 * (a run's engine homes are engine-home.ts's). */
export function scratchEngineDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `vecbench-${name}-`));
}

/** Starts the participant's server with its data in workDir/server, healthy when it returns. */
export function startEngineServer(p: LoadedParticipant, o: EngineServerOptions): Promise<StartedServer> {
  const life = p.adapter.server;
  if (!life) throw new Error(`participant ${p.name} has no server lifecycle`);
  // A server may run as its own user (PostgreSQL): it must reach its data directory.
  chmodSync(o.workDir, 0o755);
  const dataDir = join(o.workDir, 'server');
  mkdirSync(dataDir, { recursive: true });
  return startServer(
    life.start,
    {
      dataset: o.dataset,
      settings: o.settings ?? p.index,
      dataDir,
      existing: o.existing ?? false,
      logFile: join(o.workDir, o.logName ?? 'server.log'),
      log: o.log ?? (() => {}),
    },
    o.timeoutS ?? START_TIMEOUT_S,
  );
}

export interface OpenedEngine {
  participant: LoadedParticipant;
  workDir: string;
  /** The participant's server, null for an in-process engine. */
  server: StartedServer | null;
  session: EngineSession;
  /** The context the session was opened with (a reopen takes it again). */
  ctx: OpenContext<unknown>;
  /** Closes the session (once) and stops the server; the directory is removed unless `keepData`
   * (a restart on the same data follows). A close that fails is thrown after the rest is done,
   * or ignored with `closeErrors: 'ignore'`. */
  stop(o?: { keepData?: boolean; closeErrors?: 'throw' | 'ignore' }): Promise<void>;
}

/** Opens the participant afresh in `workDir` (a new directory when not given), its server first. */
export async function openEngine(
  p: LoadedParticipant,
  o: { dataset: DatasetInfo; workDir?: string; maxConcurrency: number; log?: (message: string) => void; reopen?: boolean },
): Promise<OpenedEngine> {
  const workDir = o.workDir ?? scratchEngineDir(p.name);
  const log = o.log ?? (() => {});
  let server: StartedServer | null = null;
  let session: EngineSession | null = null;
  let closed = false;
  const stop = async (s: { keepData?: boolean; closeErrors?: 'throw' | 'ignore' } = {}) => {
    let failed: unknown = null;
    if (!closed && session) await session.close().catch((e: unknown) => (failed = e));
    closed = true;
    await server?.handle.stop();
    if (!s.keepData) rmSync(workDir, { recursive: true, force: true });
    if (failed !== null && s.closeErrors !== 'ignore') throw failed;
  };
  try {
    if (p.adapter.server) server = await startEngineServer(p, { dataset: o.dataset, workDir, log });
    const ctx: OpenContext<unknown> = {
      dataset: o.dataset,
      settings: p.index,
      workDir,
      maxConcurrency: o.maxConcurrency,
      log,
      ...(server ? { server: server.handle.connection } : {}),
    };
    // reopen: the files a build left in workDir, searched without ingest.
    if (o.reopen && !p.adapter.reopen) throw new Error(`participant ${p.name} cannot reopen its data (no reopen in its adapter)`);
    session = checkedSession(p, o.reopen ? await p.adapter.reopen!(ctx) : await p.adapter.open(ctx));
    return { participant: p, workDir, server, session, ctx, stop };
  } catch (e) {
    await stop({ closeErrors: 'ignore' });
    throw e;
  }
}
