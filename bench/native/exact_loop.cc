// A plain C++ loop over OpenBLAS for vecbench's exact participant (bench/harness-overhead.ts):
// the participant's engine is its own brute force (native/topk.c, the ground truth's code)
// over Debian's OpenBLAS, so this loop is what a user of OpenBLAS would write for the same
// search: one cblas_sgemv of the base against the query, then a partial sort for the top k.
// It runs the search as the participant does: the rows split into THREADS contiguous shares
// (the participant passes availableParallelism()), THREADS workers per query taking shares
// from a shared counter until none is left, the calling thread one of them and the others
// started per query (topk.c's run_workers and task counter), OpenBLAS held to one thread
// (topk.c sets openblas_set_num_threads(1): its workers are the parallelism); the shares'
// top k are then merged. A helper that starts late leaves its share to the calling thread,
// in both, so the calling thread's CPU time counts alike on both sides.
//
//   exact_loop DIR N D NQ K METRIC THREADS
//
// DIR holds base.f32 (N x D), queries.f32 (NQ x D) and gt.i32 (NQ x K), raw little-endian.
// METRIC: ip or cosine (score = dot; the prepared cosine sets are unit length, as for topk.c),
// l2 (score = 2 q.b - |b|^2, the same order as the distance). Each stdin line "KNOB PASSES"
// (the knob is ignored: a scan has none) runs PASSES timed passes and prints one JSON line.
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "loop_common.h"

using namespace bench_loop;

namespace {

struct Scored {
  float score;
  int32_t id;
};

// Higher score first; equal scores by smaller id, as topk.c breaks ties.
bool closer(const Scored& a, const Scored& b) { return a.score > b.score || (a.score == b.score && a.id < b.id); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::cerr << "usage: exact_loop DIR N D NQ K METRIC THREADS\n";
    return 2;
  }
  const std::string dir = argv[1], metric = argv[6];
  const size_t n = std::stoul(argv[2]), d = std::stoul(argv[3]), nq = std::stoul(argv[4]), k = std::stoul(argv[5]);
  const size_t threads = std::max<size_t>(1, std::stoul(argv[7]));
  if (metric != "ip" && metric != "cosine" && metric != "l2") {
    std::cerr << "exact_loop: metric must be ip, cosine or l2 (got " << metric << ")\n";
    return 2;
  }
  const bool l2 = metric == "l2";

  const auto t0 = std::chrono::steady_clock::now();
  const auto baseBytes = readFile(dir + "/base.f32", n * d * 4);
  const auto queries = readFile(dir + "/queries.f32", nq * d * 4);
  const auto gtBytes = readFile(dir + "/gt.i32", nq * k * 4);
  const auto* base = reinterpret_cast<const float*>(baseBytes.data());
  const auto* q = reinterpret_cast<const float*>(queries.data());
  const auto* gt = reinterpret_cast<const int32_t*>(gtBytes.data());
  // l2 ranks by 2 q.b - |b|^2: the squared norms once, before any timing.
  std::vector<float> norms(l2 ? n : 0);
  for (size_t r = 0; r < norms.size(); r++) norms[r] = cblas_sdot(static_cast<int>(d), base + r * d, 1, base + r * d, 1);
  openblas_set_num_threads(1);
  const double loadS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string version = openblas_get_config();
  std::cout << "{\"ready\":true,\"build_s\":" << loadS << ",\"version\":\"" << version << "\"}" << std::endl;

  const size_t kk = std::min(k, n);
  std::vector<float> scores(n);
  // Each share's top kk, side by side, merged by the calling thread.
  std::vector<Scored> tops(threads * kk);
  std::vector<size_t> topCounts(threads);
  // Each share's scored rows, allocated once.
  std::vector<std::vector<Scored>> shares(threads);
  for (size_t w = 0; w < threads; w++) shares[w].resize(n * (w + 1) / threads - n * w / threads);
  const auto scoreShare = [&](size_t share, const float* query) {
    const size_t r0 = n * share / threads, r1 = n * (share + 1) / threads, rows = r1 - r0;
    if (rows == 0) {
      topCounts[share] = 0;
      return;
    }
    float* s = scores.data() + r0;
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(rows), static_cast<int>(d), 1.0f, base + r0 * d, static_cast<int>(d), query, 1, 0.0f, s, 1);
    auto& all = shares[share];
    for (size_t r = 0; r < rows; r++) all[r] = {l2 ? 2.0f * s[r] - norms[r0 + r] : s[r], static_cast<int32_t>(r0 + r)};
    const size_t m = std::min(kk, rows);
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m), all.end(), closer);
    std::copy(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m), tops.begin() + static_cast<std::ptrdiff_t>(share * kk));
    topCounts[share] = m;
  };

  std::vector<Scored> merged;
  std::atomic<size_t> nextShare{0};
  const auto work = [&](const float* query) {
    for (size_t share = nextShare++; share < threads; share = nextShare++) scoreShare(share, query);
  };
  std::vector<std::thread> helpers;
  serveRequests(
      nq, k, gt, [](size_t) {},
      [&](size_t i, int64_t* out) {
        const float* query = q + i * d;
        nextShare = 0;
        helpers.clear();
        for (size_t w = 1; w < threads; w++) helpers.emplace_back(work, query);
        work(query);
        for (auto& h : helpers) h.join();
        merged.clear();
        for (size_t w = 0; w < threads; w++) merged.insert(merged.end(), tops.begin() + static_cast<std::ptrdiff_t>(w * kk), tops.begin() + static_cast<std::ptrdiff_t>(w * kk + topCounts[w]));
        const size_t m = std::min(kk, merged.size());
        std::partial_sort(merged.begin(), merged.begin() + static_cast<std::ptrdiff_t>(m), merged.end(), closer);
        for (size_t j = 0; j < m; j++) out[j] = merged[j].id;
      });
  return 0;
}
