// What the native loops of bench/native (hnswlib_loop.cc, usearch_loop.cc) share: reading the
// raw files bench/harness-overhead.ts writes, the searching thread's CPU clock, and the one JSON
// line each "EF PASSES" request is answered with.
#pragma once

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

namespace bench_loop {

/** `bytes` bytes of `path`, or exit 2 naming the file. */
inline std::vector<char> readFile(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> out(bytes);
  if (!in.read(out.data(), static_cast<std::streamsize>(bytes))) {
    std::cerr << "native loop: cannot read " << bytes << " bytes from " << path << "\n";
    std::exit(2);
  }
  return out;
}

/** Seconds this thread has run on a CPU. */
inline double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

inline std::string list(const std::vector<double>& xs) {
  std::ostringstream o;
  o.precision(10);
  o << "[";
  for (size_t i = 0; i < xs.size(); i++) o << (i ? "," : "") << xs[i];
  o << "]";
  return o.str();
}

/** Recall@k of `found` (nq x k ids, -1 where none) against `gt` (nq x k exact ids). */
inline double recall(const std::vector<int64_t>& found, const int32_t* gt, size_t nq, size_t k) {
  size_t hits = 0;
  for (size_t i = 0; i < nq; i++) {
    std::unordered_set<int64_t> want(gt + i * k, gt + (i + 1) * k);
    for (size_t j = 0; j < k; j++) hits += want.count(found[i * k + j]);
  }
  return static_cast<double>(hits) / static_cast<double>(nq * k);
}

/** The answer to one "EF PASSES" request. */
inline void answer(size_t ef, const std::vector<double>& qps, const std::vector<double>& cpuQps, const std::vector<double>& meanMs, double recallAtK) {
  std::cout << "{\"ef\":" << ef << ",\"qps\":" << list(qps) << ",\"cpu_qps\":" << list(cpuQps) << ",\"mean_ms\":" << list(meanMs)
            << ",\"recall\":" << recallAtK << "}" << std::endl;
}

}  // namespace bench_loop
