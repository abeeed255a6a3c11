/* vecbench's own binding of USearch: a thin N-API layer over the very headers the npm package
 * `usearch` ships (node_modules/usearch/include), compiled with its NumKong kernels and the
 * defines of its own binding.gyp (see ./binding.gyp), so this participant and `usearch` run the
 * same library version and distance code, and read and write the same index file.
 *
 * What differs from the npm binding is only the path into the library: queries arrive as
 * Float32Array and are read in place, a search returns one Int32Array of keys (best first)
 * instead of BigInt keys and distances in fresh objects, the search knob is changed in place
 * (change_expansion_search) instead of by reloading the index, and a filter is evaluated in C++
 * during the graph walk (filtered_search with a predicate over the attribute columns), never by
 * JS. Keys are the caller's row ids.
 *
 * A handle serves one thread for searches (every search thread of the harness reopens its own);
 * add runs on `threads` threads of its own, each with its own search context. */
#include <usearch/index_dense.hpp>

#include <atomic>
#include <memory>
#include <thread>

#include "napi_args.h"

namespace {

using namespace vecbench_napi;
using unum::usearch::index_dense_config_t;
using unum::usearch::index_dense_t;
using unum::usearch::index_limits_t;
using unum::usearch::metric_kind_t;
using unum::usearch::metric_punned_t;
using unum::usearch::scalar_kind_t;
using Key = index_dense_t::vector_key_t;

constexpr Addon addon{"usearch-direct addon", "usearch"};

metric_kind_t metricOf(const std::string& m) {
  if (m == "ip") return metric_kind_t::ip_k;
  if (m == "l2sq") return metric_kind_t::l2sq_k;
  fail("metric must be 'ip' or 'l2sq', got '" + m + "'");
}

struct Handle {
  std::unique_ptr<index_dense_t> index;
  size_t dim = 0;
  std::vector<Key> keys;  // one search's keys (a handle serves one thread for searches)

  void release() { index.reset(); }

  /* Search contexts for `threads` callers and room for `members` vectors. */
  void reserve(size_t members, size_t threads) {
    if (!index->try_reserve(index_limits_t(members, threads))) fail("cannot reserve room for " + std::to_string(members) + " vectors");
  }

  /* search's k: at least 1, at most the index's size (at least 1 too). */
  size_t checkedK(size_t k) const {
    if (k < 1) fail("k must be at least 1");
    return std::min(k, std::max<size_t>(1, index->size()));
  }

