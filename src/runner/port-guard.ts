// A server with no authentication of its own (some engines' servers check no token) would answer
// any local user on 127.0.0.1. While it runs, its port is closed to every other user by an
// nftables rule on loopback: connections from sockets not owned by the run's user are refused
// by the kernel, so nothing sits between the harness and the engine (no proxy to measure).
// A server whose ports cannot be bound to 127.0.0.1 alone (they listen on every interface) gets a
// second rule: connections arriving from other hosts (any interface but loopback) are refused
// too. Connections from this machine to any of its own addresses travel over loopback, so the
// first rule covers them.
//
// One nftables table per guarded server, named after the runner's PID and the port, so a table
// whose runner is gone (killed before it could remove it) is recognised and removed by the next
// run (reapPortGuards, called with reapOrphans). Only root can add rules: for anyone else such a
// server does not start (requireClosed), unless the user accepts open ports in so many words
// (VECBENCH_OPEN_PORTS=1), and then the run's log says which ports are open to whom.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { UserError } from '../util/errors.ts';
import { log } from '../util/progress.ts';
import { isRunning } from '../util/proc.ts';

/** The variable by which a user accepts a server whose ports no guard closes. */
export const OPEN_PORTS_ENV = 'VECBENCH_OPEN_PORTS';

const NFT = ['/usr/sbin/nft', '/sbin/nft', '/usr/bin/nft'];
const TABLE_RE = /^vecbench_(\d+)_(\d+)$/;

export interface PortGuard {
  /** True when other users' connections to the port are refused. */
  readonly closed: boolean;
  /** Why it is not closed (not root, nft missing), for the run's log. */
  readonly why: string | null;
  /** Removes the rule (idempotent, synchronous: also called from an exit handler). */
  release(): void;
}

function nftPath(): string | null {
  return NFT.find((p) => existsSync(p)) ?? null;
}

function nft(path: string, args: string[]): { ok: boolean; text: string } {
  const r = spawnSync(path, args, { encoding: 'utf8', timeout: 10_000 });
  return { ok: r.status === 0, text: (r.stderr || r.stdout || String(r.error ?? '')).trim() };
}

const tableName = (port: number) => `vecbench_${process.pid}_${port}`;

/** Several ports of one server; `everyInterface`: they listen on every interface, so connections
 * from other hosts are refused as well. */
export interface GuardedPorts {
  ports: readonly number[];
  everyInterface?: boolean;
}

/** Closes 127.0.0.1:port (and ::1) to every user but this process's own; with GuardedPorts, each
 * of its ports, and with everyInterface, to every other host as well. */
export function closePortToOthers(guarded: number | GuardedPorts): PortGuard {
  const { ports, everyInterface = false } = typeof guarded === 'number' ? { ports: [guarded] } : guarded;
  if (ports.length === 0) throw new Error('no port to close');
  for (const port of ports) if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`bad port ${port}`);
  const port = ports[0];
  const dports = ports.length === 1 ? [String(port)] : ['{', ports.join(', '), '}'];
  const uid = process.getuid?.();
  if (uid !== 0) return unguarded('only root can add the firewall rule that closes it to other local users');
  const path = nftPath();
  if (!path) return unguarded('nft is missing (apt-get install nftables; npm run setup installs it)');
  const table = tableName(port);
  nft(path, ['delete', 'table', 'inet', table]);
  const steps = [
    ['add', 'table', 'inet', table],
    ['add', 'chain', 'inet', table, 'out', '{ type filter hook output priority 0 ; policy accept ; }'],
    ['add', 'rule', 'inet', table, 'out', 'oif', 'lo', 'tcp', 'dport', ...dports, 'meta', 'skuid', '!=', String(uid), 'reject', 'with', 'tcp', 'reset'],
  ];
  if (everyInterface)
    steps.push(
      ['add', 'chain', 'inet', table, 'in', '{ type filter hook input priority 0 ; policy accept ; }'],
      ['add', 'rule', 'inet', table, 'in', 'iif', '!=', 'lo', 'tcp', 'dport', ...dports, 'reject', 'with', 'tcp', 'reset'],
    );
  for (const step of steps) {
    const r = nft(path, step);
    if (!r.ok) {
      nft(path, ['delete', 'table', 'inet', table]);
      throw new Error(
        `could not close port${ports.length > 1 ? 's' : ''} ${ports.join(', ')} to other local users (nft ${step.slice(0, 2).join(' ')}: ${r.text.split('\n')[0]})`,
      );
    }
  }
  let released = false;
  return {
    closed: true,
    why: null,
    release() {
      if (released) return;
      released = true;
      nft(path, ['delete', 'table', 'inet', table]);
    },
  };
}

/**
 * A server that authenticates no one starts only behind a closed guard: otherwise one line says
 * why and what to do, unless OPEN_PORTS_ENV is 1, when the log says the ports are open.
 * `server` names it in the message ("the NAME server").
 */
export function requireClosed(guard: PortGuard, guarded: number | GuardedPorts, server: string, env: NodeJS.ProcessEnv = process.env): void {
  if (guard.closed) return;
  const { ports, everyInterface = false } = typeof guarded === 'number' ? { ports: [guarded] } : guarded;
  const which = `port${ports.length > 1 ? 's' : ''} ${ports.join(', ')}`;
  const whom = everyInterface ? 'every other local user and every other host' : 'every other local user';
  if (env[OPEN_PORTS_ENV] !== '1')
    throw new UserError(
      `${server} checks no credential on its ${which}, and vecbench cannot close them to ${whom}: ${guard.why}; run vecbench as root, or run the server yourself with authentication and give it with --connect, or set ${OPEN_PORTS_ENV}=1 to start it with those ports open`,
    );
  log(`${server}: its ${which} answer ${whom} without a credential while it runs (${guard.why}); ${OPEN_PORTS_ENV}=1 allowed it`);
}

function unguarded(why: string): PortGuard {
  return { closed: false, why, release() {} };
}

/** Removes the guard tables of runners that are gone. Returns the ports it opened again. */
export function reapPortGuards(): number[] {
  if (process.getuid?.() !== 0) return [];
  const path = nftPath();
  if (!path) return [];
  const r = nft(path, ['list', 'tables']);
  if (!r.ok) return [];
  const ports: number[] = [];
  for (const line of r.text.split('\n')) {
    const name = line.trim().replace(/^table inet /, '');
    const m = TABLE_RE.exec(name);
    if (!m || isRunning(Number(m[1]))) continue;
    nft(path, ['delete', 'table', 'inet', name]);
    ports.push(Number(m[2]));
  }
  return ports;
}
