// cclab-proc-cma: user buffers that did not come from Communicator::allocate, two ways to let a peer
// process read them: staging (copy the buffer into the rank's shared segment, run,
// copy the result out: what the process backend does) against cross-memory attach (the peer reads the
// private buffer with process_vm_readv, one call per slice). Forked ranks, all measured in one run,
// the routes alternated round by round (timings drift on a shared machine), medians of the rank-max times:
//   micro, P ranks: every rank reads its right neighbour's N bytes at once —
//     cma:   process_vm_readv of the neighbour's private buffer into a local one, slice by slice;
//     shm:   memcpy of the neighbour's shared segment, slice by slice (the allocate route's read);
//     stage: memcpy of the own buffer into the own shared segment and back out (staging's extra cost).
//   e2e, ring float sum allreduce (--e2e-ranks, default 2):
//     staged: copy in + ShmExecutor ring + copy out (what the backend does with non-allocate buffers);
//     cma:    a ring over private buffers: each received slice read by process_vm_readv into a
//             temporary and reduced from there (reduce-scatter), read straight into the output (allgather);
//     direct: the ShmExecutor ring alone (allocate buffers: the floor of both).
//   Every result is checked against the exact reference (#wrong).
//   cclab-proc-cma [--ranks 2,4] [--min-bytes 4K] [--max-bytes 64M] [--factor 4] [--rounds 5]
//                  [--slice-bytes 256K] [--iter-bytes 64M] [--e2e-ranks 2] [--user-offset 0]
// When the kernel refuses cross-memory attach (EPERM: Yama ptrace_scope, seccomp, a sandbox; ENOSYS)
// one line says so and only the staging figures are measured. Exit 2 for bad flags (one line), 1 for
// runtime failures.
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/core/test_data.h"
#include "collectives/host/host_communicator.h"
#include "collectives/proc/shared_wait.h"
#include "collectives/proc/shm_executor.h"
#include "collectives/proc/stale_sweep.h"

namespace {

using namespace cclab;
using cclab::proc::Clock;
using cclab::proc::SharedWord;

constexpr int kMaxRanks = 64;
constexpr auto kTimeout = std::chrono::seconds(60);

struct Settings {
  std::vector<int> ranks{2, 4};
  std::int64_t minBytes = 4 << 10;
  std::int64_t maxBytes = 64 << 20;
  int factor = 4;
  int rounds = 5;
  std::int64_t sliceBytes = static_cast<std::int64_t>(host::kDefaultSliceBytes);
  std::int64_t iterBytes = 64 << 20;
  int e2eRanks = 2;
  std::size_t userOffset = 0;  // private buffers start this far past a page boundary
};

// In a shared segment made by the parent before it forks the ranks.
struct Ctl {
  SharedWord abort, arrive, probeReady, probeDone;
  SharedWord done[kMaxRanks];  // e2e cma ring: steps each rank has completed
  int probeErrno;              // 0: the probe's read worked; -1: it read wrong bytes
  pid_t pid[kMaxRanks];
  std::uint64_t in[kMaxRanks], out[kMaxRanks];  // private buffers' addresses
  double secs[kMaxRanks];
  std::atomic<std::uint64_t> wrong;
};

std::string loadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

std::vector<std::int64_t> sizesOf(const Settings& s) {
  std::vector<std::int64_t> v;
  for (std::int64_t n = s.minBytes; n <= s.maxBytes; n *= s.factor) v.push_back(n);
  return v;
}

// One process_vm_readv of `len` bytes at `remote` in process `pid`.
void cmaRead(pid_t pid, void* dst, std::uint64_t remote, std::size_t len) {
  iovec local{dst, len};
  iovec far{reinterpret_cast<void*>(remote), len};  // NOLINT(performance-no-int-to-ptr): the peer's address
  const ssize_t n = process_vm_readv(pid, &local, 1, &far, 1, 0);
  if (n != static_cast<ssize_t>(len))
    throw Error(std::string("process_vm_readv of pid ") + std::to_string(pid) + ": " +
                (n < 0 ? std::strerror(errno) : "short read (" + std::to_string(n) + " of " + std::to_string(len) + " bytes)"));
}

// Whether a child may read its parent's memory with process_vm_readv (under Yama ptrace_scope 1 a
// parent is no descendant of its child, like two sibling ranks). Returns 0, an errno, or -1 (wrong bytes).
int probeCma(Ctl* ctl) {
  static std::uint64_t word = 0;
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) throw Error("fork failed");
  if (child == 0) {
    int err = 0;
    try {
      proc::waitAtLeast(ctl->probeReady, 1, ctl->abort, std::chrono::seconds(10), std::chrono::nanoseconds(0), "the probe's parent");
      std::uint64_t got = 0;
      iovec local{&got, sizeof got};
      iovec far{&word, sizeof word};  // same address in the parent: fork copied the address space
      const ssize_t n = process_vm_readv(parent, &local, 1, &far, 1, 0);
      err = n < 0 ? errno : (got == 0x5eedf00dULL ? 0 : -1);
    } catch (const std::exception&) {
      err = ETIMEDOUT;
    }
    ctl->probeErrno = err;
    ctl->probeDone.store(1);
    _exit(0);
  }
  word = 0x5eedf00dULL;  // written after the fork: the child sees it only by reading this process
  ctl->probeReady.store(1);
  int status = 0;
  waitpid(child, &status, 0);
  if (ctl->probeDone.value.load() != 1) throw Error("the cross-memory attach probe did not finish");
  return ctl->probeErrno;
}

