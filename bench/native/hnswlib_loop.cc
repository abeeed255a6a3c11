// A plain C++ loop over hnswlib, the engine's own language, for vecbench's hnswlib participant
// (bench/harness-overhead.ts): compiled against the very headers hnswlib-node bundles
// (node_modules/hnswlib-node/src/hnswlib), so both sides run the same library version, with the
// optimisation node-gyp gives the binding (-O3). The same index (vectors, M, ef_construction,
// seed, space, points added one at a time in label order), one thread, searchKnn one query at a
// time timed with steady_clock.
//
//   hnswlib_loop DIR N D NQ K M EF_CONSTRUCTION SEED SPACE
//
// DIR holds base.f32 (N x D), queries.f32 (NQ x D) and gt.i32 (NQ x K, the exact ids), raw
// little-endian. The index is built once; then each stdin line "EF PASSES" runs PASSES timed
// passes over the queries and prints one JSON line (per-pass QPS by wall time and by this
// thread's CPU time, mean latency, recall@K), as hnswlib_loop.py does.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "hnswlib.h"
#include "loop_common.h"

using namespace bench_loop;

int main(int argc, char** argv) {
  if (argc != 10) {
    std::cerr << "usage: hnswlib_loop DIR N D NQ K M EF_CONSTRUCTION SEED SPACE\n";
    return 2;
  }
  const std::string dir = argv[1];
  const size_t n = std::stoul(argv[2]), d = std::stoul(argv[3]), nq = std::stoul(argv[4]), k = std::stoul(argv[5]);
  const size_t m = std::stoul(argv[6]), efc = std::stoul(argv[7]), seed = std::stoul(argv[8]);
  const std::string space = argv[9];
  const auto base = readFile(dir + "/base.f32", n * d * 4);
  const auto queries = readFile(dir + "/queries.f32", nq * d * 4);
  const auto gtBytes = readFile(dir + "/gt.i32", nq * k * 4);
  const auto* b = reinterpret_cast<const float*>(base.data());
  const auto* q = reinterpret_cast<const float*>(queries.data());
  const auto* gt = reinterpret_cast<const int32_t*>(gtBytes.data());

  std::unique_ptr<hnswlib::SpaceInterface<float>> metric;
  if (space == "l2") metric = std::make_unique<hnswlib::L2Space>(d);
  else metric = std::make_unique<hnswlib::InnerProductSpace>(d);
  hnswlib::HierarchicalNSW<float> index(metric.get(), n, m, efc, seed);
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < n; i++) index.addPoint(b + i * d, static_cast<hnswlib::labeltype>(i));
  const double buildS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "{\"ready\":true,\"build_s\":" << buildS << ",\"version\":\"hnswlib-node's bundled headers\"}" << std::endl;

  serveRequests(
      nq, k, gt, [&](size_t ef) { index.setEf(ef); },
      [&](size_t i, int64_t* out) {
        auto top = index.searchKnn(q + i * d, k);
        // Best last in the queue; the order does not matter for recall.
        for (size_t j = 0; !top.empty(); j++, top.pop()) out[j] = static_cast<int64_t>(top.top().second);
      });
  return 0;
}
