/* vecbench's own binding of hnswlib: a thin N-API layer over the very headers hnswlib-node
 * bundles (node_modules/hnswlib-node/src/hnswlib, see binding.gyp), so that this participant
 * and the `hnswlib` one run the same library version and read and write the same index file.
 *
 * What differs from hnswlib-node is only the path into the library: vectors and queries arrive
 * as Float32Array and are read in place (no per-element conversion), a search returns one
 * Int32Array of labels (best first), and a filter is evaluated in C++ inside the graph walk
 * (an hnswlib::BaseFilterFunctor over the attribute columns the caller passes), never by a JS
 * call per visited node. Labels are the caller's row ids, as with hnswlib-node.
 *
 * One handle per index: its space (l2 or ip, which must outlive the index) and the index. A
 * handle serves one thread (every search thread of the harness reopens its own). */
#include <fstream>
#include <queue>

#include "hnswlib.h"
#include "napi_args.h"

namespace {

using namespace vecbench_napi;
using Index = hnswlib::HierarchicalNSW<float>;

struct Handle {
  hnswlib::SpaceInterface<float>* space = nullptr;
  Index* index = nullptr;
  size_t dim = 0;
  void release() {
    delete index;
    index = nullptr;
    delete space;
    space = nullptr;
  }
  ~Handle() { release(); }
};

template <typename F>
napi_value guard(napi_env env, F body) {
  return guarded(env, "hnswlib addon", "hnswlib", body);
}

Handle* handleOf(napi_env env, napi_value v) {
  void* p = nullptr;
  if (napi_get_value_external(env, v, &p) != napi_ok || p == nullptr) fail("not an index handle");
  auto* h = static_cast<Handle*>(p);
  if (!h->index) fail("the index was freed");
  return h;
}

hnswlib::SpaceInterface<float>* makeSpace(const std::string& space, size_t dim) {
  if (dim < 1) fail("dim must be positive");
  if (space == "l2") return new hnswlib::L2Space(dim);
  if (space == "ip") return new hnswlib::InnerProductSpace(dim);
  fail("space must be 'l2' or 'ip', got '" + space + "'");
}

/* create(space, dim, maxElements, M, efConstruction, seed, allowReplaceDeleted) */
napi_value Create(napi_env env, napi_callback_info info) {
  return guard(env, [&] {
    auto a = args(env, info, 7, 7);
    std::string space = text(env, a[0], "space");
    size_t dim = count(env, a[1], "dim"), maxElements = count(env, a[2], "maxElements");
    size_t M = count(env, a[3], "M"), efc = count(env, a[4], "efConstruction"), seed = count(env, a[5], "seed");
    bool replace = flag(env, a[6], "allowReplaceDeleted");
    auto* h = new Handle();
    try {
      h->dim = dim;
      h->space = makeSpace(space, dim);
      h->index = new Index(h->space, maxElements, M, efc, seed, replace);
    } catch (...) {
      delete h;
      throw;
    }
    return wrap(env, h);
  });
}

/* load(space, dim, path, allowReplaceDeleted): an index save() or hnswlib-node's writeIndex wrote. */
napi_value Load(napi_env env, napi_callback_info info) {
  return guard(env, [&] {
    auto a = args(env, info, 4, 4);
    std::string space = text(env, a[0], "space");
    size_t dim = count(env, a[1], "dim");
    std::string path = text(env, a[2], "path");
    bool replace = flag(env, a[3], "allowReplaceDeleted");
    if (!std::ifstream(path).is_open()) fail("failed to open file: " + path);
    auto* h = new Handle();
    try {
      h->dim = dim;
      h->space = makeSpace(space, dim);
      h->index = new Index(h->space, path, false, 0, replace);
    } catch (...) {
      delete h;
      throw;
    }
    if (h->index->data_size_ != h->space->get_data_size()) {
      size_t saved = h->index->data_size_ / sizeof(float);
      delete h;
      fail(path + " holds vectors of d=" + std::to_string(saved) + ", expected d=" + std::to_string(dim));
    }
    return wrap(env, h);
  });
}

/* save(h, path): hnswlib's own format (saveIndex, what hnswlib-node's writeIndex writes). */
napi_value Save(napi_env env, napi_callback_info info) {
  return guard(env, [&] {
    auto a = args(env, info, 2, 2);
    handleOf(env, a[0])->index->saveIndex(text(env, a[1], "path"));
    return undefined(env);
  });
}

/* addPoints(h, vectors, labels, replaceDeleted): adds (or, for a live label, updates) each row
 * in order, exactly as one addPoint call per row; vectors are read in place. */
napi_value AddPoints(napi_env env, napi_callback_info info) {
  return guard(env, [&] {
    auto a = args(env, info, 3, 4);
    Handle* h = handleOf(env, a[0]);
    auto [x, len] = view<float>(env, a[1], napi_float32_array, "vectors");
    auto [labels, n] = view<int32_t>(env, a[2], napi_int32_array, "labels");
    bool replace = a.size() > 3 && !isNull(env, a[3]) && flag(env, a[3], "replaceDeleted");
    if (len != n * h->dim) fail(std::to_string(len) + " floats for " + std::to_string(n) + " labels of d=" + std::to_string(h->dim));
    for (size_t i = 0; i < n; i++) {
      if (labels[i] < 0) fail("labels must be non-negative");
      h->index->addPoint(x + i * h->dim, (hnswlib::labeltype)labels[i], replace);
    }
    return undefined(env);
  });
}

/* markDelete(h, label) / unmarkDelete(h, label): hnswlib throws for a label it does not hold. */
napi_value MarkDelete(napi_env env, napi_callback_info info) {
  return guard(env, [&] {
    auto a = args(env, info, 2, 2);
    handleOf(env, a[0])->index->markDelete(count(env, a[1], "label"));
    return undefined(env);
  });
}

napi_value UnmarkDelete(napi_env env, napi_callback_info info) {
  return guard(env, [&] {
    auto a = args(env, info, 2, 2);
    handleOf(env, a[0])->index->unmarkDelete(count(env, a[1], "label"));
    return undefined(env);
  });
}

napi_value Resize(napi_env env, napi_callback_info info) {
  return guard(env, [&] {
    auto a = args(env, info, 2, 2);
    handleOf(env, a[0])->index->resizeIndex(count(env, a[1], "maxElements"));
    return undefined(env);
  });
}

napi_value SetEf(napi_env env, napi_callback_info info) {
  return guard(env, [&] {
    auto a = args(env, info, 2, 2);
    handleOf(env, a[0])->index->setEf(count(env, a[1], "ef"));
    return undefined(env);
  });
}

/* info(h): {count, maxElements, deleted} (count never drops: deletes only mark). */
napi_value Info(napi_env env, napi_callback_info info) {
  return guard(env, [&] {
    auto a = args(env, info, 1, 1);
    Index* idx = handleOf(env, a[0])->index;
    napi_value o, v;
    check(env, napi_create_object(env, &o));
    check(env, napi_create_double(env, (double)idx->cur_element_count, &v));
    check(env, napi_set_named_property(env, o, "count", v));
    check(env, napi_create_double(env, (double)idx->max_elements_, &v));
    check(env, napi_set_named_property(env, o, "maxElements", v));
    check(env, napi_create_double(env, (double)idx->num_deleted_, &v));
    check(env, napi_set_named_property(env, o, "deleted", v));
    return o;
  });
}

/* labels(h): every label the index holds, deleted ones included (hnswlib-node's getIdsList). */
napi_value Labels(napi_env env, napi_callback_info info) {
  return guard(env, [&] {
    auto a = args(env, info, 1, 1);
    Index* idx = handleOf(env, a[0])->index;
    std::vector<int32_t> out;
    out.reserve(idx->label_lookup_.size());
    for (const auto& kv : idx->label_lookup_) out.push_back((int32_t)kv.first);
    return int32Out(env, out);
  });
}

/* hnswlib's filter over the shared clauses (napi_args.h): one virtual call per node the walk
 * would admit, no JS (hnswlib itself skips deleted labels). */
struct ClauseFilter : hnswlib::BaseFilterFunctor {
  const Clauses* clauses;
  explicit ClauseFilter(const Clauses* c) : clauses(c) {}
  bool operator()(hnswlib::labeltype label) override { return clauses->admits(label); }
};

/* The labels of one search appended to `out`, best first (the queue pops the farthest first). */
void searchInto(Handle* h, const float* q, size_t k, ClauseFilter* filter, std::vector<int32_t>& out) {
  auto knn = h->index->searchKnn(q, k, filter);
  size_t found = knn.size();
  out.resize(out.size() + found);
  int32_t* dst = out.data() + out.size() - found;
  for (size_t j = found; j-- > 0;) {
    dst[j] = (int32_t)knn.top().second;
    knn.pop();
  }
}

size_t checkedK(napi_env env, napi_value v, Handle* h) {
  size_t k = count(env, v, "k");
  if (k > h->index->max_elements_) fail("k=" + std::to_string(k) + " exceeds the index capacity " + std::to_string(h->index->max_elements_));
  return k;
}

/* search(h, query, k, clauses|null, ...columns): the labels found, best first (Int32Array);
 * timedSearch(h, queries, k, clauses|null, ...columns): n queries each timed alone in C++
 * (napi_args.h, searchCall). clauses: Float64Array triples (column slot, lo, hi), all of which a
 * label must pass; the columns (Int32Array by label) are the ones the slots name, in order. ef is
 * the handle's (setEf); hnswlib searches with max(ef, k). */
napi_value searchWith(napi_env env, napi_callback_info info, bool timed) {
  return guard(env, [&] {
    Handle* h = nullptr;
    return searchCall(
        env, info, timed,
        [&](napi_value handle, napi_value k) {
          h = handleOf(env, handle);
          return std::pair<size_t, size_t>(h->dim, checkedK(env, k, h));
        },
        [&](const float* q, size_t k, const Clauses* clauses, std::vector<int32_t>& out) {
          ClauseFilter filter{clauses};
          searchInto(h, q, k, clauses ? &filter : nullptr, out);
        });
  });
}

napi_value Search(napi_env env, napi_callback_info info) { return searchWith(env, info, false); }
napi_value TimedSearch(napi_env env, napi_callback_info info) { return searchWith(env, info, true); }

napi_value Free(napi_env env, napi_callback_info info) {
  return guard(env, [&] {
    auto a = args(env, info, 1, 1);
    void* p = nullptr;
    check(env, napi_get_value_external(env, a[0], &p));
    static_cast<Handle*>(p)->release();
    return undefined(env);
  });
}

napi_value Init(napi_env env, napi_value exports) {
  const napi_property_descriptor fns[] = {
      {"create", nullptr, Create, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"load", nullptr, Load, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"save", nullptr, Save, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"addPoints", nullptr, AddPoints, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"markDelete", nullptr, MarkDelete, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"unmarkDelete", nullptr, UnmarkDelete, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"resize", nullptr, Resize, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"setEf", nullptr, SetEf, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"info", nullptr, Info, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"labels", nullptr, Labels, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"search", nullptr, Search, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"timedSearch", nullptr, TimedSearch, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"free", nullptr, Free, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(fns) / sizeof(fns[0]), fns);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
