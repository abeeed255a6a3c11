// Command-line options of the load generator, added to `vecbench run`.
import { InvalidArgumentError, type Command } from 'commander';
import type { LoadOptions } from './load-options.ts';
import { UserError } from '../util/errors.ts';
import { parseHostPort } from './remote-wire.ts';

export interface LoadCliOptions {
  concurrency?: number[];
  openLoop?: number[] | true;
  budget: number;
  clientWorkers?: number;
  loadRequests: number;
  openStep: number;
  clientHosts?: string[];
}

/** "1,2,4,...,64" -> 1,2,4,8,16,32,64 and "100,200,...,500" -> 100,200,300,400,500 (the two
 * values before "..." give the ratio or the step); plain lists are taken as written. */
export function parseLevels(v: string, name: string, integer: boolean): number[] {
  const parts = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const num = (s: string) => {
    const n = Number(s);
    if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
      throw new InvalidArgumentError(
        `${name}: "${s}" is not a positive ${integer ? 'integer' : 'number'} (write e.g. ${integer ? '1,2,4,...,64' : '100,200,400'})`,
      );
    return n;
  };
  const dots = parts.indexOf('...');
  if (dots < 0) return [...new Set(parts.map(num))].sort((a, b) => a - b);
  if (dots < 2 || dots !== parts.length - 2) throw new InvalidArgumentError(`${name}: write "..." between two leading values and the last, e.g. 1,2,4,...,64`);
  const head = parts.slice(0, dots).map(num);
  const last = num(parts[parts.length - 1]);
  const [a, b] = head.slice(-2);
  const ratio = b / a;
  // Geometric when the ratio is a whole number and the last value lies on that progression
  // (1,2,...,64); otherwise evenly spaced (100,200,...,500).
  const steps = Math.log(last / b) / Math.log(ratio);
  const geometric = Number.isInteger(ratio) && ratio > 1 && Math.abs(steps - Math.round(steps)) < 1e-9;
  if (!geometric && b <= a) throw new InvalidArgumentError(`${name}: the values before "..." must grow`);
  const out = [...head];
  for (let x = geometric ? b * ratio : b + (b - a); x <= last; x = geometric ? x * ratio : x + (b - a)) out.push(x);
  if (out[out.length - 1] !== last) out.push(last);
  return [...new Set(out)].sort((x, y) => x - y);
}

export function addLoadOptions(cmd: Command): Command {
  return cmd
    .option('--concurrency <levels>', 'closed-loop concurrency sweep over these in-flight levels after the groups, e.g. 1,2,4,...,64', (v: string) =>
      parseLevels(v, '--concurrency', true),
    )
    .option(
      '--open-loop [rates]',
      'open-loop Poisson arrivals at these rates (requests/s), latency from the intended send time; without rates, a ramp up to saturation',
      (v: string) => parseLevels(v, '--open-loop', false),
    )
    .option(
      '--budget <ms>',
      'open-loop p99 latency budget in ms (the highest rate within it is reported)',
      (v: string) => {
        const n = Number(v);
        if (!(n > 0)) throw new InvalidArgumentError('--budget must be a positive number of milliseconds');
        return n;
      },
      100,
    )
    .option('--client-workers <n>', 'client worker threads for network engines (default: the cores the engine does not use)', (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('--client-workers must be a positive integer');
      return n;
    })
    .option(
      '--client-hosts <list>',
      "run the concurrency sweep's clients on these hosts, each running `vecbench load-worker --listen HOST:PORT` (docs/client-hosts.md), e.g. 10.0.0.2:7100,10.0.0.3:7100",
      (v: string) => {
        const hosts = v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        for (const h of hosts) parseHostPort(h, '--client-hosts');
        return hosts;
      },
    )
    .option(
      '--load-requests <n>',
      'requests per concurrency-sweep point',
      (v: string) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('--load-requests must be a positive integer');
        return n;
      },
      1000,
    )
    .option(
      '--open-step <s>',
      'seconds per open-loop rate',
      (v: string) => {
        const n = Number(v);
        if (!(n > 0)) throw new InvalidArgumentError('--open-step must be a positive number of seconds');
        return n;
      },
      3,
    );
}

export function loadOptionsOf(o: LoadCliOptions): Omit<LoadOptions, 'pointTimeoutS'> | undefined {
  if (o.clientHosts !== undefined && o.concurrency === undefined)
    throw new UserError('--client-hosts drives the closed-loop sweep: give --concurrency levels too (the open loop runs on this host only)');
  if (o.clientHosts !== undefined && o.openLoop !== undefined)
    throw new UserError('--client-hosts drives the closed-loop sweep only: drop --open-loop, or run it in a run of its own without --client-hosts');
  if (o.concurrency === undefined && o.openLoop === undefined) return undefined;
  return {
    concurrency: o.concurrency,
    openLoop: o.openLoop === undefined ? undefined : o.openLoop === true ? 'auto' : o.openLoop,
    budgetMs: o.budget,
    workers: o.clientWorkers,
    requestsPerPoint: o.loadRequests,
    openStepS: o.openStep,
    clientHosts: o.clientHosts,
  };
}
