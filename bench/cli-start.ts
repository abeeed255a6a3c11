// `npm run bench:cli-start`: how long the CLI takes to start, against Node itself. Runs, in
// pairs, `node -e 0` and `node bin/vecbench.js ARGS` (default `--help`; `-- run --dataset nope`
// times a one-line error), the order within a pair alternating, so drift on a shared machine
// falls on both alike. Prints each side's median [min-max] over the pairs, the median of the
// per-pair ratios with their min-max, and the load average before and after.
// Options: --pairs N (default 21), then `--` and the CLI's arguments.
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/vecbench.js', import.meta.url));
const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash < 0 ? argv : argv.slice(0, dash);
const cliArgs = dash < 0 ? ['--help'] : argv.slice(dash + 1);
const pairsAt = own.indexOf('--pairs');
const pairs = pairsAt < 0 ? 21 : Number(own[pairsAt + 1]);
if (!Number.isInteger(pairs) || pairs < 3) {
  process.stderr.write('bench:cli-start: --pairs must be an integer >= 3\n');
  process.exit(2);
}

function timeMs(args: string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: 'ignore', env: { ...process.env, VECBENCH_QUIET: '1' } });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) throw r.error;
  return ms;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (xs: number[], digits = 0) => `${median(xs).toFixed(digits)} [${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}]`;

const before = loadavg()[0];
// One unrecorded pair warms the page cache for both.
timeMs(['-e', '0']);
timeMs([BIN, ...cliArgs]);
const node: number[] = [];
const cli: number[] = [];
for (let i = 0; i < pairs; i++) {
  const a = () => node.push(timeMs(['-e', '0']));
  const b = () => cli.push(timeMs([BIN, ...cliArgs]));
  if (i % 2 === 0) {
    a();
    b();
  } else {
    b();
    a();
  }
}
const ratios = cli.map((c, i) => c / node[i]);
process.stdout.write(`cli-start: node -e 0                 ${fmt(node)} ms\n`);
process.stdout.write(`cli-start: vecbench ${cliArgs.join(' ').padEnd(16)} ${fmt(cli)} ms\n`);
process.stdout.write(`cli-start: ratio (per pair)          ${fmt(ratios, 2)} over ${pairs} pairs\n`);
process.stdout.write(`cli-start: load average ${before.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after\n`);
