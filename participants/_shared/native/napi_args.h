/* What vecbench's own N-API addons over graph libraries share (hnswlib-direct, usearch-direct):
 * reading a call's arguments (typed arrays in place, never element by element), turning a
 * library's or an argument's error into one JS exception naming the addon, handing labels and
 * timings back as typed arrays, and the attribute filter evaluated in C++ during a graph walk.
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

/* Runs a binding body; the arguments' errors (Failure) and the library's (std::exception) become
 * one JS exception each, prefixed with the addon's and the library's name. */
template <typename F>
napi_value guarded(napi_env env, const char* addon, const char* library, F body) {
  try {
    return body();
  } catch (const Failure& f) {
    napi_throw_error(env, nullptr, (std::string(addon) + ": " + f.message).c_str());
  } catch (const std::exception& e) {
    napi_throw_error(env, nullptr, (std::string(library) + ": " + e.what()).c_str());
  }
  return nullptr;
}

/* The call's arguments: at least `want`, at most `most` (the rest come back null). */
inline std::vector<napi_value> args(napi_env env, napi_callback_info info, size_t want, size_t most) {
  std::vector<napi_value> a(most, nullptr);
  size_t got = most;
  check(env, napi_get_cb_info(env, info, &got, a.data(), nullptr, nullptr));
  if (got < want) fail("expected at least " + std::to_string(want) + " arguments, got " + std::to_string(got));
  a.resize(std::min(got, most));
  return a;
}

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

/* An owned pointer as a JS external that deletes it when collected. */
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

/* search(h, query, k, clauses|null, ...columns) and timedSearch(h, queries, k, clauses|null,
 * ...columns) of an addon over a graph library, from what is the addon's own: `prepare(handle,
 * k)` takes the handle and the asked k and returns the index's d and the k to search for
 * (checking both), and `one(query, k, filter, out)` appends one query's ids, best first (filter
 * null without clauses). search returns the ids (Int32Array); timedSearch, for n queries (n x d,
 * one after another; the clauses n x c triples, query i's at 3c * i), timedOut's answer, each
 * query timed alone in C++ so that a pass pays no call from JS per query. */
template <typename Prepare, typename One>
napi_value searchCall(napi_env env, napi_callback_info info, bool timed, Prepare prepare, One one) {
  auto a = args(env, info, 3, 4 + MAX_COLUMNS);
  auto [dim, k] = prepare(a[0], a[2]);
  auto [qs, qlen] = view<float>(env, a[1], napi_float32_array, timed ? "queries" : "query");
  if (!timed && qlen != dim) fail("query has " + std::to_string(qlen) + " floats, the index d=" + std::to_string(dim));
  if (timed && (dim == 0 || qlen % dim)) fail("queries hold " + std::to_string(qlen) + " floats, not a multiple of the index d=" + std::to_string(dim));
  size_t n = timed ? qlen / dim : 1;
  Clauses filter;
  const double* all;
  size_t per;
  bool filtered = readClauses(env, a, 3, n, filter, all, per);
  if (!timed) {
    std::vector<int32_t> out;
    out.reserve(k);
    one(qs, k, filtered ? &filter : nullptr, out);
    return int32Out(env, out);
  }
  return timedPass(env, n, n * k, [&](size_t i, std::vector<int32_t>& out) {
    if (filtered) filter.triples = all + 3 * per * i;
    one(qs + i * dim, k, filtered ? &filter : nullptr, out);
  });
}

}  // namespace vecbench_napi
