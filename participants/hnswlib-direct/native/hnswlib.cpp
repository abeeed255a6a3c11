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
#include <node_api.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "hnswlib.h"

namespace {

using Index = hnswlib::HierarchicalNSW<float>;

/** Columns a filter may read at once (vecbench has ten attributes). */
constexpr size_t MAX_COLUMNS = 16;

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

struct Failure {
  std::string message;
};

[[noreturn]] void fail(const std::string& m) { throw Failure{m}; }

void check(napi_env env, napi_status s) {
  if (s != napi_ok) {
    const napi_extended_error_info* info = nullptr;
    napi_get_last_error_info(env, &info);
    fail(info && info->error_message ? info->error_message : "N-API call failed");
  }
}

/* Runs a binding body; hnswlib's and the arguments' errors become JS exceptions. */
template <typename F>
napi_value guarded(napi_env env, F body) {
  try {
    return body();
  } catch (const Failure& f) {
    napi_throw_error(env, nullptr, ("hnswlib addon: " + f.message).c_str());
  } catch (const std::exception& e) {
    napi_throw_error(env, nullptr, (std::string("hnswlib: ") + e.what()).c_str());
  }
  return nullptr;
}

/* The call's arguments: at least `want`, at most `most` (the rest come back null). */
std::vector<napi_value> args(napi_env env, napi_callback_info info, size_t want, size_t most) {
  std::vector<napi_value> a(most, nullptr);
  size_t got = most;
  check(env, napi_get_cb_info(env, info, &got, a.data(), nullptr, nullptr));
  if (got < want) fail("expected at least " + std::to_string(want) + " arguments, got " + std::to_string(got));
  a.resize(std::min(got, most));
  return a;
}

Handle* handleOf(napi_env env, napi_value v) {
  void* p = nullptr;
  if (napi_get_value_external(env, v, &p) != napi_ok || p == nullptr) fail("not an index handle");
  auto* h = static_cast<Handle*>(p);
  if (!h->index) fail("the index was freed");
  return h;
}

double number(napi_env env, napi_value v, const char* what) {
  double x;
  if (napi_get_value_double(env, v, &x) != napi_ok) fail(std::string(what) + " must be a number");
  return x;
}

/* A non-negative integer argument (sizes, labels, counts). */
size_t count(napi_env env, napi_value v, const char* what) {
  double x = number(env, v, what);
  if (!(x >= 0) || x > 9007199254740991.0 || x != (double)(size_t)x) fail(std::string(what) + " must be a non-negative integer");
  return (size_t)x;
}

bool flag(napi_env env, napi_value v, const char* what) {
  bool b = false;
  if (napi_get_value_bool(env, v, &b) != napi_ok) fail(std::string(what) + " must be a boolean");
  return b;
}

std::string text(napi_env env, napi_value v, const char* what) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, nullptr, 0, &len) != napi_ok) fail(std::string(what) + " must be a string");
  std::string s(len, '\0');
  check(env, napi_get_value_string_utf8(env, v, s.data(), len + 1, &len));
  return s;
}

bool isNull(napi_env env, napi_value v) {
  if (v == nullptr) return true;
  napi_valuetype t;
  check(env, napi_typeof(env, v, &t));
  return t == napi_null || t == napi_undefined;
}

/* A typed array's elements in place (valid while the call runs); null/undefined gives {nullptr, 0}. */
template <typename T>
std::pair<const T*, size_t> view(napi_env env, napi_value v, napi_typedarray_type want, const char* what, bool optional = false) {
  if (optional && isNull(env, v)) return {nullptr, 0};
  bool is = false;
  if (v != nullptr) check(env, napi_is_typedarray(env, v, &is));
  if (!is) fail(std::string(what) + " must be a typed array");
  napi_typedarray_type type;
  size_t length;
  void* data;
  check(env, napi_get_typedarray_info(env, v, &type, &length, &data, nullptr, nullptr));
  if (type != want) fail(std::string(what) + " has the wrong element type");
  return {static_cast<const T*>(data), length};
}

hnswlib::SpaceInterface<float>* makeSpace(const std::string& space, size_t dim) {
  if (dim < 1) fail("dim must be positive");
  if (space == "l2") return new hnswlib::L2Space(dim);
  if (space == "ip") return new hnswlib::InnerProductSpace(dim);
  fail("space must be 'l2' or 'ip', got '" + space + "'");
}

napi_value wrap(napi_env env, Handle* h) {
  napi_value out;
  napi_status s = napi_create_external(
      env, h, [](napi_env, void* p, void*) { delete static_cast<Handle*>(p); }, nullptr, &out);
  if (s != napi_ok) {
    delete h;
    check(env, s);
  }
  return out;
}

napi_value undefined(napi_env env) {
  napi_value u;
  check(env, napi_get_undefined(env, &u));
  return u;
}

