// The start-of-job judgement and its wire format (job_agreement.h).
#include "collectives/conventions/job_agreement.h"

#include <algorithm>
#include <charconv>
#include <map>

#include <fmt/format.h>

#include "collectives/core/errors.h"

namespace cclab::conventions {
namespace {

constexpr double kBytesPerGiB = 1024.0 * 1024 * 1024;
// A field value shown in a refusal is cut here, so the line stays one readable line.
constexpr std::size_t kShownValueChars = 60;
// Groups of ranks with different values shown in one refusal (then "...").
constexpr std::size_t kShownGroups = 3;

std::string shownValue(std::string_view v) {
  if (v.size() <= kShownValueChars) return fmt::format("'{}'", v);
  return fmt::format("'{}...'", v.substr(0, kShownValueChars));
}

std::string ranksWord(std::span<const int> ranks) { return (ranks.size() == 1 ? "rank " : "ranks ") + rankList(ranks); }

std::string gib(std::int64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / kBytesPerGiB); }

// The ranks grouped by value, groups in the order of their lowest rank (rank 0's first).
std::vector<std::pair<std::string, std::vector<int>>> groupsOf(std::span<const std::string> values) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (std::size_t r = 0; r < values.size(); ++r) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == values[r]; });
    if (it == groups.end()) {
      groups.push_back({values[r], {}});
      it = groups.end() - 1;
    }
    it->second.push_back(static_cast<int>(r));
  }
  return groups;
}

std::string disagreement(std::string_view field, std::span<const std::string> values) {
  const auto groups = groupsOf(values);
  std::string line = "ranks disagree on " + std::string(field) + ":";
  for (std::size_t g = 0; g < groups.size() && g < kShownGroups; ++g) {
    const auto& [value, ranks] = groups[g];
    line += fmt::format("{}{} {} {}", g ? ", " : " ", ranksWord(ranks), ranks.size() == 1 ? "has" : "have", shownValue(value));
  }
  if (groups.size() > kShownGroups) line += ", ...";
  return line + " (every rank must be started with the same configuration)";
}

// Wire format: every item a decimal length, ':', the bytes.
void put(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}
  std::string_view next() {
    const auto colon = text_.find(':');
    std::size_t n = 0;
    if (colon == std::string_view::npos || std::from_chars(text_.data(), text_.data() + colon, n).ptr != text_.data() + colon ||
        n > text_.size() - colon - 1)
      throw InvalidArgument("job agreement: a malformed proposal");
    const std::string_view item = text_.substr(colon + 1, n);
    text_.remove_prefix(colon + 1 + n);
    return item;
  }
  std::int64_t number() {
    const std::string_view s = next();
    std::int64_t v = 0;
    if (std::from_chars(s.data(), s.data() + s.size(), v).ptr != s.data() + s.size() || s.empty())
      throw InvalidArgument("job agreement: a malformed number in a proposal");
    return v;
  }
  [[nodiscard]] bool done() const { return text_.empty(); }

 private:
  std::string_view text_;
};

}  // namespace

std::string rankList(std::span<const int> ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ranks[i]);
    if (j > i) out += fmt::format("-{}", ranks[j]);
    i = j + 1;
  }
  return out;
}

JobVerdict judge(std::span<const JobProposal> ranks) {
  if (ranks.empty()) return {};
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r].status == JobStatus::Usage)
      return {JobAction::Refuse, (r ? "rank " + std::to_string(r) + ": " : std::string()) + ranks[r].message};

  std::vector<std::string> values(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r)
    values[r] = ranks[r].status == JobStatus::Help ? "asked for " + ranks[r].message : "runs";
  if (groupsOf(values).size() > 1) return {JobAction::Refuse, disagreement("--help", values)};
  if (ranks.front().status == JobStatus::Help) return {JobAction::Help, {}};

  // Fields by name, in rank 0's order; a field one rank lacks counts as "(absent)".
  std::vector<std::string> names;
  for (const JobProposal& p : ranks)
    for (const auto& [name, value] : p.fields)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  for (const std::string& name : names) {
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const auto& f = ranks[r].fields;
      const auto it = std::find_if(f.begin(), f.end(), [&](const auto& kv) { return kv.first == name; });
      values[r] = it == f.end() ? "(absent)" : it->second;
    }
    if (groupsOf(values).size() > 1) return {JobAction::Refuse, disagreement(name, values)};
  }

  // Memory per host: the ranks on one host allocate together from the same MemAvailable.
  struct HostSum {
    std::int64_t bytes = 0;
    std::int64_t available = -1;
    std::vector<int> ranks;
  };
  std::map<std::string, HostSum> hosts;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    HostSum& h = hosts[ranks[r].host];
    if (__builtin_add_overflow(h.bytes, ranks[r].hostBytes, &h.bytes)) h.bytes = INT64_MAX;
    if (ranks[r].hostAvailable >= 0)
      h.available = h.available < 0 ? ranks[r].hostAvailable : std::min(h.available, ranks[r].hostAvailable);
    h.ranks.push_back(static_cast<int>(r));
  }
  for (const auto& [host, h] : hosts) {
    if (h.available < 0 || h.bytes <= h.available || h.ranks.size() < 2) continue;  // one rank: its own check said so
    const JobProposal& first = ranks[static_cast<std::size_t>(h.ranks.front())];
    return {JobAction::Refuse,
            fmt::format("{} needs {} bytes ({}) of host memory on {} for its {} ({} each on average), only {} bytes ({}) are "
                        "available (MemAvailable)",
                        first.memoryWhat.empty() ? "the job" : first.memoryWhat, h.bytes, gib(h.bytes), host.empty() ? "one host" : host,
                        ranksWord(h.ranks), gib(h.bytes / static_cast<std::int64_t>(h.ranks.size())), h.available, gib(h.available))};
  }
  return {};
}

std::string serialize(const JobProposal& p) {
  std::string out;
  put(out, std::to_string(static_cast<int>(p.status)));
  put(out, p.message);
  put(out, p.host);
  put(out, std::to_string(p.hostBytes));
  put(out, std::to_string(p.hostAvailable));
  put(out, p.memoryWhat);
  put(out, std::to_string(p.fields.size()));
  for (const auto& [name, value] : p.fields) {
    put(out, name);
    put(out, value);
  }
  return out;
}

JobProposal parseProposal(std::string_view text) {
  Reader in(text);
  JobProposal p;
  const std::int64_t status = in.number();
  if (status < 0 || status > static_cast<int>(JobStatus::Usage)) throw InvalidArgument("job agreement: an unknown status");
  p.status = static_cast<JobStatus>(status);
  p.message = in.next();
  p.host = in.next();
  p.hostBytes = in.number();
  p.hostAvailable = in.number();
  p.memoryWhat = in.next();
  const std::int64_t n = in.number();
  if (n < 0 || static_cast<std::size_t>(n) > text.size()) throw InvalidArgument("job agreement: a malformed field count");
  for (std::int64_t i = 0; i < n; ++i) {
    std::string name(in.next());
    p.add(std::move(name), std::string(in.next()));
  }
  if (!in.done()) throw InvalidArgument("job agreement: trailing bytes in a proposal");
  return p;
}

}  // namespace cclab::conventions
