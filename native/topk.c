/* vecbench exact top-k: sgemm over row blocks (OpenBLAS) plus a per-query bounded heap.
 * Plain C against node_api.h. Each worker thread takes whole row blocks and keeps its own
 * heaps; OpenBLAS runs single-threaded inside each worker so `threads` is the total. */
#include <node_api.h>
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void openblas_set_num_threads(int num_threads); /* in case cblas.h is not OpenBLAS's own */

#define RB 1536 /* base rows per block (a multiple of OpenBLAS's Haswell sgemm P block, 768) */
#define QB 256  /* queries per sgemm call: a 1.5 MB score block, read back while still in cache */

typedef struct {
  const float *base, *queries; const int32_t *rows;
  long n, d, nq, kk, nblocks; int metric; /* 0 ip, 1 cosine, 2 l2 */
  long next; /* next row block to take (atomic) */
} Job;

typedef struct { Job *job; float *hg; int32_t *hi; int32_t *cnt; int fail; } Worker;

/* A heap holds the kk best (highest goodness) rows; the root is the worst of them.
 * a is worse than b when its goodness is lower, or equal with a larger row id. */
static inline int worse(float ga, int32_t ia, float gb, int32_t ib) {
  return ga < gb || (ga == gb && ia > ib);
}

static void heap_push(float *g, int32_t *id, int32_t *cnt, long kk, float vg, int32_t vi) {
  long i;
  if (*cnt < kk) { /* sift up */
    i = (*cnt)++;
    while (i > 0) {
      long p = (i - 1) / 2;
      if (!worse(vg, vi, g[p], id[p])) break;
      g[i] = g[p]; id[i] = id[p]; i = p;
    }
  } else { /* replace the root, sift down */
    if (!worse(g[0], id[0], vg, vi)) return;
    i = 0;
    for (;;) {
      long c = 2 * i + 1;
      if (c >= kk) break;
      if (c + 1 < kk && worse(g[c + 1], id[c + 1], g[c], id[c])) c++;
      if (!worse(g[c], id[c], vg, vi)) break;
      g[i] = g[c]; id[i] = id[c]; i = c;
    }
  }
  g[i] = vg; id[i] = vi;
}

static void *work(void *arg) {
  Worker *w = arg; Job *j = w->job;
  long d = j->d, kk = j->kk; int l2 = j->metric == 2;
  float *S = malloc(sizeof(float) * QB * RB), *nb = malloc(sizeof(float) * RB);
  float *copy = j->rows ? malloc(sizeof(float) * RB * d) : NULL;
  int32_t *ids = malloc(sizeof(int32_t) * RB);
  if (!S || !nb || !ids || (j->rows && !copy)) { w->fail = 1; goto done; }
  for (;;) {
    long b = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
    if (b >= j->nblocks) break;
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
    for (long q0 = 0; q0 < j->nq; q0 += QB) {
      long nqb = j->nq - q0 < QB ? j->nq - q0 : QB;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nqb, (int)nr, (int)d, 1.0f,
                  j->queries + q0 * d, (int)d, B, (int)d, 0.0f, S, (int)nr);
      for (long q = 0; q < nqb; q++) {
        long qi = q0 + q;
        float *hg = w->hg + qi * kk; int32_t *hi = w->hi + qi * kk, *cnt = w->cnt + qi;
        float *s = S + q * nr;
        /* goodness: higher is closer. ip/cosine: dot; l2: 2 q.b - |b|^2 (= |q|^2 - dist^2) */
        if (l2) for (long r = 0; r < nr; r++) s[r] = 2.0f * s[r] - nb[r];
        float t = *cnt < kk ? -INFINITY : hg[0];
        for (long c0 = 0; c0 < nr; c0 += 16) {
          long c1 = c0 + 16 < nr ? c0 + 16 : nr;
          int any = 0; /* vectorizable pre-check: most chunks hold nothing better than the k-th */
          for (long r = c0; r < c1; r++) any |= s[r] >= t;
          if (!any) continue;
          for (long r = c0; r < c1; r++)
            if (s[r] >= t) {
              heap_push(hg, hi, cnt, kk, s[r], ids[r]);
              t = *cnt < kk ? -INFINITY : hg[0];
            }
        }
      }
    }
  }
done:
  free(S); free(nb); free(copy); free(ids);
  return NULL;
}

#define CHECK(call) do { if ((call) != napi_ok) { napi_throw_error(env, NULL, "topk: " #call " failed"); return NULL; } } while (0)

static int get_typed(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *len) {
  bool is; napi_typedarray_type t; napi_value ab; size_t off;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return 0;
  if (napi_get_typedarray_info(env, v, &t, len, data, &ab, &off) != napi_ok) return 0;
  return t == want;
}

/* topk(base: Float32Array, n, d, queries: Float32Array, nq, metric 0|1|2, kk, rows: Int32Array|null, threads)
 * -> Int32Array(nq*kk) of candidate row ids (unordered per query, -1 padding). */
