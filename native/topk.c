/* vecbench exact top-k: sgemm over row blocks (OpenBLAS) plus a per-query candidate buffer.
 * Plain C against node_api.h.
 *
 * Work splits into tasks of QB queries x one row range. A task sweeps its range block by block
 * and keeps, per query, a threshold (the kk-th best score so far) and a buffer of the rows that
 * scored at least that; when the buffer fills it is cut back to a few more than its kk best (a
 * threshold read off a sample of the buffer, or an exact quickselect when the sample misjudges),
 * which raises the threshold; at the end an exact selection keeps the kk best. Appending is far
 * cheaper than a heap push (~117 ns each on GloVe's top-1000, mostly cache misses), and the
 * blocks are visited in bit-reversed order, so the first blocks sample the whole range and the
 * threshold gets close to its final value early even when the rows are sorted in a way that
 * correlates with the scores (GloVe's words by frequency). The kept set is the exact kk best by
 * (score desc, row id asc) whatever the visiting order, as with a heap.
 *
 * With enough queries every task covers all rows (no merge, memory independent of the thread
 * count); with few queries the rows split into ranges too, so every thread has work, and each
 * query's per-range lists are merged by the same selection at the end. OpenBLAS runs
 * single-threaded inside each worker, so `threads` is the total. `ranked` then also ranks the
 * candidates in float64 (as exact.ts's rerank does), in the same threads. */
#include <node_api.h>
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

void openblas_set_num_threads(int num_threads); /* in case cblas.h is not OpenBLAS's own */

#define RB 1536 /* base rows per block (a multiple of OpenBLAS's Haswell sgemm P block, 768) */
#define QB 256  /* queries per sgemm call and per task: a 1.5 MB score block */
#define CHUNK 16 /* scores checked against the threshold at once (vectorized) */
#define MERGE_BYTES (256L << 20) /* cap on the per-range lists kept for the final merge */

typedef struct { float s; int32_t id; } Cand;

typedef struct {
  const float *base, *queries; const int32_t *rows;
  long n, d, nq, kk, nblocks; int metric; /* 0 ip, 1 cosine, 2 l2 */
  long ngroups, nsplits, ntasks, cap;
  long next; /* next task to take (atomic) */
  int32_t *out; /* nsplits == 1: nq x kk ids, written directly */
  Cand *lists; int32_t *counts; /* nsplits > 1: [split][q] lists of up to kk, and their sizes */
  long k; int32_t *ranked_ids; float *ranked_dists; /* ranking: the k best per query, sorted */
} Job;

typedef struct { Job *job; int fail; } Worker;

/* a is better (closer) than b: higher score, or equal score and smaller row id. */
static inline int better(Cand a, Cand b) { return a.s > b.s || (a.s == b.s && a.id < b.id); }

static inline void swap_cand(Cand *a, Cand *b) { Cand t = *a; *a = *b; *b = t; }

/* Fallback for select_best: a bounded heap whose root is the worst of the k best. */
static void heap_select(Cand *c, long n, long k) {
  for (long m = 1; m < k; m++) /* heapify c[0..k) by sifting up */
    for (long i = m; i > 0 && better(c[(i - 1) / 2], c[i]); i = (i - 1) / 2) swap_cand(&c[i], &c[(i - 1) / 2]);
  for (long e = k; e < n; e++) {
    if (!better(c[e], c[0])) continue;
    c[0] = c[e];
    for (long i = 0;;) {
      long w = 2 * i + 1;
      if (w >= k) break;
      if (w + 1 < k && better(c[w], c[w + 1])) w++;
      if (!better(c[i], c[w])) break;
      swap_cand(&c[i], &c[w]); i = w;
    }
  }
}

/* Reorders c[0..n) so that c[0..k) are its k best in any order and c[k-1] is the k-th best
 * (quickselect; ids are unique, so the order is total). 0 < k <= n. */
