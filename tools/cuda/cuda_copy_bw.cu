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

#include "collectives/conventions/output_file.h"
#include "collectives/core/errors.h"
#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/cuda_resources.h"
#include "collectives/cuda/kernels.h"

namespace {

using namespace cclab::cuda;

// Whole bytes with an optional K/M/G (1024-based) suffix; anything else is a usage error.
std::size_t parseSize(const std::string& s) {
  std::size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  std::size_t shift = 0;
  const std::string unit = s.substr(digits);
  if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "m") shift = 20;
  else if (unit == "G" || unit == "g") shift = 30;
  else if (!unit.empty()) throw std::invalid_argument("bad size '" + s + "' (BYTES with K, M or G)");
  if (digits == 0 || digits > 12) throw std::invalid_argument("bad size '" + s + "' (BYTES with K, M or G)");
  const std::size_t v = std::stoull(s.substr(0, digits));
  constexpr std::size_t kMaxBytes = std::size_t{64} << 30;  // larger than any GPU's memory today
  if (v == 0 || v > (kMaxBytes >> shift)) throw std::invalid_argument("size '" + s + "' out of range (1 .. 64G)");
  return v << shift;
}

int parseCount(const std::string& flag, const std::string& s, int lo, int hi) {
  std::size_t pos = 0;
  int v = 0;
  try {
    v = std::stoi(s, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos != s.size() || s.empty() || v < lo || v > hi)
    throw std::invalid_argument(flag + " '" + s + "': expected a whole number in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "]");
  return v;
}

struct Result {
  std::string method;
  std::size_t bytes;
  double medianUs;
  double gbps;
};

// Events belong to the device they are recorded on: made on `device`, the one `stream` belongs to.
template <class F>
double medianUs(int device, cudaStream_t stream, int iters, F&& body) {
  Event start = makeEvent(device, true), stop = makeEvent(device, true);
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
    else if (a == "-n") iters = parseCount("-n", next(), 1, 100000);
    else if (a == "-d") device = parseCount("-d", next(), 0, 1023);
    else if (a == "-J") json = next();
    else throw std::invalid_argument("unknown option '" + a + "' (usage: cuda_copy_bw [-b BYTES] [-n ITERS] [-d DEVICE] [-J FILE])");
  }
  if (!json.empty()) cclab::conventions::checkWritable(json, "-J");
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
  add("memcpy", medianUs(device, stream.get(), iters, [&] {
        CCLAB_CUDA_CHECK(cudaMemcpyAsync(c.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
      }), 2.0 * static_cast<double>(bytes));
  add("copy", medianUs(device, stream.get(), iters, [&] {
        launchReduceCopy(stream.get(), cclab::DataType::Float32, cclab::ReduceOp::Sum, {c.get(), nullptr, a.get(), floats}, grid);
      }), 2.0 * static_cast<double>(bytes));
  add("reduce", medianUs(device, stream.get(), iters, [&] {
        launchReduceCopy(stream.get(), cclab::DataType::Float32, cclab::ReduceOp::Sum, {c.get(), a.get(), b.get(), floats}, grid);
      }), 3.0 * static_cast<double>(bytes));
  for (int peer = 0; peer < ndev; ++peer) {
    if (peer == device) continue;
    DeviceMemory remote(peer, bytes);
    add("peer->" + std::to_string(peer), medianUs(device, stream.get(), iters, [&] {
          CCLAB_CUDA_CHECK(cudaMemcpyPeerAsync(remote.get(), peer, a.get(), device, bytes, stream.get()));
        }), 2.0 * static_cast<double>(bytes));
  }

  std::printf("# cuda_copy_bw: device %d %s, %d SMs; GB/s counts bytes read + written\n", device, prop.name,
              prop.multiProcessorCount);
  std::printf("# %-10s %14s %12s %10s\n", "method", "bytes", "time_us", "GB/s");
  for (const Result& r : results) std::printf("  %-10s %14zu %12.1f %10.1f\n", r.method.c_str(), r.bytes, r.medianUs, r.gbps);
  if (!json.empty()) {
    char buf[640];  // the device name is at most 256 bytes
    std::snprintf(buf, sizeof buf, "{\"tool\": \"cuda_copy_bw\", \"device\": \"%s\", \"device_index\": %d, \"sms\": %d, \"iters\": %d, \"results\": [",
                  prop.name, device, prop.multiProcessorCount, iters);
    std::string text = buf;
    for (std::size_t i = 0; i < results.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s{\"method\": \"%s\", \"bytes\": %zu, \"time_us\": %.3f, \"GBps\": %.3f}",
                    i ? ", " : "", results[i].method.c_str(), results[i].bytes, results[i].medianUs, results[i].gbps);
      text += buf;
    }
    text += "]}\n";
    cclab::conventions::writeFileAtomically(json, text);
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
  } catch (const cclab::InvalidArgument& e) {
    std::fprintf(stderr, "cuda_copy_bw: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_copy_bw: %s\n", e.what());
    return 1;
  }
}