class Rank {
 public:
  Rank(Ctl* ctl, int rank, int nranks) : ctl_(ctl), r_(rank), p_(nranks) {
    spin_ = std::chrono::microseconds(static_cast<unsigned>(p_) <= std::thread::hardware_concurrency() ? 50 : 0);
    ctl_->pid[r_] = getpid();
  }
  void barrier() {
    ++gen_;
    ctl_->arrive.add(1);
    proc::waitAtLeast(ctl_->arrive, gen_ * static_cast<std::uint32_t>(p_), ctl_->abort, kTimeout, spin_, "the other ranks at a barrier");
  }
  // Times `reps` runs of f across the ranks; returns the slowest rank's seconds per run (rank 0 only).
  template <class F>
  double timed(int reps, F f) {
    barrier();
    const auto start = Clock::now();
    for (int i = 0; i < reps; ++i) f();
    ctl_->secs[r_] = std::chrono::duration<double>(Clock::now() - start).count() / reps;
    barrier();
    return *std::max_element(ctl_->secs, ctl_->secs + p_);
  }

 protected:
  Ctl* ctl_;
  int r_, p_;
  std::chrono::nanoseconds spin_;
  std::uint32_t gen_ = 0;
};

// A private (user) buffer of `bytes` starting `offset` bytes past a page boundary: glibc's malloc
// returns page + 16 for large blocks, and where the copy's destination lies a little above its source
// modulo 4 KiB, glibc 2.36's `rep movsb` copies are several times slower on this AMD CPU (the micro
// shm read at offset 16), so the offset is a flag. Zero-filled (touched: no first-touch fault later).
template <class T>
class PrivateBuffer {
 public:
  PrivateBuffer(std::size_t count, std::size_t offset)
      : raw_(static_cast<std::byte*>(std::aligned_alloc(4096, (count * sizeof(T) + offset + 4095) / 4096 * 4096))) {
    if (raw_ == nullptr) throw Error("out of memory");
    std::memset(raw_, 0, count * sizeof(T) + offset);
    data_ = reinterpret_cast<T*>(raw_ + offset);
  }
  PrivateBuffer(const PrivateBuffer&) = delete;
  PrivateBuffer& operator=(const PrivateBuffer&) = delete;
  ~PrivateBuffer() { std::free(raw_); }
  [[nodiscard]] T* data() const { return data_; }

 private:
  std::byte* raw_;
  T* data_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
}

int repsFor(const Settings& s, std::int64_t bytes) {
  return static_cast<int>(std::clamp<std::int64_t>(s.iterBytes / bytes, 1, 100000));
}