static void select_best(Cand *c, long n, long k) {
  long lo = 0, hi = n - 1, rounds = 0;
  uint32_t x = 0x9e3779b9u ^ (uint32_t)n;
  while (hi > lo) {
    if (++rounds > 64) { /* pathological pivots: finish with a heap, O(n log k) */
      heap_select(c + lo, hi - lo + 1, k - lo);
      /* put the k-th best (the heap's root) at k-1 */
      long w = lo;
      for (long i = lo + 1; i < k; i++) if (better(c[w], c[i])) w = i;
      swap_cand(&c[w], &c[k - 1]);
      return;
    }
    /* median of three pseudo-random positions */
    long len = hi - lo + 1, p[3];
    for (int i = 0; i < 3; i++) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; p[i] = lo + (long)(x % (uint32_t)len); }
    Cand a = c[p[0]], b = c[p[1]], m = c[p[2]], pv;
    if (better(a, b)) { if (better(b, m)) pv = b; else if (better(a, m)) pv = m; else pv = a; }
    else { if (better(a, m)) pv = a; else if (better(b, m)) pv = m; else pv = b; }
    long i = lo, j = hi;
    while (i <= j) { /* Hoare partition: better than the pivot to the left */
      while (better(c[i], pv)) i++;
      while (better(pv, c[j])) j--;
      if (i <= j) { swap_cand(&c[i], &c[j]); i++; j--; }
    }
    if (k - 1 <= j) hi = j;
    else if (k - 1 >= i) lo = i;
    else return; /* c[k-1] is the pivot itself, in place */
  }
}

#define CUT_SAMPLE 256 /* scores sampled to place a cut's threshold */

