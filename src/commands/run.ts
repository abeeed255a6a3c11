// `vecbench run`: the benchmark itself. Parses and checks the options (groups, timing, servers
// the user runs, load measurement), runs the orchestrator (src/runner/run.ts) and prints the table.
import { type Command, InvalidArgumentError } from 'commander';
import { resolve } from 'node:path';
import { isPrepared } from '../datasets/layout.ts';
import { DEFAULT_BUILDS, DEFAULT_DATASET, DEFAULT_GROUPS, DEFAULT_MAX_TIME_S, sourceFor } from '../prepare/registry.ts';
import { parseGroupList } from '../datasets/groups.ts';
import { parseSize } from '../runner/memory-budget.ts';
import { connectExamples, defaultRunParticipants, listParticipants, residentParticipants, tierParticipants } from '../runner/registry.ts';
import { readAheadAdvice, TIERS, tierOptions } from './tiers.ts';
import { storageOf } from '../results/provenance.ts';
import { redactUrl, registerUrlSecrets } from '../util/redact.ts';
import { UserError } from '../util/errors.ts';
import { dataDir, list, lockOutDir, outDir, positiveInt } from './common.ts';
import { addLoadOptions, loadOptionsOf, type LoadCliOptions } from '../loadgen/cli.ts';
import { DEFAULT_BUSY_CORES, DEFAULT_HOST_SLOW, DEFAULT_QUERY_SET, DEFAULT_TIMING } from '../runner/timing-defaults.ts';
import { BUSY_OTHER_CORES } from '../runner/machine-load.ts';

/** A duration as --max-time takes it: seconds, or a number with s, m or h. */
function parseDuration(v: string): number {
  const m = /^(\d+(?:\.\d+)?)([smh]?)$/.exec(v.trim());
  const s = m ? Number(m[1]) * { '': 1, s: 1, m: 60, h: 3600 }[m[2] as '' | 's' | 'm' | 'h'] : NaN;
  if (!(s > 0)) throw new InvalidArgumentError(`--max-time takes a duration above 0 such as 600, 10m or 1h, not ${JSON.stringify(v)}`);
  return s;
}

