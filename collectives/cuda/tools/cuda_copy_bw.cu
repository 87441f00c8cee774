// cuda_copy_bw: the device-memory ceiling the CUDA allreduce is measured against.
//
// Times, with CUDA events (median of -n runs after warm-up), on device -d:
//   memcpy  cudaMemcpyAsync device to device           moves 2 x bytes (read + write)
//   copy    cclab's reduce-copy kernel, copy mode      moves 2 x bytes
//   reduce  cclab's reduce-copy kernel, float sum      moves 3 x bytes (two reads, one write)
//   peer    cudaMemcpyPeerAsync to every other device  (only with several devices)
// GB/s = 1e9 bytes per second, counting every byte read and every byte written, as the allreduce's
// "device memory moved" figure in docs/cuda.md does. Usage:
//   cuda_copy_bw [-b BYTES[K|M|G]] [-n ITERS] [-d DEVICE] [-J FILE]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/cuda_resources.h"
#include "collectives/cuda/kernels.h"

namespace {

using namespace cclab::cuda;

std::size_t parseSize(const std::string& s) {
  std::size_t pos = 0;
  const double v = std::stod(s, &pos);
  double mult = 1;
  if (pos < s.size()) {
    switch (s[pos]) {
      case 'K': case 'k': mult = 1024.0; break;
      case 'M': case 'm': mult = 1024.0 * 1024; break;
      case 'G': case 'g': mult = 1024.0 * 1024 * 1024; break;
      default: throw std::invalid_argument("bad size '" + s + "'");
    }
  }
  return static_cast<std::size_t>(v * mult);
}

struct Result {
  std::string method;
  std::size_t bytes;
  double medianUs;
  double gbps;
};

template <class F>
double medianUs(cudaStream_t stream, int iters, F&& body) {
  Event start = makeEvent(0, true), stop = makeEvent(0, true);
  for (int i = 0; i < 3; ++i) body();  // warm-up
  CCLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> ms;
  for (int i = 0; i < iters; ++i) {
    CCLAB_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    body();
    CCLAB_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    CCLAB_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float t = 0;
    CCLAB_CUDA_CHECK(cudaEventElapsedTime(&t, start.get(), stop.get()));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return 1000.0 * ms[ms.size() / 2];
}

int run(int argc, char** argv) {
  std::size_t bytes = std::size_t{1} << 30;
  int iters = 20, device = 0;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "-b") bytes = parseSize(next());
    else if (a == "-n") iters = std::stoi(next());
    else if (a == "-d") device = std::stoi(next());
    else if (a == "-J") json = next();
    else throw std::invalid_argument("unknown option '" + a + "' (usage: cuda_copy_bw [-b BYTES] [-n ITERS] [-d DEVICE] [-J FILE])");
  }
  int ndev = 0;
  CCLAB_CUDA_CHECK(cudaGetDeviceCount(&ndev));
  if (device < 0 || device >= ndev) throw std::invalid_argument("no device " + std::to_string(device));
  cudaDeviceProp prop{};
  CCLAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceGuard guard(device);
  Stream stream = makeStream(device);
  DeviceMemory a(device, bytes), b(device, bytes), c(device, bytes);
  CCLAB_CUDA_CHECK(cudaMemsetAsync(a.get(), 1, bytes, stream.get()));
  CCLAB_CUDA_CHECK(cudaMemsetAsync(b.get(), 2, bytes, stream.get()));
  const auto floats = static_cast<std::int64_t>(bytes / sizeof(float));
  const LaunchGeometry grid = reduceCopyGeometry(static_cast<std::int64_t>(bytes), prop.multiProcessorCount, 1);

  std::vector<Result> results;
  auto add = [&](const std::string& method, double us, double moved) {
    results.push_back({method, bytes, us, moved / (us * 1e-6) / 1e9});
  };
  add("memcpy", medianUs(stream.get(), iters, [&] {
        CCLAB_CUDA_CHECK(cudaMemcpyAsync(c.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
      }), 2.0 * static_cast<double>(bytes));
  add("copy", medianUs(stream.get(), iters, [&] {
        launchReduceCopy(stream.get(), cclab::DataType::Float32, cclab::ReduceOp::Sum, {c.get(), nullptr, a.get(), floats}, grid);
      }), 2.0 * static_cast<double>(bytes));
  add("reduce", medianUs(stream.get(), iters, [&] {
        launchReduceCopy(stream.get(), cclab::DataType::Float32, cclab::ReduceOp::Sum, {c.get(), a.get(), b.get(), floats}, grid);
      }), 3.0 * static_cast<double>(bytes));
  for (int peer = 0; peer < ndev; ++peer) {
    if (peer == device) continue;
    DeviceMemory remote(peer, bytes);
    add("peer->" + std::to_string(peer), medianUs(stream.get(), iters, [&] {
          CCLAB_CUDA_CHECK(cudaMemcpyPeerAsync(remote.get(), peer, a.get(), device, bytes, stream.get()));
        }), 2.0 * static_cast<double>(bytes));
  }

  std::printf("# cuda_copy_bw: device %d %s, %d SMs; GB/s counts bytes read + written\n", device, prop.name,
              prop.multiProcessorCount);
  std::printf("# %-10s %14s %12s %10s\n", "method", "bytes", "time_us", "GB/s");
  for (const Result& r : results) std::printf("  %-10s %14zu %12.1f %10.1f\n", r.method.c_str(), r.bytes, r.medianUs, r.gbps);
  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (!f) throw std::runtime_error("cannot write " + json);
    std::fprintf(f, "{\"tool\": \"cuda_copy_bw\", \"device\": \"%s\", \"sms\": %d, \"iters\": %d, \"results\": [", prop.name,
                 prop.multiProcessorCount, iters);
    for (std::size_t i = 0; i < results.size(); ++i)
      std::fprintf(f, "%s{\"method\": \"%s\", \"bytes\": %zu, \"time_us\": %.3f, \"GBps\": %.3f}", i ? ", " : "",
                   results[i].method.c_str(), results[i].bytes, results[i].medianUs, results[i].gbps);
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "cuda_copy_bw: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_copy_bw: %s\n", e.what());
    return 1;
  }
}