/* The r-th largest (0-based) of a[0..n), reordering a. NaN-free input. */
static float kth_largest(float *a, long n, long r) {
  long lo = 0, hi = n - 1;
  while (hi > lo) {
    float pv = a[lo + (hi - lo) / 2];
    long i = lo, j = hi;
    while (i <= j) {
      while (a[i] > pv) i++;
      while (pv > a[j]) j--;
      if (i <= j) { float t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
    }
    if (r <= j) hi = j;
    else if (r >= i) lo = i;
    else break;
  }
  return a[r];
}

/* Makes room in a full buffer c[0..*pm): drops entries that cannot be among the kk best and
 * returns the new threshold; every entry scoring at least it stays. The threshold is read off
 * a sample of the buffer so that a few more than kk survive (two cheap passes instead of an
 * exact selection); when the sample misjudges (fewer than kk would survive, or so many, e.g. on
 * equal scores, that little room would be left), an exact selection decides. Keeping every entry >= a value that at least kk entries reach never
 * drops one of the kk best. */
static float cut(Cand *c, long *pm, long kk, long cap) {
  long m = *pm, want = kk + kk / 8 + 32, keep = 0;
  float smp[CUT_SAMPLE];
  for (long i = 0; i < CUT_SAMPLE; i++) smp[i] = c[i * m / CUT_SAMPLE].s;
  long r = want * CUT_SAMPLE / m;
  if (r < CUT_SAMPLE - 1 && want < m) {
    float t = kth_largest(smp, CUT_SAMPLE, r);
    for (long i = 0; i < m; i++) keep += c[i].s >= t;
    if (keep >= kk && keep <= kk + (cap - kk) / 2) { /* else ties or a bad sample: too little room */
      long w = 0;
      for (long i = 0; i < m; i++) { c[w] = c[i]; w += c[i].s >= t; }
      *pm = w;
      return t;
    }
  }
  select_best(c, m, kk);
  *pm = kk;
  return c[kk - 1].s;
}

/* Reverses the low `bits` bits of v. */
static long bit_reverse(long v, int bits) {
  long r = 0;
  for (int b = 0; b < bits; b++) { r = (r << 1) | (v & 1); v >>= 1; }
  return r;
}

/* Whether any of s[0..16) is >= t (NaN never is). */
static inline int any_at_least(const float *s, float t) {
#ifdef __SSE2__
  __m128 tv = _mm_set1_ps(t);
  __m128 m = _mm_or_ps(_mm_or_ps(_mm_cmpge_ps(_mm_loadu_ps(s), tv), _mm_cmpge_ps(_mm_loadu_ps(s + 4), tv)),
                       _mm_or_ps(_mm_cmpge_ps(_mm_loadu_ps(s + 8), tv), _mm_cmpge_ps(_mm_loadu_ps(s + 12), tv)));
  return _mm_movemask_ps(m) != 0;
#else
  int any = 0;
  for (int r = 0; r < CHUNK; r++) any |= s[r] >= t;
  return any;
#endif
}

static void *work(void *arg) {
  Worker *w = arg; Job *j = w->job;
  long d = j->d, kk = j->kk, cap = j->cap; int l2 = j->metric == 2;
  float *S = malloc(sizeof(float) * QB * RB), *nb = malloc(sizeof(float) * RB);
  float *copy = j->rows ? malloc(sizeof(float) * RB * d) : NULL;
  int32_t *ids = malloc(sizeof(int32_t) * RB);
  Cand *buf = malloc(sizeof(Cand) * QB * cap);
  long cnt[QB]; float thr[QB];
  if (!S || !nb || !ids || !buf || (j->rows && !copy)) { w->fail = 1; goto done; }
  for (;;) {
    long task = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
    if (task >= j->ntasks) break;
    long g = task / j->nsplits, split = task % j->nsplits;
    long q0 = g * QB, nqb = j->nq - q0 < QB ? j->nq - q0 : QB;
    long b0 = j->nblocks * split / j->nsplits, b1 = j->nblocks * (split + 1) / j->nsplits;
    long nb_range = b1 - b0;
    int bits = 0;
    while ((1L << bits) < nb_range) bits++;
    for (long q = 0; q < nqb; q++) { cnt[q] = 0; thr[q] = -INFINITY; }
    for (long v = 0; v < (1L << bits); v++) {
      long b = bit_reverse(v, bits);
      if (b >= nb_range) continue;
      b += b0;
      long r0 = b * RB, nr = j->n - r0 < RB ? j->n - r0 : RB;
      const float *B;
      if (j->rows) { /* gather the block's candidate rows into a contiguous buffer */
        for (long r = 0; r < nr; r++) {
          ids[r] = j->rows[r0 + r];
          memcpy(copy + r * d, j->base + (long)ids[r] * d, sizeof(float) * d);
        }
        B = copy;
      } else {
        for (long r = 0; r < nr; r++) ids[r] = (int32_t)(r0 + r);
        B = j->base + r0 * d;
      }
      if (l2)
        for (long r = 0; r < nr; r++) nb[r] = cblas_sdot((int)d, B + r * d, 1, B + r * d, 1);
      /* One query (the exact participant's search) is a matrix-vector product: sgemm would pack
       * the block of base rows on every call, for one row of output. */
      if (nqb == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)nr, (int)d, 1.0f, B, (int)d, j->queries + q0 * d, 1, 0.0f, S, 1);
      else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nqb, (int)nr, (int)d, 1.0f,
                    j->queries + q0 * d, (int)d, B, (int)d, 0.0f, S, (int)nr);
      for (long q = 0; q < nqb; q++) {
        float *s = S + q * nr;
        Cand *c = buf + q * cap;
        long m = cnt[q]; float t = thr[q];
        /* goodness: higher is closer. ip/cosine: dot; l2: 2 q.b - |b|^2 (= |q|^2 - dist^2) */
        if (l2) for (long r = 0; r < nr; r++) s[r] = 2.0f * s[r] - nb[r];
        for (long c0 = 0; c0 < nr; c0 += CHUNK) {
          long c1 = c0 + CHUNK < nr ? c0 + CHUNK : nr;
          /* most chunks hold nothing as good as the k-th so far */
          if (c1 - c0 == CHUNK) { if (!any_at_least(s + c0, t)) continue; }
          else {
            int any = 0;
            for (long r = c0; r < c1; r++) any |= s[r] >= t;
            if (!any) continue;
          }
          if (m + CHUNK > cap) { /* full: drop what cannot be among the kk best, raising the threshold */
            t = cut(c, &m, kk, cap);
          }
          for (long r = c0; r < c1; r++) { /* branch-free: the buffer has room for a whole chunk */
            c[m].s = s[r]; c[m].id = ids[r]; m += s[r] >= t;
          }
        }
        cnt[q] = m; thr[q] = t;
      }
    }
    for (long q = 0; q < nqb; q++) { /* emit the kk best of each query */
      Cand *c = buf + q * cap;
      long m = cnt[q];
      if (m > kk) { select_best(c, m, kk); m = kk; }
      if (j->nsplits == 1) {
        int32_t *o = j->out + (q0 + q) * kk;
        for (long e = 0; e < kk; e++) o[e] = e < m ? c[e].id : -1;
      } else {
        long slot = split * j->nq + q0 + q;
        memcpy(j->lists + slot * kk, c, sizeof(Cand) * m);
        j->counts[slot] = (int32_t)m;
      }
    }
  }
