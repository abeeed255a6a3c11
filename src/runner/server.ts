// Server lifecycle helpers for participants whose engine is a server (a database, a key-value
// store, an HTTP service): a free 127.0.0.1 port, a data directory owned by the run, spawn, health check, stop
// by PID, and detection of a server that died mid-run. Servers the user runs (--connect) are in
// remote-server.ts.
//
// A server never outlives the run that started it, by three independent means:
//  1. the kernel: every server is exec'd through `setpriv --pdeathsig KILL`, so the moment the
//     process that spawned it dies, even by SIGKILL, the kernel kills the server (its own
//     children, e.g. PostgreSQL backends, exit when their postmaster dies);
//  2. this process: an 'exit' handler kills every live server's process group;
//  3. a pid file per server in a registry directory, naming the runner's PID and start time:
//     `reapOrphans()` (called by every run and by the tests' teardown) kills the process group
//     of any server whose runner is gone, in case 1 and 2 were both defeated.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerConnection, ServerHandle, ServerStartContext } from '../contracts.ts';
import { UserError } from '../util/errors.ts';
import { checkPrivateDir, privateDir, readOwnFile, writeNewPrivateFile } from '../util/private-dir.ts';
import { declaredCredentialEnvVars } from '../util/credential-env.ts';
import { SECRETS_ENV } from '../util/redact.ts';
import { isRunning as processAlive, startTicks as processStartTicks } from '../util/proc.ts';
import { closePortToOthers, reapPortGuards, requireClosed, type GuardedPorts, type PortGuard } from './port-guard.ts';

/** Where pid files of live servers are kept ($VECBENCH_SERVER_REGISTRY overrides, for tests):
 * a directory of this user's own (one per uid), checked each time it is used. */
export function registryDir(): string {
  return process.env.VECBENCH_SERVER_REGISTRY ?? join(tmpdir(), `vecbench-servers-${process.getuid?.() ?? 'user'}`);
}
const REGISTRY_FIX = 'set VECBENCH_SERVER_REGISTRY to a directory of your own';

/** A pid file as written by this module, or null when the text is anything else. */
function parsePidFile(text: string | null): PidFile | null {
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as PidFile;
    const int = (x: unknown) => Number.isInteger(x) && (x as number) > 0;
    if (typeof v?.name !== 'string' || !int(v.pid) || !int(v.runner) || typeof v.dataDir !== 'string') return null;
    return v;
  } catch {
    return null;
  }
}

import { freePort } from './free-port.ts';

export { freePort };

// Who a process is (PID plus start time) is read from /proc in one place (util/proc.ts).
export { processAlive, processStartTicks };

interface PidFile {
  name: string;
  pid: number;
  /** Start ticks of the server process, so a reused PID is never killed. */
  start: number | null;
  runner: number;
  runnerStart: number | null;
  dataDir: string;
  started: string;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone; the leader alone may still exist if it left its group.
    try {
      process.kill(pid, signal);
    } catch {
      /* gone */
    }
  }
}

/** Kills the servers whose runner is gone (killed before it could stop them) and removes
 * their pid files. Returns what it reaped. Safe to call any time: live runs are untouched. */
export function reapOrphans(): { name: string; pid: number }[] {
  const dir = registryDir();
  if (!existsSync(dir)) return [];
  checkPrivateDir(dir, REGISTRY_FIX);
  const reaped: { name: string; pid: number }[] = [];
  for (const f of readdirSync(dir)) {
    // Only the files this module writes (<pid>.json); anything else is left alone.
    if (!/^\d+\.json$/.test(f)) continue;
    const path = join(dir, f);
    const info = parsePidFile(readOwnFile(path));
    if (info === null || `${info.pid}.json` !== f) {
      rmSync(path, { force: true });
      continue;
    }
    const runnerLive = processAlive(info.runner) && processStartTicks(info.runner) === info.runnerStart;
    if (runnerLive) continue;
    if (processAlive(info.pid) && processStartTicks(info.pid) === info.start) {
      killGroup(info.pid, 'SIGKILL');
      reaped.push({ name: info.name, pid: info.pid });
    }
    rmSync(path, { force: true });
  }
  reapPortGuards();
  return reaped;
}

interface ServerSpawnSpec {
  /** Short name for messages and the pid file, e.g. "postgres". */
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Run as this user (e.g. PostgreSQL refuses root). */
  uid?: number;
  gid?: number;
  /** The server's data directory, recorded in the pid file. */
  dataDir: string;
  /** stdout and stderr are appended here (the last lines are quoted when it dies). */
  logFile: string;
  /** The signal that asks for a clean shutdown that keeps the data (default SIGTERM). */
  stopSignal?: NodeJS.Signals;
  /** Seconds a clean shutdown may take (writing its data) before SIGKILL (default 300). */
  stopTimeoutS?: number;
  /** A server that authenticates no one: this 127.0.0.1 port (or these ports, and with
   * everyInterface to other hosts too) is closed to other local users while it runs (port-guard.ts). */
  closeToOthers?: number | GuardedPorts;
}

