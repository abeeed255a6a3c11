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

constexpr Addon addon{"hnswlib addon", "hnswlib"};

hnswlib::SpaceInterface<float>* makeSpace(const std::string& space, size_t dim) {
  if (dim < 1) fail("dim must be positive");
  if (space == "l2") return new hnswlib::L2Space(dim);
  if (space == "ip") return new hnswlib::InnerProductSpace(dim);
  fail("space must be 'l2' or 'ip', got '" + space + "'");
}

/* hnswlib's filter over the shared clauses (napi_args.h): one virtual call per node the walk
 * would admit, no JS (hnswlib itself skips deleted labels). */
struct ClauseFilter : hnswlib::BaseFilterFunctor {
  const Clauses* clauses;
  explicit ClauseFilter(const Clauses* c) : clauses(c) {}
  bool operator()(hnswlib::labeltype label) override { return clauses->admits(label); }
};

struct Handle {
  hnswlib::SpaceInterface<float>* space = nullptr;
  Index* index = nullptr;
  size_t dim = 0;

  Handle(const std::string& spaceName, size_t d) : space(makeSpace(spaceName, d)), dim(d) {}
  ~Handle() { release(); }
  void release() {
    delete index;
    index = nullptr;
    delete space;
    space = nullptr;
  }

  /* search's k: at most the capacity (hnswlib searches with max(ef, k)). */
  size_t checkedK(size_t k) const {
    if (k > index->max_elements_) fail("k=" + std::to_string(k) + " exceeds the index capacity " + std::to_string(index->max_elements_));
    return k;
  }

  /* The labels of one search appended to `out`, best first (the queue pops the farthest first). */
  void searchInto(const float* q, size_t k, const Clauses* clauses, std::vector<int32_t>& out) const {
    ClauseFilter filter{clauses};
    auto knn = index->searchKnn(q, k, clauses ? &filter : nullptr);
    size_t found = knn.size();
    out.resize(out.size() + found);
    int32_t* dst = out.data() + out.size() - found;
    for (size_t j = found; j-- > 0;) {
      dst[j] = (int32_t)knn.top().second;
      knn.pop();
    }
  }
};

/* create(space, dim, maxElements, M, efConstruction, seed, allowReplaceDeleted) */
napi_value Create(napi_env env, napi_callback_info info) {
  return addon.call(env, info, 7, 7, [&](const Args& a) {
    std::string space = text(env, a[0], "space");
    size_t dim = count(env, a[1], "dim"), maxElements = count(env, a[2], "maxElements");
    size_t M = count(env, a[3], "M"), efc = count(env, a[4], "efConstruction"), seed = count(env, a[5], "seed");
    bool replace = flag(env, a[6], "allowReplaceDeleted");
    auto h = std::make_unique<Handle>(space, dim);
    h->index = new Index(h->space, maxElements, M, efc, seed, replace);
    return wrap(env, std::move(h));
  });
}

/* load(space, dim, path, allowReplaceDeleted): an index save() or hnswlib-node's writeIndex wrote. */
napi_value Load(napi_env env, napi_callback_info info) {
  return addon.call(env, info, 4, 4, [&](const Args& a) {
    std::string space = text(env, a[0], "space");
    size_t dim = count(env, a[1], "dim");
    std::string path = text(env, a[2], "path");
    bool replace = flag(env, a[3], "allowReplaceDeleted");
    if (!std::ifstream(path).is_open()) fail("failed to open file: " + path);
    auto h = std::make_unique<Handle>(space, dim);
    h->index = new Index(h->space, path, false, 0, replace);
    if (h->index->data_size_ != h->space->get_data_size())
      fail(path + " holds vectors of d=" + std::to_string(h->index->data_size_ / sizeof(float)) + ", expected d=" + std::to_string(dim));
    return wrap(env, std::move(h));
  });
}

/* save(h, path): hnswlib's own format (saveIndex, what hnswlib-node's writeIndex writes). */
napi_value Save(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 2, 2, [&](Handle* h, const Args& a) {
    h->index->saveIndex(text(env, a[1], "path"));
    return undefined(env);
  });
}

/* addPoints(h, vectors, labels, replaceDeleted): adds (or, for a live label, updates) each row
 * in order, exactly as one addPoint call per row; vectors are read in place. */
napi_value AddPoints(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 3, 4, [&](Handle* h, const Args& a) {
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

/* The bindings (h, n) that hand the index one non-negative integer (named `what`): markDelete and
 * unmarkDelete (hnswlib throws for a label it does not hold), resize and setEf. */
template <typename Set>
napi_value setter(napi_env env, napi_callback_info info, const char* what, Set set) {
  return addon.onHandle<Handle>(env, info, 2, 2, [&](Handle* h, const Args& a) {
    set(h->index, count(env, a[1], what));
    return undefined(env);
  });
}

napi_value MarkDelete(napi_env env, napi_callback_info info) { return setter(env, info, "label", [](Index* i, size_t n) { i->markDelete(n); }); }
napi_value UnmarkDelete(napi_env env, napi_callback_info info) { return setter(env, info, "label", [](Index* i, size_t n) { i->unmarkDelete(n); }); }
napi_value Resize(napi_env env, napi_callback_info info) { return setter(env, info, "maxElements", [](Index* i, size_t n) { i->resizeIndex(n); }); }
napi_value SetEf(napi_env env, napi_callback_info info) { return setter(env, info, "ef", [](Index* i, size_t n) { i->setEf(n); }); }

/* info(h): {count, maxElements, deleted} (count never drops: deletes only mark). */
napi_value Info(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 1, 1, [&](Handle* h, const Args&) {
    const Index* idx = h->index;
    return ObjectOut(env)
        .number("count", (double)idx->cur_element_count)
        .number("maxElements", (double)idx->max_elements_)
        .number("deleted", (double)idx->num_deleted_)
        .object;
  });
}

/* labels(h): every label the index holds, deleted ones included (hnswlib-node's getIdsList). */
napi_value Labels(napi_env env, napi_callback_info info) {
  return addon.onHandle<Handle>(env, info, 1, 1, [&](Handle* h, const Args&) {
    const Index* idx = h->index;
    std::vector<int32_t> out;
    out.reserve(idx->label_lookup_.size());
    for (const auto& kv : idx->label_lookup_) out.push_back((int32_t)kv.first);
    return int32Out(env, out);
  });
}

/* search(h, query, k, clauses|null, ...columns): the labels found, best first (Int32Array);
 * timedSearch(h, queries, k, clauses|null, ...columns): n queries each timed alone in C++
 * (napi_args.h, searchBinding). clauses: Float64Array triples (column slot, lo, hi), all of which
 * a label must pass; the columns (Int32Array by label) are the ones the slots name, in order. ef
 * is the handle's (setEf). */
napi_value Init(napi_env env, napi_value exports) {
  return defineFunctions(env, exports,
                         {{"create", Create}, {"load", Load}, {"save", Save}, {"addPoints", AddPoints}, {"markDelete", MarkDelete},
                          {"unmarkDelete", UnmarkDelete}, {"resize", Resize}, {"setEf", SetEf}, {"info", Info}, {"labels", Labels},
                          {"search", searchBinding<Handle, addon, false>}, {"timedSearch", searchBinding<Handle, addon, true>},
                          {"free", freeBinding<Handle, addon>}});
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
