// A plain C++ loop over faiss, the engine's own language, for vecbench's faiss participant
// (bench/harness-overhead.ts): linked against the same Debian libfaiss as the participant's
// addon (participants/faiss/native/binding.gyp), it reads the very index file the participant
// wrote after its build (write_index: the same graph) and searches one query at a time on one
// thread (OpenMP at 1), with efSearch set as the addon sets it (in the parameters and on the
// index, max(ef, k)), timed with steady_clock.
//
//   faiss_loop INDEX_FILE DIR NQ D K
//
// DIR holds queries.f32 (NQ x D) and gt.i32 (NQ x K, the exact ids), raw little-endian. Each stdin
// line "EF PASSES" runs PASSES timed passes at that efSearch and prints one JSON line, as the
// other loops of bench/native do (loop_common.h).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <faiss/IndexHNSW.h>
#include <faiss/index_io.h>

#include "loop_common.h"

using namespace bench_loop;

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: faiss_loop INDEX_FILE DIR NQ D K\n";
    return 2;
  }
  const std::string file = argv[1], dir = argv[2];
  const size_t nq = std::stoul(argv[3]), d = std::stoul(argv[4]), k = std::stoul(argv[5]);
  const auto queries = readFile(dir + "/queries.f32", nq * d * 4);
  const auto gtBytes = readFile(dir + "/gt.i32", nq * k * 4);
  const auto* q = reinterpret_cast<const float*>(queries.data());
  const auto* gt = reinterpret_cast<const int32_t*>(gtBytes.data());

  omp_set_num_threads(1);
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<faiss::Index> loaded;
  try {
    loaded.reset(faiss::read_index(file.c_str()));
  } catch (const std::exception& e) {
    std::cerr << "faiss_loop: cannot read " << file << ": " << e.what() << "\n";
    return 2;
  }
  auto* index = dynamic_cast<faiss::IndexHNSW*>(loaded.get());
  if (index == nullptr || static_cast<size_t>(index->d) != d) {
    std::cerr << "faiss_loop: " << file << " is not an HNSW index of d=" << d << " (run the faiss participant with type hnsw)\n";
    return 2;
  }
  const double loadS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "{\"ready\":true,\"build_s\":" << loadS << ",\"version\":\"libfaiss " << FAISS_VERSION_MAJOR << "." << FAISS_VERSION_MINOR << "."
            << FAISS_VERSION_PATCH << "\"}" << std::endl;

  faiss::SearchParametersHNSW params;
  std::vector<float> dist(k);
  std::vector<faiss::Index::idx_t> ids(k);
  serveRequests(
      nq, k, gt,
      [&](size_t ef) {
        // As the participant's addon: in the parameters and on the index (1.7.3 reads both).
        params.efSearch = static_cast<int>(std::max(ef, k));
        index->hnsw.efSearch = params.efSearch;
      },
      [&](size_t i, int64_t* out) {
        index->search(1, q + i * d, static_cast<faiss::Index::idx_t>(k), dist.data(), ids.data(), &params);
        for (size_t j = 0; j < k; j++) out[j] = ids[j];
      });
  return 0;
}
