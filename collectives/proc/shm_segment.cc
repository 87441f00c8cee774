// ShmSegment: create, attach, unmap and unlink POSIX shared-memory segments.
#include "collectives/proc/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>
#include <utility>

#include "collectives/core/error_text.h"
#include "collectives/core/errors.h"
#include "collectives/proc/cleanup_registry.h"
#include "collectives/proc/stale_sweep.h"

namespace cclab::proc {
namespace {

bool validToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

std::string systemError(const std::string& what) { return what + ": " + std::strerror(errno); }

// Closes a file descriptor when it leaves scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

void checkName(const std::string& name) {
  if (name.size() < 2 || name[0] != '/' || name.find('/', 1) != std::string::npos ||
      name.size() >= static_cast<std::size_t>(kMaxCleanupPath) - 9)
    throw InvalidArgument("proc: bad shared segment name '" + name + "' (one leading '/', short)");
}

}  // namespace

std::string makeJobId() {
  static std::atomic<std::uint32_t> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  char text[64];
  std::snprintf(text, sizeof text, "%08x%010llx%03x", static_cast<unsigned>(getpid()),
                static_cast<unsigned long long>(now) & 0xffffffffffULL, counter.fetch_add(1) & 0xfff);
  return text;
}

std::string segmentName(std::string_view job, int rank, std::string_view purpose) {
  if (!validToken(job)) throw InvalidArgument("proc: bad job id '" + std::string(job) + "' (letters, digits, '_')");
  if (!validToken(purpose))
    throw InvalidArgument("proc: bad segment purpose '" + std::string(purpose) + "' (letters, digits, '_')");
  if (rank < 0) throw InvalidArgument("proc: segment rank " + std::to_string(rank) + " < 0");
  return "/cclab-" + std::string(job) + "-" + std::to_string(rank) + "-" + std::string(purpose);
}

std::string segmentPath(std::string_view name) {
  if (!name.empty() && name.front() == '/') name.remove_prefix(1);
  return "/dev/shm/" + std::string(name);
}

ShmSegment ShmSegment::create(const std::string& name, std::size_t payloadBytes) {
  checkName(name);
  const std::size_t total = kPayloadOffset + payloadBytes;
  if (payloadBytes > SIZE_MAX - kPayloadOffset) throw InvalidArgument("proc: segment size overflows");
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) == 0) {
    const unsigned long long room = static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize;
    if (total > room)
      throw InvalidArgument("proc: segment '" + name + "' needs " + std::to_string(total) + " bytes but /dev/shm has " +
                            std::to_string(room) + " free");
  }
  installCleanupHandlers();
  const Fd fd(shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600));
  if (fd.get() < 0) {
    if (errno == EEXIST) throw InvalidArgument("proc: shared segment '" + name + "' already exists");
    throw Error(systemError("proc: shm_open('" + name + "')"));
  }
  try {
    registerForCleanup(segmentPath(name));
  } catch (...) {
    shm_unlink(name.c_str());  // not registered: nothing else would remove it
    throw;
  }
  ShmSegment seg;
  seg.name_ = name;
  seg.owner_ = true;
  seg.ownerPid_ = getpid();
  if (ftruncate(fd.get(), static_cast<off_t>(total)) != 0) {
    const std::string msg = systemError("proc: ftruncate('" + name + "', " + std::to_string(total) + ")");
    throw Error(msg);  // seg's destructor unlinks
  }
  void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) throw Error(systemError("proc: mmap('" + name + "')"));
  seg.base_ = static_cast<std::byte*>(p);
  seg.mappedBytes_ = total;
  seg.payloadBytes_ = payloadBytes;
  auto* h = new (seg.base_) SegmentHeader{};
  h->creatorPid = getpid();
  h->version = 1;
  h->creatorStartTime = processStartTime(getpid());
  h->payloadBytes = payloadBytes;
  h->magic.store(kSegmentMagic, std::memory_order_release);
  return seg;
}

ShmSegment ShmSegment::attach(const std::string& name, std::chrono::nanoseconds timeout) {
  checkName(name);
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    const Fd fd(shm_open(name.c_str(), O_RDWR, 0));
    if (fd.get() < 0 && errno != ENOENT) throw Error(systemError("proc: shm_open('" + name + "')"));
    struct stat st {};
    if (fd.get() >= 0 && fstat(fd.get(), &st) == 0 && static_cast<std::size_t>(st.st_size) >= kPayloadOffset) {
      const auto total = static_cast<std::size_t>(st.st_size);
      void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
      if (p == MAP_FAILED) throw Error(systemError("proc: mmap('" + name + "')"));
      ShmSegment seg;
      seg.name_ = name;
      seg.base_ = static_cast<std::byte*>(p);
      seg.mappedBytes_ = total;
      const auto* h = reinterpret_cast<const SegmentHeader*>(seg.base_);
      if (h->magic.load(std::memory_order_acquire) == kSegmentMagic) {
        if (h->payloadBytes + kPayloadOffset > total)
          throw Error("proc: shared segment '" + name + "' has a header larger than the segment");
        seg.payloadBytes_ = h->payloadBytes;
        return seg;
      }
    }
    if (Clock::now() >= deadline)
      throw TimeoutError("proc: shared segment '" + name + "' did not appear within " + millisecondsText(timeout));
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(5));
  }
}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept { *this = std::move(other); }

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    close();
    base_ = std::exchange(other.base_, nullptr);
    mappedBytes_ = std::exchange(other.mappedBytes_, 0);
    payloadBytes_ = std::exchange(other.payloadBytes_, 0);
    name_ = std::exchange(other.name_, {});
    owner_ = std::exchange(other.owner_, false);
    ownerPid_ = std::exchange(other.ownerPid_, 0);
  }
  return *this;
}

ShmSegment::~ShmSegment() { close(); }

pid_t ShmSegment::creatorPid() const {
  return base_ == nullptr ? 0 : reinterpret_cast<const SegmentHeader*>(base_)->creatorPid;
}

void ShmSegment::close() noexcept {
  if (base_ != nullptr) munmap(base_, mappedBytes_);
  base_ = nullptr;
  if (owner_ && ownerPid_ == getpid()) {
    shm_unlink(name_.c_str());
    unregisterForCleanup(segmentPath(name_));
  }
  owner_ = false;
  mappedBytes_ = payloadBytes_ = 0;
}

void ShmSegment::unlinkName() noexcept {
  if (!owner_ || ownerPid_ != getpid()) return;
  shm_unlink(name_.c_str());
  unregisterForCleanup(segmentPath(name_));
  owner_ = false;  // close() has no name left to remove
}

}  // namespace cclab::proc
