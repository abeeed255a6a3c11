// The `region` attribute (docs/method.md §1): the base rows cut into REGIONS parts of equal size,
// each a compact piece of the vector space, numbered so that neighbouring numbers are
// neighbouring pieces. A range of w consecutive regions around a query's own is then a filter of
// w % of the rows that agrees with the vector (the clustered half of the selectivity grid),
// expressed with the range operator every participant already has.
//
// How: a balanced binary space partition. A node holding m regions splits its rows at the
// floor(m/2)/m quantile of their projection on the node's principal direction (power iteration
// on the centred rows); the left part gets the lower region numbers. Leaves are regions, in
// tree order, so consecutive regions share an ancestor. The tree is built on (a sample of) the
// base rows; rows and queries are then placed by descending it.
import { makeRng } from '../util/hash.ts';

export const REGIONS = 100;
/** Rows the tree is built on at most (a strided sample beyond): enough for 1 % quantiles. */
const TREE_SAMPLE = 50_000;
const POWER_ITERATIONS = 8;
/** Rows a node's direction is estimated on at most (strided): the split itself uses all. */
const DIRECTION_SAMPLE = 2000;
/** One seed for every dataset: the partition is a function of the base rows alone. */
const REGION_SEED = 44;

interface Split {
  dir: Float64Array;
  threshold: number;
  left: Node;
  right: Node;
}
type Node = { region: number } | Split;

export interface RegionTree {
  d: number;
  root: Node;
}

function dot(v: Float32Array, o: number, dir: Float64Array, d: number): number {
  let s = 0;
  for (let j = 0; j < d; j++) s += v[o + j] * dir[j];
  return s;
}

/** The principal direction of the rows (unit length), or a seeded random one when they have no
 * spread (fewer than two distinct rows). */
function principalDirection(v: Float32Array, all: Int32Array, d: number, rng: ReturnType<typeof makeRng>): Float64Array {
  const take = Math.min(all.length, DIRECTION_SAMPLE);
  const rows = Int32Array.from({ length: take }, (_, i) => all[Math.floor((i * all.length) / take)]);
  const mean = new Float64Array(d);
  for (const r of rows) for (let j = 0; j < d; j++) mean[j] += v[r * d + j];
  for (let j = 0; j < d; j++) mean[j] /= Math.max(1, rows.length);
  let dir = new Float64Array(d);
  for (let j = 0; j < d; j++) dir[j] = rng.normal();
  for (let it = 0; it < POWER_ITERATIONS; it++) {
    const next = new Float64Array(d);
    for (const r of rows) {
      let p = 0;
      for (let j = 0; j < d; j++) p += (v[r * d + j] - mean[j]) * dir[j];
      for (let j = 0; j < d; j++) next[j] += p * (v[r * d + j] - mean[j]);
    }
    let norm = 0;
    for (let j = 0; j < d; j++) norm += next[j] * next[j];
    if (!(norm > 0)) break;
    const inv = 1 / Math.sqrt(norm);
    for (let j = 0; j < d; j++) next[j] *= inv;
    dir = next;
  }
  let norm = 0;
  for (let j = 0; j < d; j++) norm += dir[j] * dir[j];
  const inv = 1 / Math.sqrt(norm);
  for (let j = 0; j < d; j++) dir[j] *= inv;
  return dir;
}

function build(v: Float32Array, rows: Int32Array, d: number, parts: number, first: number, rng: ReturnType<typeof makeRng>): Node {
  if (parts === 1) return { region: first };
  const leftParts = Math.floor(parts / 2);
  const dir = principalDirection(v, rows, d, rng);
  const proj = Float64Array.from(rows, (r) => dot(v, r * d, dir, d));
  const order = Array.from(rows.keys()).sort((a, b) => proj[a] - proj[b] || rows[a] - rows[b]);
  const cut = Math.floor((rows.length * leftParts) / parts);
  // Rows below the threshold go left; an empty node keeps every later row on its right.
  const threshold = rows.length === 0 ? 0 : cut < rows.length ? proj[order[cut]] : Infinity;
  const left = Int32Array.from(order.slice(0, cut), (i) => rows[i]);
  const right = Int32Array.from(order.slice(cut), (i) => rows[i]);
  return {
    dir,
    threshold,
    left: build(v, left, d, leftParts, first, rng),
    right: build(v, right, d, parts - leftParts, first + leftParts, rng),
  };
}

/** Builds the partition on the rows of v (rows x d, row-major): all of them up to TREE_SAMPLE,
 * else every (rows / TREE_SAMPLE)-th. Deterministic. */
export function buildRegionTree(v: Float32Array, rows: number, d: number): RegionTree {
  const take = Math.min(rows, TREE_SAMPLE);
  const sample = Int32Array.from({ length: take }, (_, i) => Math.floor((i * rows) / take));
  return { d, root: build(v, sample, d, REGIONS, 0, makeRng(REGION_SEED)) };
}

/** The region of each row of v (rows x d). */
export function regionsOf(tree: RegionTree, v: Float32Array, rows: number): Int32Array {
  const out = new Int32Array(rows);
  const { d } = tree;
  for (let i = 0; i < rows; i++) {
    let node = tree.root;
    while (!('region' in node)) node = dot(v, i * d, node.dir, d) < node.threshold ? node.left : node.right;
    out[i] = node.region;
  }
  return out;
}

/** The window of `width` consecutive regions centred on a query's own region, kept inside
 * [0, REGIONS): [first, first + width). */
export function regionWindow(own: number, width: number): [number, number] {
  const first = Math.max(0, Math.min(REGIONS - width, own - Math.floor((width - 1) / 2)));
  return [first, first + width];
}
