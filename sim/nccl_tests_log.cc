#include "sim/nccl_tests_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "collectives/conventions/size.h"
#include "collectives/core/input_file.h"

namespace cclab::sim {
namespace {

using plan::Collective;

constexpr std::size_t kMaxWarnings = 20;

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> t;
  for (std::string w; in >> w;) t.push_back(w);
  return t;
}

// Every character a digit, and the value within 64 bits ("99999999999999999999" does not read).
bool wholeNumber(const std::string& s, long long& out) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}
bool signedNumber(const std::string& s, long long& out) {
  if (!s.empty() && s[0] == '-') {
    if (!wholeNumber(s.substr(1), out)) return false;
    out = -out;
    return true;
  }
  return wholeNumber(s, out);
}
bool realNumber(const std::string& s, double& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  // The whole token: a NUL inside it ("68\0") would stop strtod early and read as its prefix.
  return end == s.c_str() + s.size() && errno == 0 && std::isfinite(out);
}

// "…/all_reduce_perf_mpi" -> "all_reduce_perf" when the line names a nccl-tests binary: a word of
// lower-case letters and '_' ending in "_perf" (then "_mpi" or the end of the word). A plain scan, not
// std::regex, whose backtracking recurses on long lines.
std::optional<std::string> binaryIn(const std::string& line) {
  const auto word = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  for (std::size_t at = line.find("_perf"); at != std::string::npos; at = line.find("_perf", at + 1)) {
    std::size_t begin = at;
    while (begin > 0 && word(line[begin - 1])) --begin;
    std::size_t end = at + 5;
    if (line.compare(end, 4, "_mpi") == 0) end += 4;
    const bool ends = end == line.size() || !(word(line[end]) || (line[end] >= '0' && line[end] <= '9'));
    if (begin < at && ends) return line.substr(begin, at + 5 - begin);
  }
  return std::nullopt;
}

// Whether type/redop/root fit the collective.
bool fits(Collective c, const std::string& redop, int root) {
  const bool reduces = redop != "none";
  switch (c) {
    case Collective::AllReduce:
    case Collective::ReduceScatter:
      return reduces && root == -1;
    case Collective::AllGather:
      return !reduces && root == -1;
    case Collective::Broadcast:
      return !reduces && root >= 0;
    case Collective::Reduce:
      return reduces && root >= 0;
  }
  return false;
}

bool bandwidthAgrees(Bytes size, double time, double algbw) {
  const double expect = static_cast<double>(size) / (time * 1e3);
  return std::fabs(expect - algbw) <= 0.0051 + 0.005 * expect;
}

// A line as the program printed it, without the label a launcher puts in front: srun --label's
// "12: " and OpenMPI --tag-output's "[1,12]<stdout>:" (nccl-tests logs are often posted so).
std::string withoutLaunchLabel(const std::string& line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  const std::size_t digits = i;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
  if (i > digits && i < line.size() && line[i] == ':' && (i + 1 == line.size() || line[i + 1] == ' ')) return line.substr(i + 1);
  if (line.compare(0, 1, "[") == 0) {
    const auto close = line.find("]<std");
    const auto colon = close == std::string::npos ? std::string::npos : line.find(">:", close);
    if (colon != std::string::npos && colon < 32) return line.substr(colon + 2);
  }
  return line;
}

struct Parser {
  const std::string& source;
  std::optional<Collective> chosen;
  int givenRanks = 0;  // the caller's rank count, for runs whose log has no '#  Rank N' lines
  NcclTestsLog log;
  std::optional<std::string> pendingBinary;
  bool inRun = false;
  bool runUsable = true;
  NcclTestsRun run;
  std::size_t rows = 0;

  void warn(int line, const std::string& what) {
    if (log.warnings.size() < kMaxWarnings) log.warnings.push_back(fmt::format("{} line {}: {}", source, line, what));
  }
  [[noreturn]] void fail(int line, const std::string& what) const {
    throw MeasuredError(fmt::format("nccl-tests log '{}' line {}: {}", source, line, what));
  }

  void finish(int line) {
    if (!inRun) return;
    inRun = false;
    if (!runUsable) return;
    if (run.rows.empty()) return;
    if (run.nranks <= 0 && givenRanks <= 0)
      fail(line, "a run without '#  Rank N' lines: its rank count is unknown (give it: compare -g N, or --nodes and --gpus)");
    if (run.nranks <= 0) run.nranks = givenRanks;
    run.index = static_cast<int>(log.runs.size());
    log.runs.push_back(run);
  }