// micro: cma read, shm read, staging copies, per size.
void microRank(const std::string& job, Ctl* ctl, int r, int p, const Settings& s, bool cma) {
  Rank rk(ctl, r, p);
  const auto maxN = static_cast<std::size_t>(s.maxBytes);
  const auto slice = static_cast<std::size_t>(s.sliceBytes);
  PrivateBuffer<unsigned char> in(maxN, s.userOffset), dst(maxN, s.userOffset);
  std::vector<unsigned char> expect(maxN);
  const int peer = (r + 1) % p;
  for (std::size_t i = 0; i < maxN; ++i) {
    in.data()[i] = static_cast<unsigned char>(r * 31 + i * 7 + (i >> 12));
    expect[i] = static_cast<unsigned char>(peer * 31 + i * 7 + (i >> 12));
  }
  ctl->in[r] = reinterpret_cast<std::uint64_t>(in.data());
  proc::ShmSegment own = proc::ShmSegment::create(proc::segmentName(job, r, "cma"), maxN);
  std::memcpy(own.data(), in.data(), maxN);
  rk.barrier();
  proc::ShmSegment far = proc::ShmSegment::attach(proc::segmentName(job, peer, "cma"), kTimeout);
  rk.barrier();
  own.unlinkName();  // every peer has mapped it: nothing left in /dev/shm however this rank ends
  const std::byte* peerShm = far.data();
  for (const std::int64_t bytes : sizesOf(s)) {
    const auto n = static_cast<std::size_t>(bytes);
    const int reps = repsFor(s, bytes);
    auto cmaOnce = [&] {
      for (std::size_t off = 0; off < n; off += slice) cmaRead(ctl->pid[peer], dst.data() + off, ctl->in[peer] + off, std::min(slice, n - off));
    };
    auto shmOnce = [&] {
      for (std::size_t off = 0; off < n; off += slice) std::memcpy(dst.data() + off, peerShm + off, std::min(slice, n - off));
    };
    auto stageOnce = [&] {
      std::memcpy(own.data(), in.data(), n);
      std::memcpy(dst.data(), own.data(), n);
    };
    std::vector<double> tc, ts, tg;
    std::uint64_t wrong = 0;
    for (int round = 0; round < s.rounds; ++round) {
      const bool forward = round % 2 == 0;  // alternate the order: a drift hits every route alike
      for (int k = 0; k < 3; ++k) {
        const int which = forward ? k : 2 - k;
        if (which == 0 && cma) {
          tc.push_back(rk.timed(reps, cmaOnce));
          if (std::memcmp(dst.data(), expect.data(), n) != 0) ++wrong;
        } else if (which == 1) {
          ts.push_back(rk.timed(reps, shmOnce));
          if (std::memcmp(dst.data(), expect.data(), n) != 0) ++wrong;
        } else if (which == 2) {
          tg.push_back(rk.timed(reps, stageOnce));
        }
      }
    }
    if (wrong) ctl->wrong += wrong;  // any rank's error shows
    rk.barrier();
    if (r == 0) {
      const double c = median(tc), sh = median(ts), g = median(tg);
      auto gbps = [&](double t) { return t > 0 ? static_cast<double>(bytes) / t / 1e9 : 0.0; };
      if (cma)
        std::printf("micro ranks=%d bytes=%lld: cma read %.2f us (%.2f GB/s), shm read %.2f us (%.2f GB/s), staging in+out %.2f us; "
                    "cma-shm %.2f us, staging/(cma-shm) %.2f, #wrong %llu\n",
                    p, static_cast<long long>(bytes), c * 1e6, gbps(c), sh * 1e6, gbps(sh), g * 1e6, (c - sh) * 1e6,
                    c > sh ? g / (c - sh) : 0.0, static_cast<unsigned long long>(ctl->wrong.load()));
      else
        std::printf("micro ranks=%d bytes=%lld: shm read %.2f us (%.2f GB/s), staging in+out %.2f us, #wrong %llu\n", p,
                    static_cast<long long>(bytes), sh * 1e6, gbps(sh), g * 1e6, static_cast<unsigned long long>(ctl->wrong.load()));
      std::fflush(stdout);
    }
    rk.barrier();
  }
}

