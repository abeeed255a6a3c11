// Latency histograms for the load generator: HDR histograms (hdr-histogram-js) in microseconds,
// 3 significant digits, so a percentile read from them is within 0.1 % of the exact order
// statistic however many requests were recorded. Workers record into their own histogram and
// send it encoded; the host adds them up.
import * as hdr from 'hdr-histogram-js';

/** Highest latency the histograms track: 10 minutes, in microseconds (longer is clamped). */
const HIGHEST_US = 600_000_000;

interface LatencySummaryMs {
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  p999: number;
  max: number;
}

export class LatencyHistogram {
  readonly h: hdr.Histogram;

  constructor(h?: hdr.Histogram) {
    // The pure-JS build: the WebAssembly one needs an async init in every worker.
    this.h = h ?? hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: HIGHEST_US, numberOfSignificantValueDigits: 3, useWebAssembly: false });
  }

  /** Records one latency in milliseconds (sub-microsecond values count as 1 us). */
  recordMs(ms: number): void {
    const us = Math.round(ms * 1000);
    this.h.recordValue(Math.min(HIGHEST_US, Math.max(1, us)));
  }

  get count(): number {
    return this.h.totalCount;
  }

  add(other: LatencyHistogram): void {
    this.h.add(other.h);
  }

  /** Value at a percentile (0..100], in milliseconds; NaN when nothing was recorded. */
  percentileMs(p: number): number {
    if (this.h.totalCount === 0) return NaN;
    return this.h.getValueAtPercentile(p) / 1000;
  }

  summary(): LatencySummaryMs {
    if (this.h.totalCount === 0) return { mean: NaN, p50: NaN, p95: NaN, p99: NaN, p999: NaN, max: NaN };
    return {
      mean: this.h.mean / 1000,
      p50: this.percentileMs(50),
      p95: this.percentileMs(95),
      p99: this.percentileMs(99),
      p999: this.percentileMs(99.9),
      max: this.h.maxValue / 1000,
    };
  }

  /** Compressed base64 text: how a worker's histogram crosses to the host. */
  encode(): string {
    return hdr.encodeIntoCompressedBase64(this.h);
  }

  static decode(text: string): LatencyHistogram {
    return new LatencyHistogram(hdr.decodeFromCompressedBase64(text, 32, false));
  }

  static ofMs(values: ArrayLike<number>): LatencyHistogram {
    const h = new LatencyHistogram();
    for (let i = 0; i < values.length; i++) h.recordMs(values[i]);
    return h;
  }
}
