// A server participant's server as the engine handle runs it: started (or attached to, with
// --connect) in the engine's work directory, its data directory chosen, put in the memory
// budget, watched for a death mid-run and stopped. Apart from engine-handle.ts, which runs the
// host process that talks to it.
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerHandle } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import { UserError } from '../util/errors.ts';
import { log } from '../util/progress.ts';
import { redactUrl } from '../util/redact.ts';
import { HostError, SIGNAL_SETTLE_MS } from './client.ts';
import type { EngineBudget } from './engine-budget.ts';
import type { LoadedParticipant } from './participants.ts';
import type { RunOptions } from './run-options.ts';
import { existingServerDataDir, makeServerDataDir } from './server-data.ts';
import { attachServer } from './remote-server.ts';
import { startServer, type StartedServer } from './server.ts';
import { stopRequested, stopSignalOf } from './stop.ts';

export class EngineServer {
  /** The participant's server, when it has one: started before the host, stopped after it. */
  handle: ServerHandle | null = null;
  /** The server's data directory (null: none, or the user's server). */
  dir: string | null = null;
  /** Why the last server died mid-run, recorded with the reload it causes. */
  death: string | null = null;

  constructor(
    private readonly p: LoadedParticipant,
    private readonly ds: Dataset,
    private readonly opts: Pick<RunOptions, 'connect' | 'loadTimeoutS' | 'serverPorts'>,
    private readonly budget: EngineBudget,
    /** Kills the engine's host with the reason of the server's death (and the stop it was). */
    private readonly killHost: (why: string, stop: ReturnType<typeof stopRequested>) => void,
  ) {}

  /** Starts the participant's server (null for an in-process engine) in the work directory. A
   * server that dies while it is the current one kills the host with the reason, so the request under way fails with it
   * and the engine is started again. */
  async start(workDir: string, existing: boolean): Promise<StartedServer | null> {
    const { p, ds, opts } = this;
    const remote = opts.connect?.[p.name];
    const life = p.adapter.server;
    if (!life) return null;
    if (remote) {
      const attached = await attachServer(p.name, life, remote);
      log(`${p.name}: using the server given by URL, ${redactUrl(remote)} (not started or stopped by vecbench)`);
      this.handle = attached.handle;
      return attached;
    }
    // A server running as its own user must reach its directory: the work directory is opened
    // to it, and where --out's ancestors are closed to it the data goes elsewhere (server-data.ts).
    chmodSync(workDir, 0o755);
    const label = `${ds.name}-${p.name}`;
    const user = life.runsAs?.() ?? null;
    this.dir = existing ? existingServerDataDir(workDir, user, label) : makeServerDataDir(workDir, user, label);
    const started = await startServer(
      // A server that cannot start or answer is an engine failure (the group or participant fails
      // with the reason); a missing install stays a UserError naming the provision script.
      (ctx) => life.start(ctx),
      {
        dataset: { name: ds.name, n: ds.n, d: ds.d, metric: ds.metric, hasText: ds.text !== undefined },
        settings: p.index,
        dataDir: this.dir,
        existing,
        logFile: join(workDir, 'server.log'),
        log: (m) => log(`${p.name}: ${m}`),
      },
      opts.loadTimeoutS,
      opts.serverPorts?.[p.name] === undefined ? undefined : { port: opts.serverPorts[p.name], participant: p.name },
    ).catch((e: unknown) => {
      if (e instanceof UserError) throw e;
      throw new HostError(`participant ${p.name}: ${(e as Error).message}`);
    });
    const server = started.handle;
    this.handle = server;
    // A server's whole process tree is the engine: its children follow it into the budget.
    this.budget.get()?.add(server.pid);
    void server.waitExit().then(async () => {
      if (this.handle !== server) return; // stopped on purpose
      // A group signal reaches the server and the runner at once: give the runner's own
      // handler a moment, so that a stop is not recorded as the server's death.
      await new Promise((r) => setTimeout(r, SIGNAL_SETTLE_MS));
      if (this.handle !== server) return;
      const why = `${p.name} server (pid ${server.pid}) died mid-run: ${server.exitReason}`;
      this.handle = null;
      const stop = stopRequested() ?? stopSignalOf((/^killed by (SIG[A-Z]+)$/.exec(server.exitReason ?? '')?.[1] ?? null) as NodeJS.Signals | null);
      if (!stop) {
        log(why);
        this.death = why;
      }
      this.killHost(why, stop);
    });
    return started;
  }

  /** Stops the server (one the user runs is only let go). */
  async stop(): Promise<void> {
    const server = this.handle;
    this.handle = null;
    await server?.stop();
  }
}