static napi_value topk(napi_env env, napi_callback_info info) {
  size_t argc = 9; napi_value argv[9]; Job job; memset(&job, 0, sizeof job);
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 9) { napi_throw_type_error(env, NULL, "topk: expected 9 arguments"); return NULL; }
  void *base, *queries, *rows = NULL; size_t blen, qlen, rlen = 0; int64_t v[6]; napi_valuetype rt;
  if (!get_typed(env, argv[0], napi_float32_array, &base, &blen) ||
      !get_typed(env, argv[3], napi_float32_array, &queries, &qlen)) {
    napi_throw_type_error(env, NULL, "topk: base and queries must be Float32Array"); return NULL;
  }
  const int num[6] = {1, 2, 4, 5, 6, 8};
  for (int i = 0; i < 6; i++) CHECK(napi_get_value_int64(env, argv[num[i]], &v[i]));
  CHECK(napi_typeof(env, argv[7], &rt));
  if (rt != napi_null && rt != napi_undefined && !get_typed(env, argv[7], napi_int32_array, &rows, &rlen)) {
    napi_throw_type_error(env, NULL, "topk: rows must be Int32Array or null"); return NULL;
  }
  job.n = v[0]; job.d = v[1]; job.nq = v[2]; job.metric = (int)v[3]; job.kk = v[4];
  long threads = v[5] < 1 ? 1 : v[5] > 64 ? 64 : v[5];
  if (job.n < 0 || job.d < 1 || job.nq < 0 || job.kk < 1 || job.metric < 0 || job.metric > 2 ||
      (size_t)(job.n * job.d) != blen || (size_t)(job.nq * job.d) != qlen) {
    napi_throw_range_error(env, NULL, "topk: inconsistent sizes"); return NULL;
  }
  job.base = base; job.queries = queries; job.rows = rows;
  long cands = rows ? (long)rlen : job.n;
  if (rows) for (long i = 0; i < cands; i++) if (job.rows[i] < 0 || job.rows[i] >= job.n) {
    napi_throw_range_error(env, NULL, "topk: row id out of range"); return NULL;
  }
  job.n = cands; job.nblocks = (cands + RB - 1) / RB;
  if (threads > job.nblocks) threads = job.nblocks > 0 ? job.nblocks : 1;

  napi_value out_ab, out; int32_t *out_ids; long tot = job.nq * job.kk;
  CHECK(napi_create_arraybuffer(env, sizeof(int32_t) * (tot > 0 ? tot : 1), (void **)&out_ids, &out_ab));
  CHECK(napi_create_typedarray(env, napi_int32_array, tot, out_ab, 0, &out));
  Worker *ws = calloc(threads, sizeof(Worker)); pthread_t *tids = calloc(threads, sizeof(pthread_t));
  int fail = !ws || !tids;
  for (long t = 0; t < threads && !fail; t++) {
    ws[t].job = &job;
    ws[t].hg = malloc(sizeof(float) * (tot > 0 ? tot : 1));
    ws[t].hi = malloc(sizeof(int32_t) * (tot > 0 ? tot : 1));
    ws[t].cnt = calloc(job.nq > 0 ? job.nq : 1, sizeof(int32_t));
    if (!ws[t].hg || !ws[t].hi || !ws[t].cnt) fail = 1;
  }
  if (!fail) {
    openblas_set_num_threads(1); /* parallelism comes from the workers: never oversubscribe */
    long started = 1;
    for (; started < threads; started++)
      if (pthread_create(&tids[started], NULL, work, &ws[started]) != 0) break;
    work(&ws[0]);
    for (long t = 1; t < started; t++) pthread_join(tids[t], NULL);
    for (long t = 0; t < threads; t++) fail |= ws[t].fail;
  }
  if (!fail) /* merge every worker's heap into worker 0's, then emit */
    for (long q = 0; q < job.nq; q++) {
      float *g0 = ws[0].hg + q * job.kk; int32_t *i0 = ws[0].hi + q * job.kk;
      for (long t = 1; t < threads; t++)
        for (long e = 0; e < ws[t].cnt[q]; e++)
          heap_push(g0, i0, &ws[0].cnt[q], job.kk, ws[t].hg[q * job.kk + e], ws[t].hi[q * job.kk + e]);
      for (long e = 0; e < job.kk; e++) out_ids[q * job.kk + e] = e < ws[0].cnt[q] ? i0[e] : -1;
    }
  for (long t = 0; ws && t < threads; t++) { free(ws[t].hg); free(ws[t].hi); free(ws[t].cnt); }
  free(ws); free(tids);
  if (fail) { napi_throw_error(env, NULL, "topk: out of memory"); return NULL; }
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn, cores;
  if (napi_create_function(env, "topk", NAPI_AUTO_LENGTH, topk, NULL, &fn) != napi_ok) return NULL;
  napi_set_named_property(env, exports, "topk", fn);
  napi_create_int32(env, (int32_t)sysconf(_SC_NPROCESSORS_ONLN), &cores);
  napi_set_named_property(env, exports, "cores", cores);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
