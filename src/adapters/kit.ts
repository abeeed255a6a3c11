// Small helpers shared by participant adapters (participants/*/adapter.ts). Nothing here names
// an engine: it is what several adapters need, written once.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { ATTRIBUTES, type AttrName, type FilterExpr, type RowBatch, type SearchRequest, type ServerConnection, type Strategy } from '../contracts.ts';

const require = createRequire(import.meta.url);

/** The installed version of an npm package, read from its package.json. Walks up from the
 * resolved entry point because some packages' exports maps hide package.json. */
export function packageVersion(name: string): string {
  let dir = dirname(require.resolve(name));
  for (;;) {
    try {
      const pkg = require(join(dir, 'package.json')) as { name?: string; version?: string };
      if (pkg.name === name && pkg.version) return pkg.version;
    } catch {
      // no package.json in this directory
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the package.json of ${name}`);
    dir = up;
  }
}

/** A participant's `filters` when it takes every filter the datasets ask: equality, ranges and
 * their conjunctions over every attribute. */
export const EVERY_FILTER: { readonly fields: readonly AttrName[]; readonly ops: readonly FilterExpr['op'][] } = {
  fields: ATTRIBUTES,
  ops: ['eq', 'range', 'and'],
};

/** A participant's settings schema (settings.json's settings): these fields and no other, so a
 * misspelt key is refused by name instead of ignored. */
export function settingsObject<T extends z.ZodRawShape>(shape: T) {
  return z.object(shape).strict();
}

/** An integer setting of an index (settings.json) in [min, max], `fallback` when left out. */
export function intSetting(min: number, max: number, fallback: number) {
  return z.number().int().min(min).max(max).default(fallback);
}

/** A server the user runs, from its --connect URL: the host (an IPv6 address without its
 * brackets), the URL's port or `defaultPort`, no data directory (vecbench owns none of its files)
 * and `params` for open(). */
export function urlConnection(url: URL, defaultPort: number, params: ServerConnection['params'] = {}): ServerConnection {
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || defaultPort), dataDir: '', params };
}

/** The user and password a URL names (decoded), or none when it names no user. */
export function urlCredentials(url: URL): ServerConnection['params'] {
  return url.username ? { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) } : {};
}

export type RowPredicate = (row: number) => boolean;

/** A FilterExpr as a closure over attribute columns indexed by row (or label), for engines
 * that take a predicate or are post-filtered in the adapter. */
export function compileFilter(f: FilterExpr, cols: Record<AttrName, Int32Array>): RowPredicate {
  switch (f.op) {
    case 'eq': {
      const col = cols[f.field];
      const v = f.value;
      return (r) => col[r] === v;
    }
    case 'range': {
      const col = cols[f.field];
      const lo = f.gte;
      const hi = f.lt;
      return (r) => {
        const x = col[r];
        return x >= lo && x < hi;
      };
    }
    case 'and': {
      const parts = f.args.map((a) => compileFilter(a, cols));
      if (parts.length === 0) return () => true;
      if (parts.length === 1) return parts[0];
      if (parts.length === 2) {
        const [a, b] = parts;
        return (r) => a(r) && b(r);
      }
      return (r) => {
        for (const p of parts) if (!p(r)) return false;
        return true;
      };
    }
  }
}

/** A strategy the adapter declares (no plan shows it): one label without a filter, one with. */
export function declaredStrategy(request: SearchRequest, unfiltered: string, filtered: string): Strategy {
  return { label: request.filter === null ? unfiltered : filtered, observed: false };
}

/** The first row of a batch whose vector is not unit length (|norm^2 - 1| > 1e-3), with its
 * norm, or null: an engine that serves ip as cosine or another distance ranks alike only on
 * unit vectors, and says so in its own words. */
export function firstNonUnitRow(batch: RowBatch, d: number): { id: number; norm: number } | null {
  const v = batch.vectors;
  for (let r = 0; r < batch.ids.length; r++) {
    let s = 0;
    for (let j = r * d; j < (r + 1) * d; j++) s += v[j] * v[j];
    if (Math.abs(s - 1) > 1e-3) return { id: batch.ids[r], norm: Math.sqrt(s) };
  }
  return null;
}
