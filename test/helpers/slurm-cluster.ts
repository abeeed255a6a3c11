// A one-node Slurm cluster on this machine for tests: munged, slurmctld and slurmd from
// Debian's packages, every file (config, key, state, logs, sockets) in one temporary
// directory, the daemons in the foreground as children of the test and stopped by PID.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BINARIES = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'sinfo', 'squeue'];
const NODE = 'vecbench-node';

function onPath(bin: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class SlurmCluster {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  private readonly daemons: ChildProcess[] = [];

  private constructor(dir: string) {
    this.dir = dir;
    this.env = { ...process.env, SLURM_CONF: join(dir, 'slurm.conf') };
  }

  /** Starts the cluster and waits until its node is idle. Throws (the test fails) with the
   * package to install when a binary is missing. */
  static async start(): Promise<SlurmCluster> {
    const missing = BINARIES.filter((b) => !onPath(b));
    if (missing.length > 0)
      throw new Error(
        `Slurm is not installed (missing ${missing.join(', ')}); run \`sudo npm run setup\` (apt-get install slurmctld slurmd slurm-client munge)`,
      );
    const c = new SlurmCluster(mkdtempSync(join(tmpdir(), 'vecbench-slurm-')));
    try {
      await c.boot();
    } catch (e) {
      await c.stop();
      throw e;
    }
    return c;
  }

  private async boot(): Promise<void> {
    const d = this.dir;
    for (const sub of ['state', 'spool', 'munge']) mkdirSync(join(d, sub), { mode: 0o700 });
    const key = join(d, 'munge', 'munge.key');
    writeFileSync(key, randomBytes(1024), { mode: 0o400 });
    chmodSync(key, 0o400);
    const socket = join(d, 'munge', 'munge.socket');
    const [ctlPort, dPort] = [await freePort(), await freePort()];
    const memMiB = 4096;
    writeFileSync(
      join(d, 'slurm.conf'),
      [
        'ClusterName=vecbench-test',
        'SlurmctldHost=localhost(127.0.0.1)',
        'SlurmUser=root',
        'SlurmdUser=root',
        `SlurmctldPort=${ctlPort}`,
        `SlurmdPort=${dPort}`,
        'AuthType=auth/munge',
        'CredType=cred/munge',
        `AuthInfo=socket=${socket}`,
        `StateSaveLocation=${join(d, 'state')}`,
        `SlurmdSpoolDir=${join(d, 'spool')}`,
        `SlurmctldPidFile=${join(d, 'slurmctld.pid')}`,
        `SlurmdPidFile=${join(d, 'slurmd.pid')}`,
        `SlurmctldLogFile=${join(d, 'slurmctld.log')}`,
        `SlurmdLogFile=${join(d, 'slurmd.log')}`,
        // No cgroups, no accounting: a container runs it, and nothing here needs them.
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'JobAcctGatherType=jobacct_gather/none',
        'AccountingStorageType=accounting_storage/none',
        'SelectType=select/cons_tres',
        'SelectTypeParameters=CR_Core',
        'SchedulerType=sched/backfill',
        'MpiDefault=none',
        'ReturnToService=2',
        'SlurmdTimeout=60',
        `NodeName=${NODE} NodeAddr=127.0.0.1 NodeHostname=${NODE} CPUs=2 RealMemory=${memMiB} State=UNKNOWN`,
        `PartitionName=test Nodes=${NODE} Default=YES MaxTime=INFINITE State=UP`,
        '',
      ].join('\n'),
    );
    writeFileSync(join(d, 'cgroup.conf'), 'CgroupPlugin=autodetect\nIgnoreSystemd=yes\n');
    this.daemon('munged', [
      '--foreground',
      '--force',
      `--socket=${socket}`,
      `--key-file=${key}`,
      `--pid-file=${join(d, 'munge', 'munged.pid')}`,
      `--seed-file=${join(d, 'munge', 'munged.seed')}`,
      `--log-file=${join(d, 'munge', 'munged.log')}`,
    ]);
    await this.waitFor(() => existsSync(socket), 'munged socket');
    this.daemon('slurmctld', ['-D', '-i', '-f', join(d, 'slurm.conf')]);
    this.daemon('slurmd', ['-D', '-N', NODE, '-f', join(d, 'slurm.conf')]);
    await this.waitFor(() => {
      const r = spawnSync('sinfo', ['-h', '-N', '-o', '%T'], { env: this.env, encoding: 'utf8' });
      return r.status === 0 && r.stdout.trim() === 'idle';
    }, `node ${NODE} idle in sinfo`);
  }

  private daemon(bin: string, args: string[]): void {
    const log = join(this.dir, `${bin}.out`);
    const child = spawn(bin, args, { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => chunks.push(b));
    child.stderr?.on('data', (b: Buffer) => chunks.push(b));
    child.on('exit', () => {
      if (existsSync(this.dir)) writeFileSync(log, Buffer.concat(chunks));
    });
    this.daemons.push(child);
  }

  private async waitFor(ok: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    const t0 = Date.now();
    while (!ok()) {
      const dead = this.daemons.find((c) => c.exitCode !== null);
      if (dead) throw new Error(`${dead.spawnfile} exited (${dead.exitCode}) while waiting for ${what}; logs in ${this.dir}: ${this.logTail()}`);
      if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}; logs in ${this.dir}: ${this.logTail()}`);
      await sleep(250);
    }
  }

  logTail(): string {
    return ['slurmctld.log', 'slurmd.log']
      .map((f) => join(this.dir, f))
      .filter(existsSync)
      .map((f) => readFileSync(f, 'utf8').trim().split('\n').slice(-3).join(' | '))
      .join(' || ');
  }

  /** Waits until none of the jobs is queued or running. */
  async waitJobs(ids: string[], timeoutMs = 600_000): Promise<void> {
    await this.waitFor(
      () => {
        const r = spawnSync('squeue', ['-h', '-j', ids.join(','), '-o', '%i'], { env: this.env, encoding: 'utf8' });
        return r.status === 0 && r.stdout.trim() === '';
      },
      `jobs ${ids.join(', ')} to finish`,
      timeoutMs,
    );
  }

  /** Stops the daemons by PID (slurmd, slurmctld, then munged) and removes the directory. */
  async stop(): Promise<void> {
    for (const c of [...this.daemons].reverse()) {
      if (c.exitCode !== null || c.pid === undefined) continue;
      const gone = new Promise((r) => c.once('exit', r));
      process.kill(c.pid, 'SIGTERM');
      await Promise.race([gone, sleep(10_000)]);
      if (c.exitCode === null && c.signalCode === null) process.kill(c.pid, 'SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