const live = new Set<ServerProcess>();

/** A spawned server process: its PID, whether it is still alive, and a stop by PID. */
class ServerProcess {
  readonly pid: number;
  readonly startedAt = performance.now();
  private exitInfo: string | null = null;
  private readonly exited: Promise<void>;
  private readonly pidFile: string;
  /** True once stop() was called: an exit after that is expected, not a death. */
  private stopping = false;

  constructor(
    readonly spec: ServerSpawnSpec,
    readonly child: ChildProcess,
    /** The firewall rule that closes its port to other users, when it has one. */
    readonly portGuard: PortGuard | null = null,
  ) {
    if (child.pid === undefined) throw new Error(`${spec.name}: spawn failed`);
    this.pid = child.pid;
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        this.exitInfo = signal ? `killed by ${signal}` : `exited with code ${code}`;
        live.delete(this);
        portGuard?.release();
        rmSync(this.pidFile, { force: true });
        resolve();
      });
    });
    const dir = privateDir(registryDir(), REGISTRY_FIX);
    this.pidFile = join(dir, `${this.pid}.json`);
    const info: PidFile = {
      name: spec.name,
      pid: this.pid,
      start: processStartTicks(this.pid),
      runner: process.pid,
      runnerStart: processStartTicks(process.pid),
      dataDir: spec.dataDir,
      started: new Date().toISOString(),
    };
    writeNewPrivateFile(this.pidFile, JSON.stringify(info));
    live.add(this);
  }

  get alive(): boolean {
    return this.exitInfo === null;
  }

  /** Why the process ended ("exited with code 1", "killed by SIGKILL"), or null while alive. */
  get exitReason(): string | null {
    return this.exitInfo;
  }

  /** True when it ended without being asked to: it died mid-run. */
  get died(): boolean {
    return this.exitInfo !== null && !this.stopping;
  }

  /** The last lines of its log, for error messages. */
  logTail(lines = 8): string {
    try {
      return readFileSync(this.spec.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  /** A message naming the death and the log's last lines. */
  deathMessage(): string {
    const tail = this.logTail();
    return `${this.spec.name} server (pid ${this.pid}) ${this.exitInfo ?? 'is running'}${tail ? `; its log ends:\n${tail}` : ''}`;
  }

  /** Resolves when the process has exited. */
  waitExit(): Promise<void> {
    return this.exited;
  }

  /** Stops it by PID: the clean-shutdown signal, then after timeoutS SIGKILL to its whole
   * process group. Resolves once it is gone. */
  async stop(timeoutS = this.spec.stopTimeoutS ?? 300): Promise<void> {
    this.stopping = true;
    if (!this.alive) return;
    try {
      process.kill(this.pid, this.spec.stopSignal ?? 'SIGTERM');
    } catch {
      /* already gone */
    }
    const timer = setTimeout(() => killGroup(this.pid, 'SIGKILL'), timeoutS * 1000);
    await this.exited;
    clearTimeout(timer);
    // Children that outlived their leader (none should) go with the group.
    killGroup(this.pid, 'SIGKILL');
  }

  /** Immediate SIGKILL of the process group (tests, and the exit handler). */
  killNow(): void {
    this.stopping = true;
    if (this.alive) killGroup(this.pid, 'SIGKILL');
    this.portGuard?.release();
  }
}

/** Kills every server this process started and that is still running. */
function killAllServers(): void {
  for (const s of live) s.killNow();
}
process.on('exit', killAllServers);

let setprivChecked = false;
function setprivPath(): string {
  const path = '/usr/bin/setpriv';
  if (!setprivChecked) {
    if (!existsSync(path)) throw new UserError(`${path} is missing (it ties each server's life to the run's); install util-linux: apt-get install util-linux`);
    setprivChecked = true;
  }
  return path;
}

/** The environment a server starts with: the given one without any secret of vecbench's. */
function serverEnv(from: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...from };
  const declared = new Set(declaredCredentialEnvVars());
  for (const k of Object.keys(env)) {
    if (k === SECRETS_ENV || k.startsWith('VECBENCH_CONNECT_') || k.startsWith('VECBENCH_LOAD_SECRET') || declared.has(k)) delete env[k];
  }
  return env;
}

/**
 * Spawns a server in a process group of its own (so it and its children are stopped together,
 * and a terminal's Ctrl-C reaches the runner, which stops it in order), with the kernel's
 * parent-death signal set so it dies with this process. stdout and stderr go to spec.logFile.
 */
export function spawnServer(spec: ServerSpawnSpec): ServerProcess {
  reapOrphans();
  if (!existsSync(spec.command)) throw new UserError(`${spec.name}: ${spec.command} not found`);
  const log = openSync(spec.logFile, 'a');
  // An engine server has no use for vecbench's secrets, and another local user may be able to
  // read a server's environment (through the server itself): the masked secrets, the connect
  // URLs, the load workers' secret and the credential variables participants declare go.
  const env = serverEnv(spec.env ?? process.env);
  // Closed before the server listens: no moment in which another user could reach it.
  const guard = spec.closeToOthers === undefined ? null : closePortToOthers(spec.closeToOthers);
  try {
    if (guard && spec.closeToOthers !== undefined) requireClosed(guard, spec.closeToOthers, `the ${spec.name} server`);
    const child = spawn(setprivPath(), ['--pdeathsig', 'KILL', '--', spec.command, ...spec.args], {
      cwd: spec.cwd,
      env,
      uid: spec.uid,
      gid: spec.gid,
      detached: true,
      stdio: ['ignore', log, log],
    });
    return new ServerProcess(spec, child, guard);
  } catch (e) {
    guard?.release();
    throw e;
  } finally {
    closeSync(log);
  }
}

/** The uid and gid of a system user (e.g. "postgres"), or null when it does not exist. */
export function userIds(user: string): { uid: number; gid: number } | null {
  const r = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', user], { encoding: 'utf8' });
  if (r.status !== 0 || g.status !== 0) return null;
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** The ServerHandle of a spawned process: what participants' server.start() returns. */
export function serverHandle(proc: ServerProcess, connection: ServerConnection, healthy: () => Promise<boolean>): ServerHandle {
  return {
    pid: proc.pid,
    connection,
    get alive() {
      return proc.alive;
    },
    get exitReason() {
      return proc.exitReason;
    },
    healthy,
    stop: () => proc.stop(),
    waitExit: () => proc.waitExit(),
  };
}

export interface StartedServer {
  handle: ServerHandle;
  /** Seconds from the start request until the health check passed. */
  acceptS: number;
}

/** The one line for a fixed port another process holds. */
function portTakenMessage(port: number, participant: string): string {
  return `port ${port} on 127.0.0.1 is already in use (another process listens there), so the ${participant} server cannot start on it; choose another with --server-port ${participant}=PORT, or leave --server-port out and vecbench picks a free port`;
}

/** Throws a UserError when this process cannot listen on port of 127.0.0.1 (another process
 * holds it, or it needs privileges). */
export function checkPortFree(port: number, participant: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EADDRINUSE') reject(new UserError(portTakenMessage(port, participant)));
      else if (e.code === 'EACCES')
        reject(
          new UserError(
            `port ${port} on 127.0.0.1 needs privileges this process lacks (ports below 1024 need root); choose one above 1024 with --server-port ${participant}=PORT`,
          ),
        );
      else
        reject(
          new UserError(
            `port ${port} on 127.0.0.1 cannot be used for the ${participant} server (${e.code ?? e.message}); choose another with --server-port ${participant}=PORT`,
          ),
        );
    });
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve()));
  });
}