// e2e: ring allreduce three ways.
class RingRank : public Rank {
 public:
  RingRank(Ctl* ctl, int rank, int nranks) : Rank(ctl, rank, nranks) {}
  // A ring allreduce over private buffers, read with process_vm_readv (float sum). The step rule:
  // before its global step t a rank waits until both neighbours completed step t-1, so the left one's
  // chunk is ready and the right one has read what this step overwrites.
  void cmaRing(const float* in, float* out, std::int64_t count, std::int64_t sliceElems, float* tmp, ReduceFn reduce) {
    const int left = (r_ + p_ - 1) % p_, right = (r_ + 1) % p_;
    auto chunkBegin = [&](int c) { return count * c / p_; };
    for (int t = 0; t < 2 * p_ - 2; ++t, ++step_) {
      proc::waitAtLeast(ctl_->done[left], step_, ctl_->abort, kTimeout, spin_, "the left neighbour's step");
      proc::waitAtLeast(ctl_->done[right], step_, ctl_->abort, kTimeout, spin_, "the right neighbour's step");
      const bool rs = t < p_ - 1;
      const int c = rs ? ((r_ - 1 - t) % p_ + p_) % p_ : ((r_ - (t - p_ + 1)) % p_ + p_) % p_;
      const std::uint64_t src = (rs && t == 0) ? ctl_->in[left] : ctl_->out[left];
      for (std::int64_t e = chunkBegin(c); e < chunkBegin(c + 1); e += sliceElems) {
        const std::int64_t n = std::min(sliceElems, chunkBegin(c + 1) - e);
        const auto bytes = static_cast<std::size_t>(n) * 4;
        if (rs) {
          cmaRead(ctl_->pid[left], tmp, src + static_cast<std::uint64_t>(e) * 4, bytes);
          reduce(out + e, in + e, tmp, static_cast<std::size_t>(n));
        } else {
          cmaRead(ctl_->pid[left], out + e, src + static_cast<std::uint64_t>(e) * 4, bytes);
        }
      }
      ctl_->done[r_].store(step_ + 1);
    }
  }

 private:
  std::uint32_t step_ = 0;
};

