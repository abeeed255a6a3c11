/* What vecbench's own N-API addons share (faiss, hnswlib-direct, usearch-direct): the frame of a
 * binding (its arguments read, typed arrays in place, never element by element; a library's or an
 * argument's error turned into one JS exception naming the addon), the index handle as a JS
 * external, the exports table, handing labels and timings back as typed arrays, and, for the
 * addons over graph libraries (hnswlib-direct, usearch-direct), the attribute filter evaluated in
 * C++ during a graph walk and their whole search and timed search.
 *
 * The filter: (column slot, lo, hi) triples as a Float64Array, every one of which a row must pass
 * (lo <= column[row] < hi, exact in float64 for any int32), and the Int32Array columns the slots
 * name, in order, indexed by row id. A timed pass hands n queries' triples one query after
 * another, the same number and the same columns for each. */
#pragma once

#include <node_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace vecbench_napi {

/** Columns a filter may read at once (vecbench has ten attributes). */
constexpr size_t MAX_COLUMNS = 16;

struct Failure {
  std::string message;
};

[[noreturn]] inline void fail(const std::string& m) { throw Failure{m}; }

inline void check(napi_env env, napi_status s) {
  if (s != napi_ok) {
    const napi_extended_error_info* info = nullptr;
    napi_get_last_error_info(env, &info);
    fail(info && info->error_message ? info->error_message : "N-API call failed");
  }
}

using Args = std::vector<napi_value>;

/* The call's arguments: at least `want`, at most `most` (the rest come back null). */
inline Args args(napi_env env, napi_callback_info info, size_t want, size_t most) {
  Args a(most, nullptr);
  size_t got = most;
  check(env, napi_get_cb_info(env, info, &got, a.data(), nullptr, nullptr));
  if (got < want) fail("expected at least " + std::to_string(want) + " arguments, got " + std::to_string(got));
  a.resize(std::min(got, most));
  return a;
}

/* The H a handle holds. `named`: any other value fails as "not an index handle" (the -direct
 * addons' a[0]); otherwise with N-API's own message (free(), and every call of faiss's addon). */
template <typename H>
H* external(napi_env env, napi_value v, bool named = false) {
  void* p = nullptr;
  napi_status s = napi_get_value_external(env, v, &p);
  if (named && (s != napi_ok || p == nullptr)) fail("not an index handle");
  check(env, s);
  return static_cast<H*>(p);
}

/* A handle whose index free() has not released (H::index empty after it). */
template <typename H>
H* openHandle(napi_env env, napi_value v, bool named) {
  H* h = external<H>(env, v, named);
  if (!h->index) fail("the index was freed");
  return h;
}

/* An addon's names in the errors it throws: its own before an argument's error (Failure), its
 * library's before the library's (std::exception); and whether a value that is not a handle
 * fails as "not an index handle" (openHandle). Every binding runs in `call`. */
struct Addon {
  const char* name;
  const char* library;
  bool namedHandles = true;

  /* Runs a binding body; its errors become one JS exception each, prefixed with a name. */
  template <typename F>
  napi_value guard(napi_env env, F body) const {
    try {
      return body();
    } catch (const Failure& f) {
      napi_throw_error(env, nullptr, (std::string(name) + ": " + f.message).c_str());
    } catch (const std::exception& e) {
      napi_throw_error(env, nullptr, (std::string(library) + ": " + e.what()).c_str());
    }
    return nullptr;
  }

  /* A binding of `want` to `most` arguments (args): body(a) under guard. */
  template <typename F>
  napi_value call(napi_env env, napi_callback_info info, size_t want, size_t most, F body) const {
    return guard(env, [&]() -> napi_value { return body(args(env, info, want, most)); });
  }

  /* A binding whose a[0] is an open handle H (read first): body(h, a) under call. */
  template <typename H, typename F>
  napi_value onHandle(napi_env env, napi_callback_info info, size_t want, size_t most, F body) const {
    return call(env, info, want, most, [&](const Args& a) { return body(openHandle<H>(env, a[0], namedHandles), a); });
  }
};

inline double number(napi_env env, napi_value v, const char* what) {
  double x;
  if (napi_get_value_double(env, v, &x) != napi_ok) fail(std::string(what) + " must be a number");
  return x;
}

/* A non-negative integer argument (sizes, labels, counts). */
inline size_t count(napi_env env, napi_value v, const char* what) {
  double x = number(env, v, what);
  if (!(x >= 0) || x > 9007199254740991.0 || x != (double)(size_t)x) fail(std::string(what) + " must be a non-negative integer");
  return (size_t)x;
}

inline bool flag(napi_env env, napi_value v, const char* what) {
  bool b = false;
  if (napi_get_value_bool(env, v, &b) != napi_ok) fail(std::string(what) + " must be a boolean");
  return b;
}