  void start(const std::vector<std::string>& t, int line) {
    finish(line);
    inRun = true;
    runUsable = true;
    run = {};
    run.source = source;
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      long long v = 0;
      if (t[i] == "nThread" && wholeNumber(t[i + 1], v)) run.threads = static_cast<int>(v);
      if (t[i] == "nGpus" && wholeNumber(t[i + 1], v)) run.gpus = static_cast<int>(v);
      if (t[i] == "graph:" && wholeNumber(t[i + 1], v)) run.graph = v != 0;
    }
    if (pendingBinary) {
      run.binary = *pendingBinary;
      const auto c = collectiveOfBinary(*pendingBinary);
      if (!c) {
        runUsable = false;
        warn(line, "a run of " + *pendingBinary + ": no model of that collective, its rows are skipped");
        return;
      }
      run.collective = *c;
    } else if (chosen) {
      run.collective = *chosen;
    } else {
      fail(line,
           "the log does not say which collective it measured (no '*_perf' command line or 'Collective test starting'); "
           "give --collective");
    }
  }

  void row(const std::vector<std::string>& t, int line) {
    if (!inRun) {
      ++log.skippedRows;
      warn(line, "a table row before any '# nThread' header: skipped");
      return;
    }
    if (!runUsable) {
      ++log.skippedRows;
      return;
    }
    if (++rows > kMaxLogRows) fail(line, fmt::format("more than {} rows: not a nccl-tests log", kMaxLogRows));
    const bool hasRoot = t.size() == 13;
    if (t.size() != 13 && t.size() != 12) {
      ++log.skippedRows;
      warn(line, fmt::format("a row of {} fields (a table row has 12 or 13): skipped", t.size()));
      return;
    }
    NcclTestsRow r;
    r.line = line;
    long long size = 0, count = 0, root = -1;
    std::size_t i = 0;
    bool ok = wholeNumber(t[i++], size) && wholeNumber(t[i++], count);
    r.type = t[i++];
    r.redop = t[i++];
    if (hasRoot) ok = ok && signedNumber(t[i++], root);
    double oopT = 0, oopAlg = 0, oopBus = 0, ipT = 0, ipAlg = 0, ipBus = 0;
    const bool oop = realNumber(t[i], oopT) && realNumber(t[i + 1], oopAlg) && realNumber(t[i + 2], oopBus);
    i += 4;
    const bool ip = realNumber(t[i], ipT) && realNumber(t[i + 1], ipAlg) && realNumber(t[i + 2], ipBus);
    std::int64_t elem = 0;
    try {
      elem = elemSizeOf(r.type);
    } catch (const std::exception&) {
      ok = false;
    }
    const std::string where = fmt::format("size {}", t[0]);
    if (!ok || (!oop && !ip)) {
      ++log.skippedRows;
      warn(line, "a row whose fields do not read (" + where + "): skipped");
      return;
    }
    if (size <= 0 || size > kMaxMeasuredBytes) {
      ++log.skippedRows;
      warn(line, "a row of size 0 or past 1 PiB: skipped");
      return;
    }
    const bool perRank = run.collective == Collective::AllGather || run.collective == Collective::ReduceScatter;
    const int ranks = run.nranks > 0 ? run.nranks : givenRanks;
    const long long expectCount = perRank ? size / elem / std::max(1, ranks) : size / elem;
    if (count != expectCount || !fits(run.collective, r.redop, static_cast<int>(root))) {
      ++log.skippedRows;
      warn(line, fmt::format("a row that is not {} on {} ranks ({}, count {}, redop {}, root {}): skipped", plan::name(run.collective),
                             ranks, where, count, r.redop, root));
      return;
    }
    const auto timeOk = [&](double time, double alg) { return time > 0 && time <= kMaxMeasuredMicros && bandwidthAgrees(size, time, alg); };
    r.size = size;
    r.count = count;
    r.root = static_cast<int>(root);
    const bool oopOk = oop && timeOk(oopT, oopAlg), ipOk = ip && timeOk(ipT, ipAlg);
    if (oopOk) {
      r.oopTime = oopT;
      r.oopBusbw = oopBus;
    }
    if (ipOk) {
      r.ipTime = ipT;
      r.ipBusbw = ipBus;
    }
    if (!oopOk && !ipOk) {
      ++log.skippedRows;
      warn(line, "a row whose algbw does not agree with size / time (" + where + "): skipped");
      return;
    }
    if (!oopOk || !ipOk) {
      // The row stays with its other column; the one dropped is counted and said, never lost silently.
      const std::size_t at = hasRoot ? (oopOk ? 9 : 5) : (oopOk ? 8 : 4);
      ++log.droppedCells;
      warn(line, fmt::format("the {} time '{}' ({}) is not a time of that size (not a number, not above 0, or algbw not size / time): "
                             "that column dropped, the row kept",
                             oopOk ? "in-place" : "out-of-place", t[at], where));
    }
    run.rows.push_back(r);
  }

  void parse(const std::string& text) {
    std::istringstream in(text);
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      line = withoutLaunchLabel(line);
      const auto t = tokens(line);
      if (t.empty()) continue;
      if (t[0] == "#" || t[0][0] == '#') {
        const std::string body = line.substr(line.find('#') + 1);
        const auto b = tokens(body);
        if (!b.empty() && b[0] == "nThread") {
          start(b, n);
        } else if (!inRun && b.size() >= 3 && b[0] == "size" && b[1] == "count" && b[2] == "type") {
          start({}, n);  // a table posted without its '# nThread' header (vendor pages, srun output)
        } else if (b.size() >= 2 && b[0] == "Rank") {
          long long r = 0;
          if (inRun && wholeNumber(b[1], r)) {
            // Bounded here, before any topology of that many ranks is built (a compare builds one per run).
            if (r >= kMaxLogRanks)
              fail(n, fmt::format("'#  Rank {}': more than the {} ranks a run of a log can have", b[1], kMaxLogRanks));
            run.nranks = std::max(run.nranks, static_cast<int>(r) + 1);
          }
        } else if (body.find("Collective test starting:") != std::string::npos) {
          pendingBinary = binaryIn(body);
        }
        continue;
      }
      // A line led by digits looks like a row, even when the number overflows: row() then skips and counts it.
      if (std::all_of(t[0].begin(), t[0].end(), [](char c) { return c >= '0' && c <= '9'; })) {
        row(t, n);
        continue;
      }
      if (auto bin = binaryIn(line)) {
        // A command line: the runs after it are of this binary.
        finish(n);
        pendingBinary = bin;
      }
    }
    finish(n);
    if (log.runs.empty())
      throw MeasuredError(fmt::format("nccl-tests log '{}': no table row read{} (is it a *_perf output?)", source,
                                      log.skippedRows > 0 ? fmt::format(" ({} skipped)", log.skippedRows) : ""));
  }
};

}  // namespace