/**
 * Starts a participant's server on a free 127.0.0.1 port and waits until it answers its health
 * check (runner side). A port taken between choosing and binding is retried once. With
 * `fixed` (--server-port), it starts on that port or fails with one line naming it.
 */
export async function startServer<S>(
  start: (ctx: ServerStartContext<S>) => Promise<ServerHandle>,
  ctx: Omit<ServerStartContext<S>, 'port'>,
  timeoutS: number,
  fixed?: { port: number; participant: string },
): Promise<StartedServer> {
  for (let attempt = 0; ; attempt++) {
    if (fixed) await checkPortFree(fixed.port, fixed.participant);
    const port = fixed?.port ?? (await freePort());
    const t0 = performance.now();
    const handle = await start({ ...ctx, port });
    const deadline = t0 + timeoutS * 1000;
    let ok = false;
    while (handle.alive && performance.now() < deadline) {
      try {
        ok = await handle.healthy();
      } catch {
        ok = false;
      }
      if (ok) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    if (ok) return { handle, acceptS: (performance.now() - t0) / 1000 };
    const log = tailOf(ctx.logFile);
    if (handle.alive) {
      await handle.stop();
      throw new Error(`server did not answer its health check within ${timeoutS}s; it was stopped. Log (${ctx.logFile}):\n${log}`);
    }
    const portTaken = /address already in use|could not bind|bind:/i.test(log);
    if (portTaken && fixed) throw new UserError(portTakenMessage(fixed.port, fixed.participant));
    if (attempt === 0 && portTaken) continue;
    throw new Error(`server did not start (${handle.exitReason}). Log (${ctx.logFile}):\n${log}`);
  }
}

function tailOf(file: string, lines = 12): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
