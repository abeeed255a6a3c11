// npm run bench:protocol [-- --dataset synthetic-20k --queries 2000 --rounds 5 --participants hnswlib,qdrant-edge,lucene]
// What the participant protocol costs per query: the harness-overhead null pass (the point path
// against an engine that answers at once) through the participant host of each side. A
// TypeScript participant answers it inside the host; a participant whose host is in another
// language answers it through its protocol (null_search: the same frames to the same process,
// without the engine): so the first side, a TypeScript participant, gives the host's own cost,
// and each other side that plus its language's host and protocol: a null participant in that
// language, whatever the engine behind it (its engine is loaded but never asked). Rounds interleave the sides (the order rotates per round), so a
// neighbour's load falls on all alike; each round's figure is the median of the null pass's 5
// passes, and the table gives the median [min-max] over rounds, per side and as a ratio to the
// first side, measured in the same round.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { prepareDataset } from '../src/prepare/registry.ts';
import { HostClient } from '../src/runner/client.ts';
import { measureHarnessOverhead } from '../src/runner/harness-overhead.ts';
import { loadParticipant } from '../src/runner/participants.ts';

const TIMEOUT_S = 900;

const { values } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'synthetic-20k' },
    data: { type: 'string' },
    queries: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '5' },
    k: { type: 'string', default: '10' },
    participants: { type: 'string', default: 'hnswlib,qdrant-edge,lucene' },
  },
});
const nq = Number(values.queries);
const rounds = Number(values.rounds);
const k = Number(values.k);
const names = values.participants!.split(',').filter((s) => s !== '');
const la = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const spread = (xs: number[], digits: number) => `${median(xs).toFixed(digits)} [${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}]`;

async function main() {
  const tmp = mkdtempSync(path.join(tmpdir(), 'vecbench-protocol-'));
  const dataDir = values.data ?? path.join(tmp, 'data');
  try {
    const ds = await prepareDataset(dataDir, values.dataset!);
    const queries = Array.from({ length: Math.min(nq, ds.nq) }, (_, i) => i);
    console.log(`protocol overhead: ${ds.name} (d=${ds.d}), ${queries.length} queries, k=${k}, ${rounds} rounds; load average ${la()}`);
    const hosts: { name: string; host: HostClient }[] = [];
    for (const name of names) {
      const p = await loadParticipant(name);
      const host = new HostClient(name);
      const workDir = path.join(tmp, `work-${name}`);
      mkdirSync(workDir, { recursive: true });
      await host.request<'opened'>({ type: 'open', participant: name, dataDir, dataset: ds.name, workDir, maxConcurrency: 1 }, TIMEOUT_S);
      await host.request<'loaded'>({ type: 'load', batchSize: p.settings.batch_size }, TIMEOUT_S);
      hosts.push({ name, host });
      console.log(`${name}: loaded (${p.adapter.engine} ${await p.adapter.engineVersion()})`);
    }
    const perQuery = new Map(hosts.map((h) => [h.name, [] as number[]]));
    const ratio = new Map(hosts.map((h) => [h.name, [] as number[]]));
    for (let r = 0; r < rounds; r++) {
      const order = hosts.map((_, i) => hosts[(i + r) % hosts.length]);
      const round = new Map<string, number>();
      for (const { name, host } of order) {
        const o = await measureHarnessOverhead((req) => host.request<'null-pass'>(req, TIMEOUT_S), k, queries, 1);
        round.set(name, o.perQueryMs * 1000);
      }
      for (const { name } of hosts) {
        perQuery.get(name)!.push(round.get(name)!);
        ratio.get(name)!.push(round.get(name)! / round.get(hosts[0].name)!);
      }
    }
    console.log(
      `\nnull pass through the participant host, 1 in flight: us per query, median [min-max] over ${rounds} rounds; ratio to ${hosts[0].name} in the same round`,
    );
    for (const { name } of hosts) console.log(`${name.padEnd(18)} ${spread(perQuery.get(name)!, 1).padEnd(24)} x${spread(ratio.get(name)!, 2)}`);
    console.log(`load average after: ${la()}`);
    for (const { host } of hosts) await host.close();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