void e2eRank(const std::string& job, Ctl* ctl, int r, int p, const Settings& s, bool cma) {
  RingRank rk(ctl, r, p);
  const std::int64_t maxCount = s.maxBytes / 4;
  std::int64_t scratch = 0;
  for (const std::int64_t bytes : sizesOf(s))
    scratch = std::max(scratch, plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Ring, p, bytes / 4).scratchCount);
  const auto maxN = static_cast<std::size_t>(s.maxBytes);
  const std::size_t scratchAt = 2 * maxN + 64;
  proc::ShmExecutor ex(job, r, p, scratchAt + static_cast<std::size_t>(scratch) * 4, kTimeout);
  const proc::ShmLayout layout{0, maxN + 64, scratchAt};
  const auto maxElems = static_cast<std::size_t>(maxCount);
  PrivateBuffer<float> in(maxElems, s.userOffset), out(maxElems, s.userOffset);
  std::vector<float> expected(maxElems);
  // The temporary at the page offset of the buffers it is read from (here every rank's): a kernel copy
  // whose destination lies 16 bytes above its source modulo 4 KiB ran 3x slower (see PrivateBuffer).
  PrivateBuffer<float> tmp(static_cast<std::size_t>(std::max<std::int64_t>(s.sliceBytes / 4, 1)), s.userOffset);
  ctl->in[r] = reinterpret_cast<std::uint64_t>(in.data());
  ctl->out[r] = reinterpret_cast<std::uint64_t>(out.data());
  const DataSpec spec{DataType::Float32, ReduceOp::Sum, p, 7};
  const ReduceFn reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
  proc::ShmRunOptions o;
  o.reduce = reduce;
  o.sliceElems = s.sliceBytes / 4;
  o.timeout = kTimeout;
  o.spin = std::chrono::microseconds(static_cast<unsigned>(p) <= std::thread::hardware_concurrency() ? 50 : 0);
  for (const std::int64_t bytes : sizesOf(s)) {
    const std::int64_t count = bytes / 4;
    const auto n = static_cast<std::size_t>(count);
    const plan::Plan pl = plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Ring, p, count);
    fillInput(spec, r, 0, n, in.data());
    fillExpectedReduce(spec, 0, n, expected.data());
    std::byte* seg = ex.buffer();
    auto staged = [&] {
      std::memcpy(seg + layout.input, in.data(), n * 4);
      ex.run(pl, layout, o);
      std::memcpy(out.data(), seg + layout.output, n * 4);
    };
    auto direct = [&] { ex.run(pl, layout, o); };
    auto viaCma = [&] { rk.cmaRing(in.data(), out.data(), count, o.sliceElems > 0 ? o.sliceElems : count, tmp.data(), reduce); };
    const int reps = repsFor(s, bytes);
    std::vector<double> tg, tc, td;
    std::uint64_t wrong = 0;
    auto check = [&](const void* got) { wrong += countWrong(DataType::Float32, got, expected.data(), n); };
    for (int round = 0; round < s.rounds; ++round) {
      const bool forward = round % 2 == 0;
      for (int k = 0; k < 3; ++k) {
        const int which = forward ? k : 2 - k;
        if (which == 0) {
          std::fill(out.data(), out.data() + count, 0.0F);
          tg.push_back(rk.timed(reps, staged));
          check(out.data());
        } else if (which == 1 && cma) {
          std::fill(out.data(), out.data() + count, 0.0F);
          rk.barrier();  // every rank's output cleared before any peer reads it
          tc.push_back(rk.timed(reps, viaCma));
          check(out.data());
        } else if (which == 2) {
          std::memcpy(seg + layout.input, in.data(), n * 4);
          std::memset(seg + layout.output, 0, n * 4);
          td.push_back(rk.timed(reps, direct));
          check(seg + layout.output);
        }
      }
    }
    if (wrong) ctl->wrong += wrong;
    rk.barrier();
    if (r == 0) {
      const double g = median(tg), c = median(tc), d = median(td);
      if (cma)
        std::printf("e2e ring allreduce ranks=%d bytes=%lld: staged %.2f us, cma %.2f us, direct %.2f us; staged/cma %.2f, #wrong %llu\n",
                    p, static_cast<long long>(bytes), g * 1e6, c * 1e6, d * 1e6, g / c, static_cast<unsigned long long>(ctl->wrong.load()));
      else
        std::printf("e2e ring allreduce ranks=%d bytes=%lld: staged %.2f us, direct %.2f us, #wrong %llu\n", p,
                    static_cast<long long>(bytes), g * 1e6, d * 1e6, static_cast<unsigned long long>(ctl->wrong.load()));
      std::fflush(stdout);
    }
    rk.barrier();
  }
}