inline std::string text(napi_env env, napi_value v, const char* what) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, nullptr, 0, &len) != napi_ok) fail(std::string(what) + " must be a string");
  std::string s(len, '\0');
  check(env, napi_get_value_string_utf8(env, v, s.data(), len + 1, &len));
  return s;
}

inline bool isNull(napi_env env, napi_value v) {
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

inline napi_value undefined(napi_env env) {
  napi_value u;
  check(env, napi_get_undefined(env, &u));
  return u;
}

inline napi_value numberOut(napi_env env, double x) {
  napi_value v;
  check(env, napi_create_double(env, x, &v));
  return v;
}

/* A fresh JS object filled field by field (an info() answer). */
struct ObjectOut {
  napi_env env;
  napi_value object;

  explicit ObjectOut(napi_env e) : env(e) { check(env, napi_create_object(env, &object)); }
  ObjectOut& set(const char* key, napi_value v) {
    check(env, napi_set_named_property(env, object, key, v));
    return *this;
  }
  ObjectOut& number(const char* key, double x) { return set(key, numberOut(env, x)); }
  ObjectOut& boolean(const char* key, bool b) {
    napi_value v;
    check(env, napi_get_boolean(env, b, &v));
    return set(key, v);
  }
  ObjectOut& string(const char* key, const char* s) {
    napi_value v;
    check(env, napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v));
    return set(key, v);
  }
};

/* The index handle: an owned H as a JS external that deletes it when collected. */
template <typename H>
napi_value wrap(napi_env env, H* h) {
  napi_value out;
  napi_status s = napi_create_external(
      env, h, [](napi_env, void* p, void*) { delete static_cast<H*>(p); }, nullptr, &out);
  if (s != napi_ok) {
    delete h;
    check(env, s);
  }
  return out;
}

/* A handle still being made is a unique_ptr, so that a failure on the way frees it. */
template <typename H>
napi_value wrap(napi_env env, std::unique_ptr<H> h) {
  return wrap(env, h.release());
}

/* free(h): the index goes at once (H::release), the handle itself when the external is
 * collected, so that a later call on it fails as freed instead of reading freed memory. */
template <typename H, const Addon& A>
napi_value freeBinding(napi_env env, napi_callback_info info) {
  return A.call(env, info, 1, 1, [&](const Args& a) {
    external<H>(env, a[0])->release();
    return undefined(env);
  });
}

/* Init's exports: each name bound to its function. */
inline napi_value defineFunctions(napi_env env, napi_value exports, std::initializer_list<std::pair<const char*, napi_callback>> fns) {
  std::vector<napi_property_descriptor> props;
  for (const auto& [name, fn] : fns) props.push_back({name, nullptr, fn, nullptr, nullptr, nullptr, napi_default, nullptr});
  napi_define_properties(env, exports, props.size(), props.data());
  return exports;
}

/* A fresh typed array of `n` elements copied from `xs`. */
template <typename T>
napi_value typedOut(napi_env env, napi_typedarray_type type, const T* xs, size_t n) {
  napi_value buf, out;
  void* data = nullptr;
  check(env, napi_create_arraybuffer(env, n * sizeof(T), &data, &buf));
  if (n > 0) std::memcpy(data, xs, n * sizeof(T));
  check(env, napi_create_typedarray(env, type, n, buf, 0, &out));
  return out;
}

inline napi_value int32Out(napi_env env, const std::vector<int32_t>& xs) { return typedOut(env, napi_int32_array, xs.data(), xs.size()); }

/* A timed pass's answer: [labels (each query's, one after another), offsets (n + 1), nanoseconds (n)]. */
inline napi_value timedOut(napi_env env, const std::vector<int32_t>& labels, const std::vector<int32_t>& offsets, const std::vector<double>& ns) {
  napi_value result;
  check(env, napi_create_array_with_length(env, 3, &result));
  check(env, napi_set_element(env, result, 0, int32Out(env, labels)));
  check(env, napi_set_element(env, result, 1, int32Out(env, offsets)));
  check(env, napi_set_element(env, result, 2, typedOut(env, napi_float64_array, ns.data(), ns.size())));
  return result;
}

/* A timed pass: `search(i, out)` appends query i's ids, best first, for each of the n queries,
 * each timed alone by the steady clock (whatever the search does to set up, e.g. pointing the
 * filter at the query's triples, is timed with it). Returns timedOut's answer. */
template <typename F>
napi_value timedPass(napi_env env, size_t n, size_t expected, F search) {
  std::vector<int32_t> ids, offsets(n + 1, 0);
  std::vector<double> ns(n, 0);
  ids.reserve(expected);
  for (size_t i = 0; i < n; i++) {
    auto t0 = std::chrono::steady_clock::now();
    search(i, ids);
    auto t1 = std::chrono::steady_clock::now();
    ns[i] = (double)std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    offsets[i + 1] = (int32_t)ids.size();
  }
  return timedOut(env, ids, offsets, ns);
}

