/** Progress lines for long steps: what, how far, and an ETA. Writes to stderr so stdout stays
 * for tables and JSON; on a TTY it redraws one line, elsewhere it prints at most every few s. */
export class Progress {
  private readonly start = performance.now();
  private lastPrint = 0;
  private readonly tty = process.stderr.isTTY === true;
  constructor(
    private readonly what: string,
    private total: number,
    private readonly quiet = process.env.VECBENCH_QUIET === '1',
  ) {}

  /** `etaS`: the time left as the step itself estimates it (a plan), instead of extrapolating
   * from the share done, which misleads where early steps take longer than late ones. */
  update(done: number, detail = '', etaS?: number): void {
    if (this.quiet) return;
    const now = performance.now();
    // Off a terminal (logs, CI) print sparsely: nothing for short steps, then every 10 s.
    if (!this.tty && done < this.total && (now - this.start < 3000 || now - this.lastPrint < 10_000)) return;
    if (this.tty && done < this.total && now - this.lastPrint < 200) return;
    this.lastPrint = now;
    const elapsed = (now - this.start) / 1000;
    const frac = this.total > 0 ? done / this.total : 1;
    const eta = etaS ?? (frac > 0 && done < this.total ? elapsed / frac - elapsed : 0);
    const pct = (100 * frac).toFixed(0).padStart(3);
    // No ETA before the first step is done: nothing to extrapolate from.
    const line = `${this.what}: ${pct}% (${done}/${this.total})${detail ? ` ${detail}` : ''}, ${fmtSeconds(elapsed)} elapsed${done < this.total && (frac > 0 || etaS !== undefined) ? `, ETA ${fmtSeconds(eta)}` : ''}`;
    if (this.tty) process.stderr.write(`\r\x1b[K${line}${done >= this.total ? '\n' : ''}`);
    else process.stderr.write(`${line}\n`);
  }

  /** A step whose size is known better once under way (e.g. rounds of timing). */
  setTotal(total: number): void {
    this.total = total;
  }

  done(detail = ''): void {
    this.lastPrint = 0;
    this.update(this.total, detail);
  }
}

/** A step that says nothing of how far it is (an engine's index build): its elapsed time every
 * `everyMs` (a log line off a terminal, the line rewritten on one), so a build of an hour is
 * never an hour of silence. Quiet steps shorter than the first interval print nothing. */
export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private start = 0;
  constructor(
    private readonly what: string,
    private readonly everyMs = 30_000,
    private readonly write: (line: string) => void = (line) => process.stderr.write(line),
    private readonly tty = process.stderr.isTTY === true,
    private readonly quiet = process.env.VECBENCH_QUIET === '1',
  ) {}

  begin(): void {
    if (this.timer || this.quiet) return;
    this.start = performance.now();
    this.timer = setInterval(() => {
      const line = `${this.what}: ${fmtSeconds((performance.now() - this.start) / 1000)} elapsed`;
      this.write(this.tty ? `\r\x1b[K${line}` : `${line}\n`);
    }, this.everyMs);
    // A step still under way never keeps the process alive on its own.
    this.timer.unref();
  }

  end(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    if (this.tty) this.write('\r\x1b[K');
  }
}

export function fmtSeconds(s: number): string {
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60)
    return `${m}m${Math.round(s - m * 60)
      .toString()
      .padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${(m % 60).toString().padStart(2, '0')}m`;
}

export function log(message: string): void {
  if (process.env.VECBENCH_QUIET === '1') return;
  process.stderr.write(`${message}\n`);
}
