// The other process of test/e2e/locks.test.ts: takes a lock through vecbench's own code, says
// "held" and keeps it until it is killed. Usage: lock-holder.ts out DIR | dataset DATA NAME
import { lockOutDir } from '../../src/commands/common.ts';
import { whilePreparing } from '../../src/datasets/preparing.ts';

const [kind, dir, name] = process.argv.slice(2);
if (kind === 'out') lockOutDir(dir);
else if (kind === 'dataset') void whilePreparing(dir, name, () => new Promise<never>(() => {}));
else throw new Error(`lock-holder: unknown kind ${kind}`);
process.stdout.write('held\n');
setInterval(() => {}, 60_000);
