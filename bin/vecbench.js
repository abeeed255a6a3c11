#!/usr/bin/env node
// The CLI runs the build in dist/ (compiled from src/ by `npm run build`, which `npm ci` and
// `npm test` run): no process transpiles TypeScript at start. A build older than its sources is
// refused in one line rather than run by accident.
let paths;
try {
  paths = await import('../dist/src/util/code-paths.js');
} catch {
  process.stderr.write('vecbench: no build in dist/: run `npm run build` (npm ci builds it)\n');
  process.exit(2);
}
const problem = paths.buildProblem();
if (problem !== null) {
  process.stderr.write(`vecbench: ${problem}\n`);
  process.exit(2);
}
await import('../dist/src/cli.js');
