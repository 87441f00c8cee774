// Algorithms as files: MSCCL XML algorithms and MSCCL++ JSON execution plans in, any plan out
// (docs/algorithms-as-files.md).
//
// A file describes one algorithm for a fixed rank count in *chunks*: every buffer of a rank is cut into
// equal chunks and every step moves whole chunks. cclab holds it as a UnitPlan: a Plan whose count is
// the chunks per rank buffer (U) and whose ranges are in chunks. It runs on `count` elements as the
// same plan with every offset and count multiplied by q = count / U; a count that is not a multiple of
// U runs its first q·U elements so and the remaining count mod U elements (at the end of every block)
// as one more channel of the built-in ring (chain for broadcast and reduce), which needs no range of
// the file to cross a block of a blocked buffer.
//
// Export goes the other way: the plan's ranges divided by their greatest common divisor with the
// count, so importing what was exported and running it at the same count gives the same plan.
//
// With `--algo file:PATH` (parseAlgorithm) a file becomes an Algorithm value of its own (from
// kFirstFileAlgorithm up), registered once per process and path, which makePlan, hasGenerator and
// name() resolve like a built-in one; executors and the simulator need nothing new.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "collectives/plan/plan.h"

namespace cclab::plan {

// An algorithm read from a file (or made from a plan to be written to one).
struct AlgorithmFile {
  std::string name;  // the file's own name for the algorithm
  Plan unit;         // count = chunks per rank buffer; ranges, scratch in chunks (see the header comment)
};

enum class FileFormat : std::uint8_t { MscclXml, MscclppJson };
std::string_view name(FileFormat f);  // "msccl-xml", "mscclpp-json"
FileFormat parseFileFormat(std::string_view s);  // throws InvalidArgument

// The unit plan of a plan: ranges, scratch and count divided by their greatest common divisor.
AlgorithmFile unitOf(const Plan& plan, std::string name);

// The unit plan run on `count` elements (see the header comment), algorithm `a`. Throws
// InvalidArgument when nranks or root differ from the file's, or the count cannot be expressed.
Plan instantiate(const AlgorithmFile& file, Algorithm a, std::int64_t count);

// The readers and writers (msccl_xml.cc, mscclpp_json.cc). A reader validates what it read (the unit
// plan, validate.h) and throws InvalidArgument with a one-line reason for anything it cannot express.
AlgorithmFile importMscclXml(std::string_view text);
AlgorithmFile importMscclppJson(std::string_view text);
std::string exportMscclXml(const AlgorithmFile& file);
std::string exportMscclppJson(const AlgorithmFile& file);
// By the first character that is not white space: '<' XML, '{' JSON.
AlgorithmFile importAlgorithm(std::string_view text);
std::string exportAlgorithm(const AlgorithmFile& file, FileFormat format);

// Limits a file may declare (a file asking for more is refused before anything is allocated).
inline constexpr int kMaxFileRanks = 1024;
inline constexpr std::int64_t kMaxFileChunks = std::int64_t{1} << 16;  // per buffer of a rank
// Chunks x ranks x ranks of a file: what the validator's symbolic check of its unit plan holds.
inline constexpr std::int64_t kMaxFileCheckCells = std::int64_t{1} << 26;
inline constexpr std::int64_t kMaxFileSteps = std::int64_t{1} << 20;   // in the whole file

// The file algorithms of this process: Algorithm values kFirstFileAlgorithm.. name "file:PATH".
inline constexpr int kFirstFileAlgorithm = 64;
inline constexpr int kMaxFileAlgorithms = 255 - kFirstFileAlgorithm;
constexpr bool isFileAlgorithm(Algorithm a) { return static_cast<int>(a) >= kFirstFileAlgorithm; }
// Reads and registers PATH (once: the same path gives the same value); throws InvalidArgument naming
// the path for a file that cannot be read or imported.
Algorithm loadAlgorithmFile(const std::string& path);
// The registered file of `a` (isFileAlgorithm(a)); throws InvalidArgument for an unknown value.
const AlgorithmFile& algorithmFileOf(Algorithm a);
// "file:PATH" of a registered file algorithm.
std::string_view fileAlgorithmName(Algorithm a);

}  // namespace cclab::plan
