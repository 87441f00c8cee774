// Unit plans, their instantiation at a count, and the process's registry of file algorithms
// (algorithm_file.h).
#include "collectives/plan/algorithm_file.h"

#include <deque>
#include <mutex>
#include <numeric>

#include "collectives/core/errors.h"
#include "collectives/core/input_file.h"

namespace cclab::plan {

std::string_view name(FileFormat f) { return f == FileFormat::MscclXml ? "msccl-xml" : "mscclpp-json"; }

FileFormat parseFileFormat(std::string_view s) {
  if (s == "msccl-xml") return FileFormat::MscclXml;
  if (s == "mscclpp-json") return FileFormat::MscclppJson;
  throw InvalidArgument("unknown algorithm file format '" + std::string(s) + "' (msccl-xml, mscclpp-json)");
}

AlgorithmFile unitOf(const Plan& plan, std::string name) {
  std::int64_t g = std::gcd(plan.count, plan.scratchCount);
  for (const auto& ops : plan.ranks)
    for (const Op& op : ops)
      for (const Range& r : {op.src, op.dst}) g = std::gcd(std::gcd(g, r.offset), r.count);
  if (g == 0) g = 1;
  AlgorithmFile f{std::move(name), plan};
  Plan& u = f.unit;
  u.count /= g;
  u.scratchCount /= g;
  for (auto& ops : u.ranks)
    for (Op& op : ops)
      for (Range* r : {&op.src, &op.dst}) {
        r->offset /= g;
        r->count /= g;
      }
  return f;
}

namespace {

bool blockedBuffer(Collective c, Buf b) {
  return (c == Collective::ReduceScatter && b == Buf::Input) || (c == Collective::AllGather && b == Buf::Output);
}

}  // namespace

Plan instantiate(const AlgorithmFile& file, Algorithm a, std::int64_t count) {
  const Plan& u = file.unit;
  if (count < 0) throw InvalidArgument("algorithm file '" + file.name + "': count must be >= 0");
  const std::int64_t U = u.count;
  if (U == 0 && count > 0) throw InvalidArgument("algorithm file '" + file.name + "' has no chunks to run a count on");
  const std::int64_t q = U == 0 ? 0 : count / U, rest = U == 0 ? 0 : count % U;
  Plan p = u;
  p.algorithm = a;
  p.count = count;
  p.scratchCount = u.scratchCount * q;
  auto scale = [&](Range r) {
    if (blockedBuffer(u.collective, r.buf)) {
      const std::int64_t b = r.offset / U, w = r.offset % U;
      if (rest > 0 && w + r.count > U)
        throw InvalidArgument("algorithm file '" + file.name + "' moves ranges across blocks, so it runs only counts that are multiples of " +
                              std::to_string(U) + " elements, not " + std::to_string(count));
      r.offset = b * count + w * q;
    } else {
      r.offset *= q;
    }
    r.count *= q;
    return r;
  };
  for (auto& ops : p.ranks) {
    std::vector<Op> scaled;
    scaled.reserve(ops.size());
    for (Op op : ops) {
      if (op.reads()) op.src = scale(op.src);
      if (op.writes()) op.dst = scale(op.dst);
      if (op.count() > 0) scaled.push_back(op);  // both ends of a message scale to 0 alike
    }
    ops = std::move(scaled);
  }
  if (rest == 0) return p;
  // The tail: the last `rest` elements of every block, as one more channel of a built-in algorithm.
  const Algorithm tailAlgorithm = isRooted(u.collective) ? Algorithm::Chain : Algorithm::Ring;
  const Plan tail = makePlan(u.collective, tailAlgorithm, u.nranks, rest, u.root);
  const int lane = p.nchannels;
  if (lane + tail.nchannels > kMaxChannels)
    throw InvalidArgument("algorithm file '" + file.name + "' has no channel left for the count's remainder");
  const std::int64_t base = q * U, scratchBase = p.scratchCount;
  auto shift = [&](Range r) {
    if (r.buf == Buf::Scratch)
      r.offset += scratchBase;
    else if (blockedBuffer(u.collective, r.buf))
      r.offset = (r.offset / rest) * count + base + r.offset % rest;
    else
      r.offset += base;
    return r;
  };
  for (int r = 0; r < u.nranks; ++r)
    for (Op op : tail.ranks[static_cast<std::size_t>(r)]) {
      op.channel = static_cast<std::uint8_t>(lane + op.channel);
      if (op.reads()) op.src = shift(op.src);
      if (op.writes()) op.dst = shift(op.dst);
      p.ranks[static_cast<std::size_t>(r)].push_back(op);
    }
  p.nchannels += tail.nchannels;
  p.nphases = std::max(p.nphases, tail.nphases);
  p.scratchCount += tail.scratchCount;
  return p;
}

AlgorithmFile importAlgorithm(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '<') return importMscclXml(text);
  if (first != std::string_view::npos && text[first] == '{') return importMscclppJson(text);
  throw InvalidArgument("an algorithm file is MSCCL XML (starts with '<') or an MSCCL++ JSON plan (starts with '{')");
}