done:
  free(S); free(nb); free(copy); free(ids); free(buf);
  return NULL;
}

/* Ranking, the same arithmetic as exactDistance in src/groundtruth/exact.ts so that both backends
 * give bit-identical distances: float32 inputs widened to double, one product and one sum per
 * dimension in order (no fused multiply-add: binding.gyp builds with -ffp-contract=off). */
typedef struct { double dist; int32_t id; } Ranked;

static int ranked_cmp(const void *pa, const void *pb) {
  const Ranked *a = pa, *b = pb;
  if (a->dist < b->dist) return -1;
  if (a->dist > b->dist) return 1;
  return (a->id > b->id) - (a->id < b->id);
}

static inline int ranked_less(const Ranked *a, const Ranked *b) {
  return a->dist < b->dist || (a->dist == b->dist && a->id < b->id);
}

/* Sorts a[0..n) by (dist, id): quicksort with inlined comparisons (twice as fast as qsort's
 * callback here), insertion sort for short runs, qsort if the pivots keep going badly. */
static void ranked_sort(Ranked *a, long n, int depth) {
  while (n > 16) {
    if (depth-- == 0) { qsort(a, n, sizeof(Ranked), ranked_cmp); return; }
    Ranked *x = &a[0], *y = &a[n / 2], *z = &a[n - 1], pv; /* median of three */
    if (ranked_less(x, y)) pv = ranked_less(y, z) ? *y : ranked_less(x, z) ? *z : *x;
    else pv = ranked_less(x, z) ? *x : ranked_less(y, z) ? *z : *y;
    long i = 0, j = n - 1;
    while (i <= j) {
      while (ranked_less(&a[i], &pv)) i++;
      while (ranked_less(&pv, &a[j])) j--;
      if (i <= j) { Ranked t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
    }
    /* a[0..j] and a[i..n) remain; recurse into the shorter, loop on the longer */
    if (j + 1 < n - i) { ranked_sort(a, j + 1, depth); a += i; n -= i; }
    else { ranked_sort(a + i, n - i, depth); n = j + 1; }
  }
  for (long e = 1; e < n; e++) {
    Ranked v = a[e]; long f = e;
    for (; f > 0 && ranked_less(&v, &a[f - 1]); f--) a[f] = a[f - 1];
    a[f] = v;
  }
}

/* Distances from query q to the c rows ids[0..c); four rows at a time to hide the add latency,
 * each sum still accumulated in dimension order. */
static void exact_distances(int metric, const float *q, const float *base, long d, const Ranked *in, long c, double *out) {
  long e = 0, lines = (d * (long)sizeof(float) + 63) / 64;
  for (; e + 4 <= c; e += 4) {
    /* The rows are scattered over the base: fetch the batch after next while this one sums. */
    for (long f = e + 8; f < e + 12 && f < c; f++)
      for (long l = 0; l < lines; l++) __builtin_prefetch((const char *)(base + (long)in[f].id * d) + 64 * l);
    const float *b0 = base + (long)in[e].id * d, *b1 = base + (long)in[e + 1].id * d;
    const float *b2 = base + (long)in[e + 2].id * d, *b3 = base + (long)in[e + 3].id * d;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    if (metric == 2) {
      for (long i = 0; i < d; i++) {
        double v = q[i], t0 = v - b0[i], t1 = v - b1[i], t2 = v - b2[i], t3 = v - b3[i];
        s0 += t0 * t0; s1 += t1 * t1; s2 += t2 * t2; s3 += t3 * t3;
      }
      out[e] = sqrt(s0); out[e + 1] = sqrt(s1); out[e + 2] = sqrt(s2); out[e + 3] = sqrt(s3);
    } else {
      for (long i = 0; i < d; i++) {
        double v = q[i];
        s0 += v * (double)b0[i]; s1 += v * (double)b1[i]; s2 += v * (double)b2[i]; s3 += v * (double)b3[i];
      }
      if (metric == 0) { out[e] = -s0; out[e + 1] = -s1; out[e + 2] = -s2; out[e + 3] = -s3; }
      else { out[e] = 1 - s0; out[e + 1] = 1 - s1; out[e + 2] = 1 - s2; out[e + 3] = 1 - s3; }
    }
  }
  for (; e < c; e++) {
    const float *b = base + (long)in[e].id * d;
    double s = 0;
    if (metric == 2) {
      for (long i = 0; i < d; i++) { double t = (double)q[i] - b[i]; s += t * t; }
      out[e] = sqrt(s);
    } else {
      for (long i = 0; i < d; i++) s += (double)q[i] * (double)b[i];
      out[e] = metric == 0 ? -s : 1 - s;
    }
  }
}

#define RANK_QUERIES 32 /* queries per ranking task */

static void *rank_work(void *arg) {
  Worker *w = arg; Job *j = w->job;
  long kk = j->kk, k = j->k;
  Ranked *r = malloc(sizeof(Ranked) * kk); double *dist = malloc(sizeof(double) * kk);
  if (!r || !dist) { w->fail = 1; goto done; }
  for (;;) {
    long q0 = __atomic_fetch_add(&j->next, RANK_QUERIES, __ATOMIC_RELAXED);
    if (q0 >= j->nq) break;
    long q1 = q0 + RANK_QUERIES < j->nq ? q0 + RANK_QUERIES : j->nq;
    for (long q = q0; q < q1; q++) {
      long c = 0;
      for (long e = 0; e < kk; e++) if (j->out[q * kk + e] >= 0) r[c++].id = j->out[q * kk + e];
      exact_distances(j->metric, j->queries + q * j->d, j->base, j->d, r, c, dist);
      for (long e = 0; e < c; e++) r[e].dist = dist[e];
      ranked_sort(r, c, 64);
      for (long e = 0; e < k; e++) {
        j->ranked_ids[q * k + e] = e < c ? r[e].id : -1;
        j->ranked_dists[q * k + e] = e < c ? (float)r[e].dist : INFINITY;
      }
    }
  }
done:
  free(r); free(dist);
  return NULL;
}

#define CHECK(call) do { if ((call) != napi_ok) { napi_throw_error(env, NULL, "topk: " #call " failed"); return NULL; } } while (0)

static int get_typed(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *len) {
  bool is; napi_typedarray_type t; napi_value ab; size_t off;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return 0;
  if (napi_get_typedarray_info(env, v, &t, len, data, &ab, &off) != napi_ok) return 0;
  return t == want;
}

/* Runs `fn` on `threads` workers (the calling thread is one of them); 0 on success. */
static int run_workers(Job *job, long threads, void *(*fn)(void *)) {
  Worker *ws = calloc(threads, sizeof(Worker)); pthread_t *tids = calloc(threads, sizeof(pthread_t));
  int fail = !ws || !tids;
  if (!fail) {
    for (long t = 0; t < threads; t++) ws[t].job = job;
    job->next = 0;
    long started = 1;
    for (; started < threads; started++)
      if (pthread_create(&tids[started], NULL, fn, &ws[started]) != 0) break;
    fn(&ws[0]);
    for (long t = 1; t < started; t++) pthread_join(tids[t], NULL);
    for (long t = 0; t < threads; t++) fail |= ws[t].fail;
  }
  free(ws); free(tids);
  return fail;
}

/* Fills job->out (nq x kk candidate ids, -1 padding); 0 on success, 1 when out of memory. */
static int select_candidates(Job *job, long threads) {
  long tot = job->nq * job->kk;
  if (tot == 0) return 0;
  if (job->nblocks == 0) { for (long i = 0; i < tot; i++) job->out[i] = -1; return 0; }
  /* Tasks: query groups x row ranges. Split the rows only when there are too few groups to keep
   * every thread busy (each split costs a merge and a threshold that starts over). */
  job->ngroups = (job->nq + QB - 1) / QB;
  long splits = (threads + job->ngroups - 1) / job->ngroups;
  if (splits > job->nblocks) splits = job->nblocks;
  while (splits > 1 && (double)splits * tot * sizeof(Cand) > MERGE_BYTES) splits--;
  if (splits < 1) splits = 1;
  job->nsplits = splits; job->ntasks = job->ngroups * splits;
  /* Room for kk kept rows plus about half as many new ones: a cut costs O(cap) per cap - kk
   * appends, and a fuller buffer lets the threshold lag further behind (measured on GloVe). */
  job->cap = job->kk + job->kk / 2 + 256;
  job->cap += (CHUNK - job->cap % CHUNK) % CHUNK;
  if (splits > 1) {
    job->lists = malloc(sizeof(Cand) * splits * tot);
    job->counts = calloc(splits * job->nq, sizeof(int32_t));
  }
  int fail = splits > 1 && (!job->lists || !job->counts);
  if (!fail) fail = run_workers(job, threads < job->ntasks ? threads : job->ntasks, work);
  if (!fail && splits > 1) { /* merge each query's per-range lists by the same selection */
    Cand *all = malloc(sizeof(Cand) * splits * job->kk);
    if (!all) fail = 1;
    for (long q = 0; q < job->nq && !fail; q++) {
      long m = 0;
      for (long s = 0; s < splits; s++) {
        long slot = s * job->nq + q;
        memcpy(all + m, job->lists + slot * job->kk, sizeof(Cand) * job->counts[slot]);
        m += job->counts[slot];
      }
      if (m > job->kk) { select_best(all, m, job->kk); m = job->kk; }
      for (long e = 0; e < job->kk; e++) job->out[q * job->kk + e] = e < m ? all[e].id : -1;
    }
    free(all);
  }
  free(job->lists); free(job->counts); job->lists = NULL; job->counts = NULL;
  return fail;
}

/* Reads and checks the 9 arguments shared by both exports into *job; returns the thread count,
 * or 0 after throwing. */
static long parse_args(napi_env env, napi_value *argv, Job *job) {
  void *base, *queries, *rows = NULL; size_t blen, qlen, rlen = 0; int64_t v[6]; napi_valuetype rt;
  memset(job, 0, sizeof *job);
  if (!get_typed(env, argv[0], napi_float32_array, &base, &blen) ||
      !get_typed(env, argv[3], napi_float32_array, &queries, &qlen)) {
    napi_throw_type_error(env, NULL, "topk: base and queries must be Float32Array"); return 0;
  }
  const int num[6] = {1, 2, 4, 5, 6, 8};
  for (int i = 0; i < 6; i++)
    if (napi_get_value_int64(env, argv[num[i]], &v[i]) != napi_ok) {
      napi_throw_type_error(env, NULL, "topk: n, d, nq, metric, kk and threads must be numbers"); return 0;
    }
  if (napi_typeof(env, argv[7], &rt) != napi_ok ||
      (rt != napi_null && rt != napi_undefined && !get_typed(env, argv[7], napi_int32_array, &rows, &rlen))) {
    napi_throw_type_error(env, NULL, "topk: rows must be Int32Array or null"); return 0;
  }
  job->n = v[0]; job->d = v[1]; job->nq = v[2]; job->metric = (int)v[3]; job->kk = v[4];
  long threads = v[5] < 1 ? 1 : v[5] > 64 ? 64 : v[5];
  if (job->n < 0 || job->d < 1 || job->nq < 0 || job->kk < 1 || job->metric < 0 || job->metric > 2 ||
      (size_t)(job->n * job->d) != blen || (size_t)(job->nq * job->d) != qlen) {
    napi_throw_range_error(env, NULL, "topk: inconsistent sizes"); return 0;
  }
  job->base = base; job->queries = queries; job->rows = rows;
  long cands = rows ? (long)rlen : job->n;
  if (rows) for (long i = 0; i < cands; i++) if (job->rows[i] < 0 || job->rows[i] >= job->n) {
    napi_throw_range_error(env, NULL, "topk: row id out of range"); return 0;
  }
  job->n = cands; job->nblocks = (cands + RB - 1) / RB;
  openblas_set_num_threads(1); /* parallelism comes from the workers: never oversubscribe */
  return threads;
}

/* topk(base: Float32Array, n, d, queries: Float32Array, nq, metric 0|1|2, kk, rows: Int32Array|null, threads)
 * -> Int32Array(nq*kk) of candidate row ids (unordered per query, -1 padding). */
static napi_value topk(napi_env env, napi_callback_info info) {
  size_t argc = 9; napi_value argv[9]; Job job;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 9) { napi_throw_type_error(env, NULL, "topk: expected 9 arguments"); return NULL; }
  long threads = parse_args(env, argv, &job);
  if (threads == 0) return NULL;
  napi_value out_ab, out; long tot = job.nq * job.kk;
  CHECK(napi_create_arraybuffer(env, sizeof(int32_t) * (tot > 0 ? tot : 1), (void **)&job.out, &out_ab));
  CHECK(napi_create_typedarray(env, napi_int32_array, tot, out_ab, 0, &out));
  if (select_candidates(&job, threads)) { napi_throw_error(env, NULL, "topk: out of memory"); return NULL; }
  return out;
}