  /* One search into `out` (appended, best first): the whole graph, or with `filter` only rows
   * that pass it, judged during the walk. */
  void searchInto(const float* q, size_t k, const Clauses* filter, std::vector<int32_t>& out) {
    auto found = filter ? index->filtered_search(q, k, [filter](Key key) noexcept { return filter->admits(key); }, 0) : index->search(q, k, 0);
    if (!found) fail(found.error.release());
    keys.resize(k);
    size_t got = found.dump_to(keys.data());
    for (size_t j = 0; j < got; j++) out.push_back((int32_t)keys[j]);
  }
};

/* a[0] of the bindings that read another argument first. */
Handle* handleOf(napi_env env, napi_value v) { return openHandle<Handle>(env, v, addon.namedHandles); }

/* A new handle over `index` (of d=dim), with one search context and room for `members`. */
napi_value handleOver(napi_env env, index_dense_t&& index, size_t dim, size_t members) {
  auto h = std::make_unique<Handle>();
  h->dim = dim;
  h->index = std::make_unique<index_dense_t>(std::move(index));
  h->reserve(members, 1);
  return wrap(env, std::move(h));
}

/* create(metric, dim, connectivity, expansionAdd, expansionSearch) */
napi_value Create(napi_env env, napi_callback_info info) {
  return addon.call(env, info, 5, 5, [&](const Args& a) {
    metric_kind_t kind = metricOf(text(env, a[0], "metric"));
    size_t dim = count(env, a[1], "dim");
    if (dim < 1) fail("dim must be positive");
    index_dense_config_t config(count(env, a[2], "connectivity"), count(env, a[3], "expansionAdd"), count(env, a[4], "expansionSearch"));
    config.multi = false;
    auto made = index_dense_t::make(metric_punned_t(dim, kind, scalar_kind_t::f32_k), config);
    if (!made) fail(made.error.release());
    return handleOver(env, std::move(made.index), dim, 0);
  });
}

/* open(path, dim, mapped): an index save() (or the npm binding's save) wrote, read into memory or
 * viewed from the file (memory-mapped, read-only). */
napi_value Open(napi_env env, napi_callback_info info) {
  return addon.call(env, info, 3, 3, [&](const Args& a) {
    std::string path = text(env, a[0], "path");
    size_t dim = count(env, a[1], "dim");
    bool mapped = flag(env, a[2], "mapped");
    auto made = index_dense_t::make(path.c_str(), mapped);
    if (!made) fail(path + ": " + made.error.release());
    if (made.index.dimensions() != dim)
      fail(path + " holds vectors of d=" + std::to_string(made.index.dimensions()) + ", expected d=" + std::to_string(dim));
    size_t members = made.index.size();
    return handleOver(env, std::move(made.index), dim, members);
  });
}

napi_value Save(napi_env env, napi_callback_info info) {
  return addon.call(env, info, 2, 2, [&](const Args& a) {
    std::string path = text(env, a[1], "path");
    auto saved = handleOf(env, a[0])->index->save(path.c_str());
    if (!saved) fail(path + ": " + saved.error.release());
    return undefined(env);
  });
}

/* add(h, keys, vectors, threads): every row, on `threads` threads (0: the hardware's), each with
 * its own search context; keys must be absent. */
napi_value Add(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 4, 4, [&](Handle* h, const Args& a) {
    auto [keys, n] = view<int32_t>(env, a[1], napi_int32_array, "keys");
    auto [x, len] = view<float>(env, a[2], napi_float32_array, "vectors");
    size_t threads = count(env, a[3], "threads");
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    if (len != n * h->dim) fail(std::to_string(len) + " floats for " + std::to_string(n) + " keys of d=" + std::to_string(h->dim));
    for (size_t i = 0; i < n; i++)
      if (keys[i] < 0) fail("keys must be non-negative");
    threads = std::min(threads, std::max<size_t>(1, n));
    h->reserve(h->index->size() + n, threads);
    std::atomic<bool> failed{false};
    std::string first;
    std::atomic_flag taken = ATOMIC_FLAG_INIT;
    auto part = [&](size_t t) {
      for (size_t i = t; i < n && !failed.load(); i += threads) {
        auto added = h->index->add((Key)keys[i], x + i * h->dim, t);
        if (!added) {
          if (!taken.test_and_set()) first = "key " + std::to_string(keys[i]) + ": " + added.error.release();
          else added.error.release();
          failed = true;
        }
      }
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; t++) pool.emplace_back(part, t);
    part(0);
    for (auto& th : pool) th.join();
    // Searches run on context 0 only: one is enough from here on.
    if (failed) fail(first);
    return undefined(env);
  });
}

/* remove(h, keys): each key the index holds leaves it (absent keys are skipped). */
napi_value Remove(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 2, 2, [&](Handle* h, const Args& a) {
    auto [keys, n] = view<int32_t>(env, a[1], napi_int32_array, "keys");
    for (size_t i = 0; i < n; i++) {
      auto removed = h->index->remove((Key)keys[i]);
      if (!removed) fail("key " + std::to_string(keys[i]) + ": " + removed.error.release());
    }
    return undefined(env);
  });
}

napi_value SetExpansion(napi_env env, napi_callback_info info) {
  return addon.call(env, info, 2, 2, [&](const Args& a) {
    size_t ef = count(env, a[1], "expansionSearch");
    if (ef < 1) fail("expansionSearch must be at least 1");
    handleOf(env, a[0])->index->change_expansion_search(ef);
    return undefined(env);
  });
}

napi_value Size(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 1, 1, [&](Handle* h, const Args&) { return numberOut(env, (double)h->index->size()); });
}

/* search(h, query, k, clauses|null, ...columns): the keys found, best first (Int32Array);
 * timedSearch(h, queries, k, clauses|null, ...columns): n queries each timed alone in C++
 * (napi_args.h, searchBinding). */
napi_value Init(napi_env env, napi_value exports) {
  return defineFunctions(env, exports,
                         {{"create", Create}, {"open", Open}, {"save", Save}, {"add", Add}, {"remove", Remove}, {"setExpansion", SetExpansion},
                          {"size", Size}, {"search", searchBinding<Handle, addon, false>}, {"timedSearch", searchBinding<Handle, addon, true>},
                          {"free", freeBinding<Handle, addon>}});
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
