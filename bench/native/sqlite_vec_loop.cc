// A plain C++ loop over SQLite with the sqlite-vec extension, the reference for vecbench's
// sqlite-vec participant that runs the participant's own SQLite: compiled with the amalgamation
// better-sqlite3 bundles (node_modules/better-sqlite3/deps/sqlite3, with the compile-time options
// of its defines.gypi; bench/overhead/sqlite-vec.ts builds it), where sqlite_vec_loop.py runs
// Debian's. It loads the very vec0.so the participant loads, opens a copy of the database file the
// participant wrote, sets the page cache the adapter sets, and steps the adapter's unfiltered
// k-NN statement (vec0's exact scan; there is no knob, so EF is only echoed), prepared once and
// bound per query, one query at a time on one thread.
//
//   sqlite_vec_loop VEC0_SO DB_FILE CACHE_MIB DIR NQ D K
//
// DIR holds queries.f32 (NQ x D) and gt.i32 (NQ x K), raw little-endian.
#include <iostream>
#include <string>

#include "loop_common.h"
#include "sqlite3.h"

using namespace bench_loop;

namespace {

// The adapter's statement for a query without a filter (its table "vectors", column "embedding").
constexpr const char* KNN_SQL = "SELECT rowid FROM vectors WHERE embedding MATCH ? AND k = ? ORDER BY distance";

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  std::cerr << "sqlite_vec_loop: " << what << ": " << (db ? sqlite3_errmsg(db) : "no database") << "\n";
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::cerr << "usage: sqlite_vec_loop VEC0_SO DB_FILE CACHE_MIB DIR NQ D K\n";
    return 2;
  }
  const std::string vec0 = argv[1], file = argv[2], dir = argv[4];
  const long cacheMib = std::stol(argv[3]);
  const size_t nq = std::stoul(argv[5]), d = std::stoul(argv[6]), k = std::stoul(argv[7]);

  const auto t0 = std::chrono::steady_clock::now();
  const auto queries = readFile(dir + "/queries.f32", nq * d * 4);
  const auto gtBytes = readFile(dir + "/gt.i32", nq * k * 4);
  const auto* q = reinterpret_cast<const float*>(queries.data());
  const auto* gt = reinterpret_cast<const int32_t*>(gtBytes.data());

  sqlite3* db = nullptr;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) fail(db, "open " + file);
  sqlite3_enable_load_extension(db, 1);
  char* err = nullptr;
  if (sqlite3_load_extension(db, vec0.c_str(), nullptr, &err) != SQLITE_OK) {
    std::cerr << "sqlite_vec_loop: load " << vec0 << ": " << (err ? err : "?") << "\n";
    return 1;
  }
  sqlite3_enable_load_extension(db, 0);
  const std::string cache = "PRAGMA cache_size = -" + std::to_string(cacheMib * 1024);
  if (sqlite3_exec(db, cache.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) fail(db, cache);
  std::string vecVersion = "?";
  sqlite3_stmt* v = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT vec_version()", -1, &v, nullptr) == SQLITE_OK && sqlite3_step(v) == SQLITE_ROW)
    vecVersion = reinterpret_cast<const char*>(sqlite3_column_text(v, 0));
  sqlite3_finalize(v);
  sqlite3_stmt* knn = nullptr;
  if (sqlite3_prepare_v2(db, KNN_SQL, -1, &knn, nullptr) != SQLITE_OK) fail(db, "prepare");
  const double loadS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "{\"ready\":true,\"build_s\":" << loadS << ",\"version\":\"sqlite-vec " << vecVersion << ", SQLite " << sqlite3_libversion()
            << " (better-sqlite3's amalgamation)\"}" << std::endl;

  serveRequests(
      nq, k, gt, [](size_t) {},
      [&](size_t i, int64_t* out) {
        sqlite3_reset(knn);
        sqlite3_bind_blob(knn, 1, q + i * d, static_cast<int>(d * 4), SQLITE_STATIC);
        sqlite3_bind_int64(knn, 2, static_cast<sqlite3_int64>(k));
        size_t j = 0;
        int rc;
        while ((rc = sqlite3_step(knn)) == SQLITE_ROW)
          if (j < k) out[j++] = sqlite3_column_int64(knn, 0);
        if (rc != SQLITE_DONE) fail(db, "step");
      });
  sqlite3_finalize(knn);
  sqlite3_close(db);
  return 0;
}