std::string exportAlgorithm(const AlgorithmFile& file, FileFormat format) {
  return format == FileFormat::MscclXml ? exportMscclXml(file) : exportMscclppJson(file);
}

namespace {

struct Registered {
  std::string name;  // "file:PATH"
  AlgorithmFile file;
};

std::mutex& registryMutex() {
  static std::mutex m;
  return m;
}
std::deque<Registered>& registry() {  // never shrinks: references stay valid for the process
  static std::deque<Registered> r;
  return r;
}

// Most bytes an algorithm file may have (a generous bound: a 1024-rank file of many steps).
constexpr std::uint64_t kMaxFileBytes = std::size_t{256} << 20;

// The one opener's refusals (a directory, a FIFO, a device, a file past the cap), as "file:PATH: ...".
std::string readFile(const std::string& path) { return readInputFile(path, "file:" + path, kMaxFileBytes); }

}  // namespace

Algorithm loadAlgorithmFile(const std::string& path) {
  const std::string key = "file:" + path;
  {
    std::lock_guard lock(registryMutex());
    const auto& r = registry();
    for (std::size_t i = 0; i < r.size(); ++i)
      if (r[i].name == key) return static_cast<Algorithm>(kFirstFileAlgorithm + static_cast<int>(i));
  }
  AlgorithmFile file;
  try {
    file = importAlgorithm(readFile(path));
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    throw InvalidArgument(what.rfind(key, 0) == 0 ? what : key + ": " + what);
  }
  std::lock_guard lock(registryMutex());
  auto& r = registry();
  for (std::size_t i = 0; i < r.size(); ++i)  // another thread may have loaded it meanwhile
    if (r[i].name == key) return static_cast<Algorithm>(kFirstFileAlgorithm + static_cast<int>(i));
  if (static_cast<int>(r.size()) >= kMaxFileAlgorithms)
    throw InvalidArgument(key + ": more than " + std::to_string(kMaxFileAlgorithms) + " algorithm files in one process");
  r.push_back({key, std::move(file)});
  return static_cast<Algorithm>(kFirstFileAlgorithm + static_cast<int>(r.size()) - 1);
}

namespace {
const Registered& entryOf(Algorithm a) {
  const int i = static_cast<int>(a) - kFirstFileAlgorithm;
  std::lock_guard lock(registryMutex());
  const auto& r = registry();
  if (i < 0 || i >= static_cast<int>(r.size()))
    throw InvalidArgument("algorithm value " + std::to_string(static_cast<int>(a)) + " is no loaded algorithm file");
  return r[static_cast<std::size_t>(i)];
}
}  // namespace

const AlgorithmFile& algorithmFileOf(Algorithm a) { return entryOf(a).file; }
std::string_view fileAlgorithmName(Algorithm a) { return entryOf(a).name; }

}  // namespace cclab::plan