/* create(space, dim, maxElements, M, efConstruction, seed, allowReplaceDeleted) */
napi_value Create(napi_env env, napi_callback_info info) {
  return guarded(env, [&] {
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
  return guarded(env, [&] {
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
  return guarded(env, [&] {
    auto a = args(env, info, 2, 2);
    handleOf(env, a[0])->index->saveIndex(text(env, a[1], "path"));
    return undefined(env);
  });
}

/* addPoints(h, vectors, labels, replaceDeleted): adds (or, for a live label, updates) each row
 * in order, exactly as one addPoint call per row; vectors are read in place. */
napi_value AddPoints(napi_env env, napi_callback_info info) {
  return guarded(env, [&] {
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
  return guarded(env, [&] {
    auto a = args(env, info, 2, 2);
    handleOf(env, a[0])->index->markDelete(count(env, a[1], "label"));
    return undefined(env);
  });
}

napi_value UnmarkDelete(napi_env env, napi_callback_info info) {
  return guarded(env, [&] {
    auto a = args(env, info, 2, 2);
    handleOf(env, a[0])->index->unmarkDelete(count(env, a[1], "label"));
    return undefined(env);
  });
}

napi_value Resize(napi_env env, napi_callback_info info) {
  return guarded(env, [&] {
    auto a = args(env, info, 2, 2);
    handleOf(env, a[0])->index->resizeIndex(count(env, a[1], "maxElements"));
    return undefined(env);
  });
}

napi_value SetEf(napi_env env, napi_callback_info info) {
  return guarded(env, [&] {
    auto a = args(env, info, 2, 2);
    handleOf(env, a[0])->index->setEf(count(env, a[1], "ef"));
    return undefined(env);
  });
}

/* info(h): {count, maxElements, deleted} (count never drops: deletes only mark). */
napi_value Info(napi_env env, napi_callback_info info) {
  return guarded(env, [&] {
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

napi_value Int32Out(napi_env env, const std::vector<int32_t>& xs) {
  napi_value buf, out;
  void* data = nullptr;
  check(env, napi_create_arraybuffer(env, xs.size() * sizeof(int32_t), &data, &buf));
  if (!xs.empty()) std::memcpy(data, xs.data(), xs.size() * sizeof(int32_t));
  check(env, napi_create_typedarray(env, napi_int32_array, xs.size(), buf, 0, &out));
  return out;
}

/* labels(h): every label the index holds, deleted ones included (hnswlib-node's getIdsList). */
napi_value Labels(napi_env env, napi_callback_info info) {
  return guarded(env, [&] {
    auto a = args(env, info, 1, 1);
    Index* idx = handleOf(env, a[0])->index;
    std::vector<int32_t> out;
    out.reserve(idx->label_lookup_.size());
    for (const auto& kv : idx->label_lookup_) out.push_back((int32_t)kv.first);
    return Int32Out(env, out);
  });
}

/* Admits a label whose row passes every clause lo <= column[label] < hi (hnswlib itself skips
 * deleted labels). One virtual call per node the walk would admit, no JS. */
struct ClauseFilter : hnswlib::BaseFilterFunctor {
  const int32_t* cols[MAX_COLUMNS] = {};
  size_t rows = 0;
  const double* clauses = nullptr;
  size_t nclauses = 0;

  bool operator()(hnswlib::labeltype label) override {
    if (label >= rows) return false;
    for (size_t c = 0; c < nclauses; c++) {
      const double* cl = clauses + 3 * c;
      double v = cols[(size_t)cl[0]][label];
      if (v < cl[1] || v >= cl[2]) return false;
    }
    return true;
  }
};

/* search(h, query, k, clauses|null, ...columns): the labels found, best first (Int32Array).
 * clauses: Float64Array triples (column slot, lo, hi), all of which a label must pass; the
 * columns (Int32Array by label) are the ones the slots name, in order. ef is the handle's
 * (setEf); hnswlib searches with max(ef, k). */
napi_value Search(napi_env env, napi_callback_info info) {
  return guarded(env, [&] {
    auto a = args(env, info, 3, 4 + MAX_COLUMNS);
    Handle* h = handleOf(env, a[0]);
    auto [q, qlen] = view<float>(env, a[1], napi_float32_array, "query");
    if (qlen != h->dim) fail("query has " + std::to_string(qlen) + " floats, the index d=" + std::to_string(h->dim));
    size_t k = count(env, a[2], "k");
    if (k > h->index->max_elements_) fail("k=" + std::to_string(k) + " exceeds the index capacity " + std::to_string(h->index->max_elements_));
    ClauseFilter filter;
    bool filtered = false;
    if (a.size() > 3 && !isNull(env, a[3])) {
      auto [clauses, clen] = view<double>(env, a[3], napi_float64_array, "clauses");
      if (clen % 3) fail("clauses must be triples");
      size_t ncols = a.size() - 4;
      filter.rows = SIZE_MAX;
      for (size_t c = 0; c < ncols; c++) {
        auto [col, n] = view<int32_t>(env, a[4 + c], napi_int32_array, "column");
        filter.cols[c] = col;
        filter.rows = std::min(filter.rows, n);
      }
      if (ncols == 0) filter.rows = 0;
      for (size_t c = 0; c < clen / 3; c++) {
        double slot = clauses[3 * c];
        if (!(slot >= 0) || slot >= (double)ncols || slot != (double)(size_t)slot) fail("clause column slot out of range");
      }
      filter.clauses = clauses;
      filter.nclauses = clen / 3;
      filtered = true;
    }
    auto knn = h->index->searchKnn(q, k, filtered ? &filter : nullptr);
    // The queue pops the farthest first: fill from the end.
    napi_value buf, out;
    void* data = nullptr;
    size_t found = knn.size();
    check(env, napi_create_arraybuffer(env, found * sizeof(int32_t), &data, &buf));
    auto* ids = static_cast<int32_t*>(data);
    for (size_t i = found; i-- > 0;) {
      ids[i] = (int32_t)knn.top().second;
      knn.pop();
    }
    check(env, napi_create_typedarray(env, napi_int32_array, found, buf, 0, &out));
    return out;
  });
}

/* timedSearch(h, queries, k, clauses|null, ...columns): each of the n queries (Float32Array,
 * n x d, one after another) searched as search() does, each timed alone by the steady clock
 * around searchKnn and the copy of its labels, so a pass pays no call from JS per query.
 * clauses: null, or n x c triples (query i's at 3c * i), the same c and columns for every query.
 * Returns [labels (Int32Array, each query's best first, one after another), offsets (Int32Array,
 * n + 1), nanoseconds (Float64Array, n)]. */
napi_value TimedSearch(napi_env env, napi_callback_info info) {
  return guarded(env, [&] {
    auto a = args(env, info, 3, 4 + MAX_COLUMNS);
    Handle* h = handleOf(env, a[0]);
    auto [qs, qlen] = view<float>(env, a[1], napi_float32_array, "queries");
    if (h->dim == 0 || qlen % h->dim) fail("queries hold " + std::to_string(qlen) + " floats, not a multiple of the index d=" + std::to_string(h->dim));
    size_t n = qlen / h->dim;
    size_t k = count(env, a[2], "k");
    if (k > h->index->max_elements_) fail("k=" + std::to_string(k) + " exceeds the index capacity " + std::to_string(h->index->max_elements_));
    ClauseFilter filter;
    const double* clauses = nullptr;
    size_t per = 0;
    if (a.size() > 3 && !isNull(env, a[3])) {
      auto [cl, clen] = view<double>(env, a[3], napi_float64_array, "clauses");
      if (n == 0 || clen % (3 * n)) fail("clauses must be the same number of triples for every query");
      per = clen / (3 * n);
      size_t ncols = a.size() - 4;
      filter.rows = ncols == 0 ? 0 : SIZE_MAX;
      for (size_t c = 0; c < ncols; c++) {
        auto [col, rows] = view<int32_t>(env, a[4 + c], napi_int32_array, "column");
        filter.cols[c] = col;
        filter.rows = std::min(filter.rows, rows);
      }
      for (size_t c = 0; c < clen / 3; c++) {
        double slot = cl[3 * c];
        if (!(slot >= 0) || slot >= (double)ncols || slot != (double)(size_t)slot) fail("clause column slot out of range");
      }
      clauses = cl;
      filter.nclauses = per;
    }
    std::vector<int32_t> labels;
    labels.reserve(n * k);
    std::vector<int32_t> offsets(n + 1, 0);
    std::vector<double> ns(n, 0);
    for (size_t i = 0; i < n; i++) {
      if (clauses) filter.clauses = clauses + 3 * per * i;
      auto t0 = std::chrono::steady_clock::now();
      auto knn = h->index->searchKnn(qs + i * h->dim, k, clauses ? &filter : nullptr);
      size_t found = knn.size();
      labels.resize(labels.size() + found);
      int32_t* out = labels.data() + labels.size() - found;
      for (size_t j = found; j-- > 0;) {
        out[j] = (int32_t)knn.top().second;
        knn.pop();
      }
      auto t1 = std::chrono::steady_clock::now();
      ns[i] = (double)std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
      offsets[i + 1] = (int32_t)labels.size();
    }
    napi_value result, v, buf;
    check(env, napi_create_array_with_length(env, 3, &result));
    check(env, napi_set_element(env, result, 0, Int32Out(env, labels)));
    check(env, napi_set_element(env, result, 1, Int32Out(env, offsets)));
    void* data = nullptr;
    check(env, napi_create_arraybuffer(env, n * sizeof(double), &data, &buf));
    if (n > 0) std::memcpy(data, ns.data(), n * sizeof(double));
    check(env, napi_create_typedarray(env, napi_float64_array, n, buf, 0, &v));
    check(env, napi_set_element(env, result, 2, v));
    return result;
  });
}

napi_value Free(napi_env env, napi_callback_info info) {
  return guarded(env, [&] {
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