// Forks p ranks running f(rank); true when every rank exited 0 and no result was wrong.
template <class F>
bool runRanks(Ctl* ctl, int p, F f) {
  new (ctl) Ctl{};  // a fresh control block for each group of ranks
  std::vector<pid_t> kids;
  for (int r = 0; r < p; ++r) {
    const pid_t pid = fork();
    if (pid < 0) throw Error("fork failed");
    if (pid == 0) {
      int rc = 1;
      try {
        f(r);
        rc = 0;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "cclab-proc-cma: rank %d: %s\n", r, e.what());
        proc::raiseAbort(ctl->abort, 1, {&ctl->arrive});
      }
      std::fflush(stdout);
      _exit(rc);
    }
    kids.push_back(pid);
  }
  bool ok = true;
  for (std::size_t left = kids.size(); left > 0; --left) {
    int status = 0;
    if (waitpid(-1, &status, 0) < 0) break;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ok = false;
      proc::raiseAbort(ctl->abort, 2, {&ctl->arrive});  // a rank died: the others stop now, not at the timeout
    }
  }
  return ok && ctl->wrong == 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Staging vs cross-memory attach for user buffers between processes (cclab proc backend)"};
  Settings s;
  app.add_option("--ranks", s.ranks, "process counts for the micro measurements (e.g. 2,4)")->delimiter(',')->check(CLI::Range(2, kMaxRanks));
  app.add_option("--min-bytes", s.minBytes, "smallest size (a multiple of 4)")->transform(CLI::AsSizeValue(false));
  app.add_option("--max-bytes", s.maxBytes, "largest size")->transform(CLI::AsSizeValue(false));
  app.add_option("--factor", s.factor, "size step")->check(CLI::Range(2, 1024));
  app.add_option("--rounds", s.rounds, "alternating rounds per size (medians reported)")->check(CLI::Range(1, 1000));
  app.add_option("--slice-bytes", s.sliceBytes, "bytes per process_vm_readv / slice (a multiple of 4)")->transform(CLI::AsSizeValue(false));
  app.add_option("--iter-bytes", s.iterBytes, "bytes moved per timed measurement (small sizes repeat)")->transform(CLI::AsSizeValue(false));
  app.add_option("--user-offset", s.userOffset, "private buffers start this many bytes past a page (malloc: 16)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{4092}));
  app.add_option("--e2e-ranks", s.e2eRanks, "ranks of the end-to-end ring allreduce (0: skip it)")->check(CLI::Range(0, kMaxRanks));
  try {
    app.parse(argc, argv);
    if (s.minBytes < 4 || s.minBytes % 4 != 0) throw CLI::ValidationError("--min-bytes", "must be a positive multiple of 4");
    if (s.maxBytes < s.minBytes || s.maxBytes > (std::int64_t{1} << 30))
      throw CLI::ValidationError("--max-bytes", "must be at least --min-bytes and at most 1G");
    if (s.sliceBytes < 4 || s.sliceBytes % 4 != 0) throw CLI::ValidationError("--slice-bytes", "must be a positive multiple of 4");
    if (s.iterBytes < 1) throw CLI::ValidationError("--iter-bytes", "must be positive");
    if (s.userOffset % 4 != 0) throw CLI::ValidationError("--user-offset", "must be a multiple of 4");
    if (s.e2eRanks == 1) throw CLI::ValidationError("--e2e-ranks", "must be 0 or at least 2");
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "cclab-proc-cma: %s\n", e.what());
    return 2;
  }
  try {
    const std::string job = proc::makeJobId();
    proc::ShmSegment ctlSeg = proc::ShmSegment::create(proc::segmentName(job, 0, "cmactl"), sizeof(Ctl));
    ctlSeg.unlinkName();  // the ranks inherit the mapping: the name is never needed
    auto* ctl = new (ctlSeg.data()) Ctl{};
    const int err = probeCma(ctl);
    const bool cma = err == 0;
    if (cma)
      std::printf("cross-memory attach: allowed (process_vm_readv from a process that is not an ancestor)\n");
    else
      std::printf("cross-memory attach refused here (process_vm_readv: %s): measuring staging only\n",
                  err < 0 ? "read wrong bytes" : std::strerror(err));
    std::printf("load before: %s; slice %lld bytes, %d rounds, user buffers at page + %zu, sizes %lld..%lld x%d\n",
                loadAverage().c_str(), static_cast<long long>(s.sliceBytes), s.rounds, s.userOffset, static_cast<long long>(s.minBytes), static_cast<long long>(s.maxBytes), s.factor);
    std::fflush(stdout);
    bool ok = true;
    for (const int p : s.ranks)
      ok = runRanks(ctl, p, [&](int r) { microRank(job, ctl, r, p, s, cma); }) && ok;
    if (s.e2eRanks >= 2 && ok)
      ok = runRanks(ctl, s.e2eRanks, [&](int r) { e2eRank(job, ctl, r, s.e2eRanks, s, cma); }) && ok;
    proc::cleanupStaleSegments(job);
    std::printf("load after: %s\n", loadAverage().c_str());
    if (!ok) throw Error("a rank failed or a result was wrong (see above)");
    std::printf("every result checked: #wrong 0\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cclab-proc-cma: %s\n", e.what());
    return 1;
  }
}
