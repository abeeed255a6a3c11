// A plain C++ loop over USearch, the engine's own language, for vecbench's usearch participant
// (bench/harness-overhead.ts): compiled against the headers the npm package ships
// (node_modules/usearch/include) with the defines its binding.gyp gives the binding (NumKong
// kernels, dynamic dispatch), so both sides run the same library version and the same distance
// code. It loads the very index file the participant saved after its build (the same graph), and
// searches one query at a time on one thread, timed with steady_clock.
//
//   usearch_loop INDEX_FILE DIR NQ D K
//
// DIR holds queries.f32 (NQ x D) and gt.i32 (NQ x K, the exact ids), raw little-endian. Each stdin
// line "EF PASSES" sets expansion_search to EF and runs PASSES timed passes over the queries, then
// prints one JSON line (per-pass QPS by wall time and by this thread's CPU time, mean latency,
// recall@K), as hnswlib_loop.cc does.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <usearch/index_dense.hpp>

#include "loop_common.h"

using namespace unum::usearch;
using namespace bench_loop;

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: usearch_loop INDEX_FILE DIR NQ D K\n";
    return 2;
  }
  const std::string file = argv[1], dir = argv[2];
  const size_t nq = std::stoul(argv[3]), d = std::stoul(argv[4]), k = std::stoul(argv[5]);
  const auto queries = readFile(dir + "/queries.f32", nq * d * 4);
  const auto gtBytes = readFile(dir + "/gt.i32", nq * k * 4);
  const auto* q = reinterpret_cast<const float*>(queries.data());
  const auto* gt = reinterpret_cast<const int32_t*>(gtBytes.data());

  const auto t0 = std::chrono::steady_clock::now();
  auto made = index_dense_t::make(file.c_str());
  if (!made) {
    std::cerr << "usearch_loop: cannot load " << file << ": " << made.error.release() << "\n";
    return 2;
  }
  index_dense_t index = std::move(made.index);
  if (index.dimensions() != d) {
    std::cerr << "usearch_loop: " << file << " holds d=" << index.dimensions() << " vectors, the queries are d=" << d << "\n";
    return 2;
  }
  // One search context, as the binding reserves for its calls.
  index.reserve(index_limits_t(index.size(), 1));
  const double loadS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "{\"ready\":true,\"build_s\":" << loadS << ",\"version\":\"" << USEARCH_VERSION_MAJOR << "." << USEARCH_VERSION_MINOR << "."
            << USEARCH_VERSION_PATCH << "\"}" << std::endl;

  std::vector<default_key_t> keys(k);
  serveRequests(
      nq, k, gt, [&](size_t ef) { index.change_expansion_search(ef); },
      [&](size_t i, int64_t* out) {
        auto result = index.search(q + i * d, k);
        const size_t got = result.dump_to(keys.data());
        for (size_t j = 0; j < got; j++) out[j] = static_cast<int64_t>(keys[j]);
      });
  return 0;
}