/* The attribute filter of one search: admits a row id that passes every clause. */
struct Clauses {
  const int32_t* cols[MAX_COLUMNS] = {};
  size_t rows = 0;
  const double* triples = nullptr;
  size_t n = 0;

  bool admits(uint64_t row) const {
    if (row >= rows) return false;
    for (size_t c = 0; c < n; c++) {
      const double* cl = triples + 3 * c;
      double v = cols[(size_t)cl[0]][row];
      if (v < cl[1] || v >= cl[2]) return false;
    }
    return true;
  }
};

/* The filter arguments a[at] (triples or null) and a[at + 1..] (columns) of a call made for
 * `queries` queries; `per` is set to the triples of each (0 without a filter). Returns whether
 * there is a filter; the caller points `triples` at each query's before its search. */
inline bool readClauses(napi_env env, const std::vector<napi_value>& a, size_t at, size_t queries, Clauses& out, const double*& all, size_t& per) {
  all = nullptr;
  per = 0;
  if (a.size() <= at || isNull(env, a[at])) return false;
  auto [cl, clen] = view<double>(env, a[at], napi_float64_array, "clauses");
  if (queries == 0 || clen % (3 * queries)) fail("clauses must be the same number of triples for every query");
  per = clen / (3 * queries);
  size_t ncols = a.size() - at - 1;
  if (ncols > MAX_COLUMNS) fail("at most " + std::to_string(MAX_COLUMNS) + " columns");
  out.rows = ncols == 0 ? 0 : SIZE_MAX;
  for (size_t c = 0; c < ncols; c++) {
    auto [col, rows] = view<int32_t>(env, a[at + 1 + c], napi_int32_array, "column");
    out.cols[c] = col;
    out.rows = std::min(out.rows, rows);
  }
  for (size_t c = 0; c < clen / 3; c++) {
    double slot = cl[3 * c];
    if (!(slot >= 0) || slot >= (double)ncols || slot != (double)(size_t)slot) fail("clause column slot out of range");
  }
  all = cl;
  out.triples = cl;
  out.n = per;
  return true;
}

/* The query (`timed` false: d floats) or queries (n x d, one after another) of a search over an
 * index of d: where they start, and n. */
inline std::pair<const float*, size_t> queriesOf(napi_env env, napi_value v, size_t dim, bool timed) {
  auto [qs, qlen] = view<float>(env, v, napi_float32_array, timed ? "queries" : "query");
  if (!timed && qlen != dim) fail("query has " + std::to_string(qlen) + " floats, the index d=" + std::to_string(dim));
  if (timed && (dim == 0 || qlen % dim)) fail("queries hold " + std::to_string(qlen) + " floats, not a multiple of the index d=" + std::to_string(dim));
  return {qs, timed ? qlen / dim : 1};
}

/* What a search returns (`timed` false: the one query's ids, Int32Array) or a timed pass over n
 * queries (timedPass's answer); `one(i, out)` appends query i's ids, best first, k at the most. */
template <typename One>
napi_value searchAnswer(napi_env env, bool timed, size_t n, size_t k, One one) {
  if (timed) return timedPass(env, n, n * k, one);
  std::vector<int32_t> out;
  out.reserve(k);
  one(0, out);
  return int32Out(env, out);
}

/* search(h, query, k, clauses|null, ...columns) and timedSearch(h, queries, k, clauses|null,
 * ...columns) of an addon A over a graph library, from what is its own handle H's: `dim` (the
 * index's d), `checkedK(k)` (the k to search for, given the asked one, or fail) and
 * `searchInto(query, k, filter, out)` (appends one query's ids, best first; filter null without
 * clauses). search returns the ids (Int32Array); timedSearch, for n queries (the clauses n x c
 * triples, query i's at 3c * i), timedOut's answer, each query timed alone in C++ so that a pass
 * pays no call from JS per query. */
template <typename H, const Addon& A, bool timed>
napi_value searchBinding(napi_env env, napi_callback_info info) {
  return A.call(env, info, 3, 4 + MAX_COLUMNS, [&](const Args& a) {
    H* h = openHandle<H>(env, a[0], A.namedHandles);
    size_t k = h->checkedK(count(env, a[2], "k"));
    auto [qs, n] = queriesOf(env, a[1], h->dim, timed);
    Clauses filter;
    const double* all;
    size_t per;
    bool filtered = readClauses(env, a, 3, n, filter, all, per);
    return searchAnswer(env, timed, n, k, [&](size_t i, std::vector<int32_t>& out) {
      if (filtered) filter.triples = all + 3 * per * i;
      h->searchInto(qs + i * h->dim, k, filtered ? &filter : nullptr, out);
    });
  });
}

}  // namespace vecbench_napi