export function registerRun(program: Command): void {
  // What the participants declare (settings.json registry): the embedded default run's members
  // (in-process participants that need no server) and the --connect examples.
  const defaults = defaultRunParticipants();
  const examples = connectExamples();
  const eg = (list: string[]) => (list.length > 0 ? `, e.g. ${list.join(', ')}` : '');
  program
    .command('run')
    .description('load each participant, sweep its ladders over every query group, store measured points and print the table')
    .option('--dataset <name>', `dataset to run on (default ${DEFAULT_DATASET}, with the groups ${DEFAULT_GROUPS.join(',')} unless --groups says otherwise)`)
    .option('--participants <list>', 'comma-separated participants', list, defaults)
    .option('--groups <list>', 'only these groups, e.g. none/10,cat100/10; the sets grid (selectivity x correlation) and tenants name opt-in groups', list)
    .option('--out <dir>', 'results directory (default results)')
    .option('--data <dir>', 'prepared datasets directory')
    .option(
      '--settings <participant=file>',
      'use another settings file for a participant (repeatable)',
      (v: string, acc: Record<string, string>) => {
        const m = /^([^=]+)=(.+)$/.exec(v);
        if (!m) throw new InvalidArgumentError('write --settings as PARTICIPANT=FILE');
        return { ...acc, [m[1]]: resolve(m[2]) };
      },
      {} as Record<string, string>,
    )
    .option(
      '--connect <participant=url>',
      `use a server you run for a server participant instead of starting one${eg(examples)} (repeatable); a password written here is visible to every local user in ps while the run lasts: give the URL in VECBENCH_CONNECT_<PARTICIPANT> instead; passwords are masked in every output`,
      (v: string, acc: Record<string, string>) => {
        const m = /^([^=]+)=(.+)$/.exec(v);
        // Masked before anything can print it, even the error below (which shows it all).
        registerUrlSecrets(m ? m[2] : v);
        // A UserError (not commander's usage dump): one line, exit 2.
        if (!m) throw new UserError(`write --connect as PARTICIPANT=URL${eg(examples.slice(0, 1))} (got "${redactUrl(v)}")`);
        return { ...acc, [m[1]]: m[2] };
      },
      {} as Record<string, string>,
    )
    .option(
      '--server-port <participant=port>',
      'start a server participant on this 127.0.0.1 port instead of a free one the kernel picks (repeatable)',
      (v: string, acc: Record<string, number>) => {
        const m = /^([^=]+)=(\d+)$/.exec(v);
        const port = m ? Number(m[2]) : NaN;
        if (!m || !(port >= 1 && port <= 65535)) throw new UserError(`write --server-port as PARTICIPANT=PORT with a port 1..65535 (got "${v}")`);
        return { ...acc, [m[1]]: port };
      },
      {} as Record<string, number>,
    )
    .option('--cold', "cold protocol: evict the engine's data files from the page cache before every group (needs vmtouch)")
    .option('--fresh', 'measure again even where a complete result exists (default: resume unfinished results, keep complete ones)')
    .option(
      '--keep-engines',
      "keep each engine's built data (<out>/.engines/) after its result is complete (default: removed; an unfinished result keeps it so a resumed run can reopen the index)",
    )
    .option('--clients <n>', 'in-flight requests in the throughput view', positiveInt('--clients'), 32)
    .option('--point-timeout <s>', 'time limit of one point in seconds', positiveInt('--point-timeout'), 900)
    .option('--load-timeout <s>', 'time limit of one load in seconds', positiveInt('--load-timeout'), 3600)
    .option(
      '--queries <n|all>',
      `warm protocol: queries every point of a group answers, a seeded subset of the dataset's (default ${DEFAULT_QUERY_SET}), or all`,
      (v: string) => {
        if (v === 'all') return 'all' as const;
        const n = Number(v);
        if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('--queries must be a positive integer or "all"');
        return n;
      },
    )
    .option('--min-passes <n>', `warm protocol: timed passes per point at least (default ${DEFAULT_TIMING.minPasses})`, positiveInt('--min-passes'))
    .option('--min-seconds <s>', `warm protocol: timed seconds per point at least (default ${DEFAULT_TIMING.minSeconds})`, (v: string) => {
      const n = Number(v);
      if (!(n >= 0) || !Number.isFinite(n)) throw new InvalidArgumentError('--min-seconds must be a number >= 0');
      return n;
    })
    .option(
      '--max-passes <n>',
      `warm protocol: passes per point at most, busy ones included (default ${DEFAULT_TIMING.maxPasses})`,
      positiveInt('--max-passes'),
    )
    .option(
      '--cell-ci <fraction>',
      `warm protocol: the points the table's cells read are timed until their QPS interval's half-width is at most this fraction of their QPS (default ${DEFAULT_TIMING.cellHalfWidth ?? 0}; 0: base timing only)`,
      (v: string) => {
        const n = Number(v);
        if (!(n >= 0 && n < 1)) throw new InvalidArgumentError('--cell-ci must be a fraction in [0, 1), e.g. 0.03');
        return n;
      },
    )
    .option(
      '--lead-ci <fraction>',
      `warm protocol: where the row's participants are timed in shared rounds, a cell's points are timed until their leads' paired intervals are within this fraction instead (default ${DEFAULT_TIMING.leadHalfWidth ?? 0}; 0: the cell's own interval)`,
      (v: string) => {
        const n = Number(v);
        if (!(n >= 0 && n < 1)) throw new InvalidArgumentError('--lead-ci must be a fraction in [0, 1), e.g. 0.03');
        return n;
      },
    )
    .option(
      '--cell-seconds <s>',
      `warm protocol: timed seconds at most a cell's point gets to reach --cell-ci (default ${DEFAULT_TIMING.cellSeconds ?? 0})`,
      (v: string) => {
        const n = Number(v);
        if (!(n >= 0) || !Number.isFinite(n)) throw new InvalidArgumentError('--cell-seconds must be a number >= 0');
        return n;
      },
    )
    .option(
      '--busy-cores <n>',
      `warm protocol: cores other processes may use (averaged over a round of passes) before the round counts as busy and is retaken (default ${DEFAULT_BUSY_CORES ?? BUSY_OTHER_CORES})`,
      (v: string) => {
        const n = Number(v);
        if (!(n >= 0) || !Number.isFinite(n)) throw new InvalidArgumentError('--busy-cores must be a number >= 0');
        return n;
      },
    )
    .option(
      '--host-slow <x>',
      `warm protocol: a round whose host-speed probe (a fixed workload timed on every core between rounds) took more than x times the run's fastest probe ran on a slowed host and is retaken, e.g. 1.25 (default ${DEFAULT_HOST_SLOW}: off; docs/contracts.md says why)`,
      (v: string) => {
        const n = Number(v);
        if (!Number.isFinite(n) || !(n === 0 || n >= 1)) throw new InvalidArgumentError('--host-slow must be 0 (off) or a number >= 1, e.g. 1.25');
        return n;
      },
    )
    .option('--threads <n>', 'throughput view: threads for synchronous in-process engines (default: the cores)', positiveInt('--threads'))
    .option(
      '--builds <n>',
      `build each index this many times from scratch, each in a fresh engine process, and time the points the cells read on each (default 1; ${DEFAULT_BUILDS} for the embedded default run)`,
      positiveInt('--builds'),
    )
    .option(
      '--memory-limit <size>',
      "run each engine in a memory cgroup of its own whose limit counts the page cache too, e.g. 1G: an engine whose working set is larger reads from storage, or is reported as not fitting (an in-process engine's host gets the harness's copy of the dataset on top)",
      (v: string) => parseSize(v),
    )
    .option(
      '--no-interleave',
      "warm protocol: measure the participants one after another, one engine loaded at a time (default: every participant's points are timed in shared rounds, all engines loaded, so the machine's drift falls on all alike)",
    )
    .option(
      '--tier <name>',
      `a named tier: its dataset, memory budget, protocol and groups together (${Object.entries(TIERS)
        .map(([n, t]) => `${n}: ${t.why}`)
        .join('; ')}); without --participants, the participants that declare a layout for it`,
    )
    .option(
      '--max-time <duration>',
      `bound the run's time, e.g. 600, 10m or 1h: when the timing plan (printed before timing starts) would go past it, curve points that no table cell reads are left out of the timing; the cells' points keep their precision (default: none; ${DEFAULT_MAX_TIME_S / 60} minutes for the embedded default run)`,
      parseDuration,
    )
    .option('--no-quality', 'on a dataset with relevance labels, skip the answer-quality run (dense, keyword, hybrid)')
    .option('--quality-k <k>', 'results asked of each answer-quality arm', positiveInt('--quality-k'), 100);
  addLoadOptions(program.commands.find((c) => c.name() === 'run')!).action(
    async (
      o: {
        busyCores?: number;
        hostSlow?: number;
        queries?: number | 'all';
        minPasses?: number;
        minSeconds?: number;
        maxPasses?: number;
        cellCi?: number;
        leadCi?: number;
        cellSeconds?: number;
        threads?: number;
        builds?: number;
        dataset?: string;
        participants: string[];
        groups?: string[];
        out?: string;
        data?: string;
        clients: number;
        pointTimeout: number;
        loadTimeout: number;
        settings: Record<string, string>;
        connect: Record<string, string>;
        serverPort: Record<string, number>;
        fresh?: boolean;
        keepEngines?: boolean;
        cold?: boolean;
        quality: boolean;
        qualityK: number;
        interleave: boolean;
        memoryLimit?: number;
        maxTime?: number;
        tier?: string;
      } & LoadCliOptions,
      command: Command,
    ) => {
      if (o.tier !== undefined) {
        const tier = tierOptions(o.tier, { dataset: o.dataset, memoryLimit: o.memoryLimit, groups: o.groups });
        Object.assign(o, { dataset: tier.dataset, memoryLimit: tier.memoryLimit, cold: tier.cold, groups: tier.groups });
        if (command.getOptionValueSource('loadTimeout') === 'default') o.loadTimeout = tier.loadTimeoutS;
        if (command.getOptionValueSource('participants') === 'default') {
          const laid = tierParticipants(o.tier);
          if (laid.length === 0) throw new UserError(`no participant declares a layout for --tier ${o.tier}; name them with --participants`);
          // Engines that hold their whole index in memory run too, held by the budget from their
          // first start: each is reported as not fitting, with the kernel's figures.
          const resident = residentParticipants().filter((n) => !laid.includes(n));
          o.participants = [...laid, ...resident];
          if (resident.length > 0)
            console.error(
              `--tier ${o.tier}: ${resident.join(', ')} hold their whole index in memory: run under the budget from their first start, to be reported as not fitting (or measured, if they do fit)`,
            );
          // Never left out silently: the others are named, with how to measure them anyway.
          const others = listParticipants().filter((n) => !o.participants!.includes(n));
          if (others.length > 0)
            console.error(
              `--tier ${o.tier}: not run, no layout for the tier declared (not set up for it, or a server whose memory use was not declared): ${others.join(', ')}; name them with --participants to see whether they fit`,
            );
        }
        // Reads from a memory-mapped file come in read-ahead windows: said before the run, and
        // recorded in each result (provenance.storage).
        const storage = storageOf(o.out ?? 'results');
        if (storage !== null) {
          console.error(
            `--tier ${o.tier}: the engines' data is on /dev/${storage.device}, read-ahead ${storage.read_ahead_kb} KiB: a page fault on a memory-mapped file reads up to that much (recorded in each result)${readAheadAdvice(storage)}`,
          );
        }
      }
      // The embedded default measures a trimmed set of groups (DEFAULT_GROUPS).
      const embedded = o.dataset === undefined;
      o.dataset ??= DEFAULT_DATASET;
      if (!isPrepared(dataDir(o), o.dataset)) sourceFor(o.dataset);
      const asked = o.groups ?? (embedded ? DEFAULT_GROUPS : undefined);
      const groups = asked === undefined ? undefined : parseGroupList(asked);
      // Loaded only now, after the checks above: a bad name or option is one line without
      // loading the runner, the report and the engines' registry.
      const [{ groupLeak }, { writePage }, { loadParticipant }, { connectionsFor, preflightServers }, { run }, { printReport }, { runSteps }] =
        await Promise.all([
          import('../report/cells.ts'),
          import('../report/html.ts'),
          import('../runner/participants.ts'),
          import('../runner/remote-server.ts'),
          import('../runner/run.ts'),
          import('./report.ts'),
          import('../features.ts'),
        ]);
      const out = outDir(o);
      lockOutDir(out);
      // Servers given by URL, and fixed ports, are checked before any work (one line each).
      const connect = connectionsFor(o.participants, o.connect);
      if (o.cold && Object.keys(connect).length > 0)
        throw new UserError(
          `--cold evicts the engine's files from this machine's page cache, which a server given by URL (${Object.keys(connect).join(', ')}) does not use; drop --cold or the server URL`,
        );
      if (Object.keys(connect).length + Object.keys(o.serverPort).length > 0) {
        const servers = [];
        for (const name of o.participants) servers.push({ name, life: (await loadParticipant(name, o.settings[name])).adapter.server });
        await preflightServers(servers, connect, o.serverPort);
      }
      const timing = {
        minPasses: o.minPasses ?? DEFAULT_TIMING.minPasses,
        minSeconds: o.minSeconds ?? DEFAULT_TIMING.minSeconds,
        maxPasses: o.maxPasses ?? DEFAULT_TIMING.maxPasses,
        cellHalfWidth: o.cellCi ?? DEFAULT_TIMING.cellHalfWidth,
        cellSeconds: o.cellSeconds ?? DEFAULT_TIMING.cellSeconds,
        cellMaxPasses: DEFAULT_TIMING.cellMaxPasses,
        leadHalfWidth: o.leadCi ?? DEFAULT_TIMING.leadHalfWidth,
      };
      if (timing.maxPasses < timing.minPasses)
        throw new UserError(`--max-passes ${timing.maxPasses} is below --min-passes ${timing.minPasses}; raise --max-passes`);
      const results = await run({
        busyCores: o.busyCores,
        hostSlow: o.hostSlow,
        querySet: o.queries,
        timing,
        threads: o.threads,
        builds: o.builds ?? (embedded && o.groups === undefined ? DEFAULT_BUILDS : 1),
        interleave: o.interleave,
        memoryLimit: o.memoryLimit,
        tier: o.tier,
        maxTimeS: o.maxTime ?? (embedded && o.groups === undefined ? DEFAULT_MAX_TIME_S : undefined),
        dataset: o.dataset,
        participants: o.participants,
        outDir: out,
        dataDir: dataDir(o),
        clients: o.clients,
        groups,
        pointTimeoutS: o.pointTimeout,
        loadTimeoutS: o.loadTimeout,
        settingsFiles: o.settings,
        fresh: o.fresh,
        keepEngines: o.keepEngines,
        cold: o.cold,
        steps: await runSteps({ quality: o.quality, qualityK: o.qualityK, load: loadOptionsOf(o) }),
        connect,
        serverPorts: o.serverPort,
      });
      printReport(out, false);
      process.stdout.write(`results: ${out}\n`);
      process.stdout.write(`page: ${await writePage(out, resolve(out, 'report'), { dataDir: dataDir(o) })}\n`);
      // A cross-tenant row is a security finding: named last, where it is seen, and the run fails.
      for (const r of results) {
        for (const g of r.groups) {
          const leak = groupLeak(g);
          if (leak) {
            process.stderr.write(`SECURITY: ${r.participant} ${g.key}: ${leak}\n`);
            process.exitCode = 1;
          }
        }
      }
    },
  );
}