/* ranked(base, n, d, queries, nq, metric, kk, rows, threads, k, ids: Int32Array(nq*k), dists: Float32Array(nq*k))
 * selects kk candidates per query as topk does, then ranks them by the exact (float64) distance
 * and row id and writes the k best into ids / dists (-1 / +Infinity padding). */
static napi_value ranked(napi_env env, napi_callback_info info) {
  size_t argc = 12; napi_value argv[12]; Job job; int64_t k; void *ids, *dists; size_t ilen, dlen;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 12) { napi_throw_type_error(env, NULL, "ranked: expected 12 arguments"); return NULL; }
  long threads = parse_args(env, argv, &job);
  if (threads == 0) return NULL;
  if (napi_get_value_int64(env, argv[9], &k) != napi_ok || k < 1 ||
      !get_typed(env, argv[10], napi_int32_array, &ids, &ilen) ||
      !get_typed(env, argv[11], napi_float32_array, &dists, &dlen) ||
      (size_t)(job.nq * k) != ilen || ilen != dlen) {
    napi_throw_range_error(env, NULL, "ranked: k must be >= 1 and ids / dists hold nq * k entries"); return NULL;
  }
  long tot = job.nq * job.kk;
  job.out = malloc(sizeof(int32_t) * (tot > 0 ? tot : 1));
  job.k = k; job.ranked_ids = ids; job.ranked_dists = dists;
  int fail = !job.out || select_candidates(&job, threads);
  if (!fail && job.nq > 0) {
    long tasks = (job.nq + RANK_QUERIES - 1) / RANK_QUERIES;
    fail = run_workers(&job, threads < tasks ? threads : tasks, rank_work);
  }
  free(job.out);
  if (fail) { napi_throw_error(env, NULL, "ranked: out of memory"); return NULL; }
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn, cores;
  if (napi_create_function(env, "topk", NAPI_AUTO_LENGTH, topk, NULL, &fn) != napi_ok) return NULL;
  napi_set_named_property(env, exports, "topk", fn);
  if (napi_create_function(env, "ranked", NAPI_AUTO_LENGTH, ranked, NULL, &fn) != napi_ok) return NULL;
  napi_set_named_property(env, exports, "ranked", fn);
  napi_create_int32(env, (int32_t)sysconf(_SC_NPROCESSORS_ONLN), &cores);
  napi_set_named_property(env, exports, "cores", cores);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
