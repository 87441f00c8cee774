// The start-of-job agreement of a multi-process run (under mpirun): right after MPI_Init every
// process describes what it was asked to run (a JobProposal: its command line's outcome, the fields
// of its configuration, its host and the host memory it will allocate), rank 0 collects them and
// judges: a rank with a usage error, ranks that disagree on a field, or a node whose ranks need more
// memory together than it has refuse the whole job with one line (exit 2) before any buffer exists.
// This file is the judgement and the wire format (pure, tested without MPI); collectives/job.h
// carries the proposals between processes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cclab::conventions {

enum class JobStatus : std::uint8_t {
  Run,    // the command line parsed: run it
  Help,   // --help (or another flag that prints and exits 0)
  Usage,  // a usage error: `message` is its line
};

struct JobProposal {
  JobStatus status = JobStatus::Run;
  std::string message;  // Usage: the error; Help: which help ("--help", "--help-env")
  // What every rank must agree on, in the order a mismatch is looked for (first differing field named).
  std::vector<std::pair<std::string, std::string>> fields;
  std::string host;                  // ranks with the same host share its memory
  std::int64_t hostBytes = 0;        // host memory this rank will allocate
  std::int64_t hostAvailable = -1;   // MemAvailable as this rank reads it; -1: unknown (nothing refused)
  std::string memoryWhat;            // what needs the memory, for the refusal ("-e 4294967296 on -g 1")

  void add(std::string name, std::string value) { fields.emplace_back(std::move(name), std::move(value)); }
};

enum class JobAction : std::uint8_t { Run, Help, Refuse };

struct JobVerdict {
  JobAction action = JobAction::Run;
  std::string message;  // Refuse: the one line rank 0 prints (without the tool's prefix)
  [[nodiscard]] int exitCode() const { return action == JobAction::Refuse ? 2 : 0; }
};

// The proposals of ranks 0..n-1 (index = rank) judged, in this order: the lowest rank with a usage error
// ("rank R: <its error>", R left out when it is rank 0); ranks that disagree on --help; the first field
// on which the ranks differ ("ranks disagree on -e: rank 0 has 8, rank 1 has 16"); a host whose ranks
// need more than its available memory together. Help when every rank asked for it; else Run.
[[nodiscard]] JobVerdict judge(std::span<const JobProposal> ranks);

// "0", "0-3", "0-2,5": a sorted list of ranks, consecutive runs joined.
[[nodiscard]] std::string rankList(std::span<const int> ranks);

// The wire format: a proposal as bytes and back (parse throws InvalidArgument on a malformed text).
[[nodiscard]] std::string serialize(const JobProposal& p);
[[nodiscard]] JobProposal parseProposal(std::string_view text);

}  // namespace cclab::conventions
