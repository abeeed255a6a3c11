// What the native loops of bench/native (hnswlib_loop.cc, usearch_loop.cc) share: reading the
// raw files bench/harness-overhead.ts writes, the searching thread's CPU clock, and the one JSON
// line each "EF PASSES" request is answered with.
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
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

/**
 * Answers each stdin line "EF PASSES": setEf(EF), then PASSES timed passes over the nq queries,
 * one search at a time (searchOne(i, out) writes query i's ids into out, k of them at most), then
 * one JSON line (answer). Runs until stdin closes.
 */
template <typename SetEf, typename SearchOne>
void serveRequests(size_t nq, size_t k, const int32_t* gt, SetEf&& setEf, SearchOne&& searchOne) {
  std::vector<int64_t> found(nq * k, -1);
  std::vector<double> lat(nq);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    size_t ef = 0, passes = 0;
    if (!(in >> ef >> passes)) continue;
    setEf(ef);
    std::vector<double> qps, cpuQps, meanMs;
    for (size_t p = 0; p < passes; p++) {
      const double cpu0 = threadCpuSeconds();
      const auto start = std::chrono::steady_clock::now();
      for (size_t i = 0; i < nq; i++) {
        const auto t = std::chrono::steady_clock::now();
        searchOne(i, found.data() + i * k);
        lat[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
      }
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      cpuQps.push_back(static_cast<double>(nq) / std::max(threadCpuSeconds() - cpu0, 1e-9));
      qps.push_back(static_cast<double>(nq) / wall);
      double sum = 0;
      for (double x : lat) sum += x;
      meanMs.push_back(sum / static_cast<double>(nq) * 1000);
    }
    answer(ef, qps, cpuQps, meanMs, recall(found, gt, nq, k));
    std::fill(found.begin(), found.end(), -1);
  }
}

}  // namespace bench_loop