std::optional<Collective> collectiveOfBinary(const std::string& name) {
  if (name == "all_reduce_perf") return Collective::AllReduce;
  if (name == "reduce_scatter_perf") return Collective::ReduceScatter;
  if (name == "all_gather_perf") return Collective::AllGather;
  if (name == "broadcast_perf") return Collective::Broadcast;
  if (name == "reduce_perf") return Collective::Reduce;
  return std::nullopt;
}

NcclTestsLog parseNcclTestsLog(const std::string& text, const std::string& source, std::optional<Collective> collective, int ranks) {
  Parser p{source, collective, ranks, {}, {}, false, true, {}, 0};
  p.parse(text);
  return p.log;
}

namespace {
std::string readText(const std::string& path) {
  try {
    return readInputFile(path, "measured file '" + path + "'");
  } catch (const InvalidArgument& e) {
    throw MeasuredError(e.what());
  }
}
}  // namespace

NcclTestsLog loadNcclTestsLog(const std::string& path, std::optional<Collective> collective, int ranks) {
  return parseNcclTestsLog(readText(path), path, collective, ranks);
}

NcclTestsLog loadMeasuredLog(const std::string& path, std::optional<Collective> collective, int ranks) {
  const std::string text = readText(path);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return parseNcclTestsLog(text, path, collective, ranks);
  const Measurement m = loadMeasurement(path);
  NcclTestsLog log;
  NcclTestsRun run;
  run.source = path;
  run.collective = m.collective;
  run.nranks = m.nranks;
  run.binary = std::string(plan::name(m.collective));
  for (const auto& p : m.points) {
    NcclTestsRow r;
    r.size = p.size;
    r.count = p.count;
    r.type = m.type;
    r.redop = "sum";
    r.oopTime = p.time;
    run.rows.push_back(r);
  }
  log.runs.push_back(run);
  return log;
}

Measurement toMeasurement(const NcclTestsRun& run, plan::Algorithm algorithm) {
  Measurement m;
  m.source = run.source + (run.index > 0 ? fmt::format("#{}", run.index) : "");
  m.collective = run.collective;
  m.algorithm = algorithm;
  m.nranks = run.nranks;
  if (!run.rows.empty()) {
    m.type = run.rows[0].type;
    m.elemSize = elemSizeOf(m.type);
  }
  for (const auto& r : run.rows)
    if (r.type == m.type) m.points.push_back({r.size, r.count, r.oopTime > 0 ? r.oopTime : r.ipTime});
  return m;
}

}  // namespace cclab::sim
