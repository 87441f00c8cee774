// The CCLAB_* environment knobs, declared once: name, type, accepted range, default, one-line meaning
// (in the spirit of NCCL's NCCL_PARAM). Code reads a knob only through the accessors below, never
// with getenv; docs/knobs.md is this table (tests/core/knobs_test.cc fails when they differ), and
// `all_reduce_perf --help-env` prints it.
//
// Parsing is strict: a set value of the wrong form or out of range throws InvalidArgument with one
// line naming the knob ("CCLAB_SPIN_US='x': expected ..."), at the read and, for the tools, at start
// (checkAll). An empty value is refused too, except for library paths, where it means "the default
// search". Values are read at each access (not cached), so a test may set a knob for a scope.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cclab::knobs {

enum class Type {
  Switch,  // 0 or 1
  Integer,  // a whole number in [min, max]
  Bytes,    // a whole number of bytes in [min, max], with an optional K, M, G or T suffix (1K = 1024)
  Choice,   // one of `choices` ('|'-separated)
  Path,     // any text; empty: as if unset
};

struct Knob {
  std::string_view name;
  Type type;
  std::int64_t min = 0, max = 0;  // Integer and Bytes
  std::string_view choices;       // Choice
  std::string_view defaultValue;  // what applies when unset, as the tables show it
  std::string_view meaning;       // one line
};

enum class Id {
  RanksPerNode,
  SpinUs,
  LlMaxBytes,
  LlShares,
  LlGather,
  BindRanks,
  ProcShmBytes,
  ProcTransport,
  CudaProcStandIn,
  NcclLibrary,
  CublasLibrary,
  ExpectGpu,
};

inline constexpr std::int64_t kKiB = 1024;

// The table, in Id order.
inline constexpr std::array kTable{
    Knob{"CCLAB_RANKS_PER_NODE", Type::Integer, 0, 1024, {}, "0",
         "emulated nodes of this many consecutive ranks (hier's rings, MPI between nodes); 0: one node"},
    Knob{"CCLAB_SPIN_US", Type::Integer, 0, 10000, {}, "50 when ranks <= cores > 1, else 0",
         "host: busy period of a wait in microseconds, before it yields and sleeps"},
    Knob{"CCLAB_LL_MAX_BYTES", Type::Bytes, 0, 1024 * kKiB, {}, "1K host, 256 proc",
         "largest call (its largest buffer) on the LL path; 0: LL off"},
    Knob{"CCLAB_LL_SHARES", Type::Switch, 0, 1, {}, "1",
         "host: with more ranks than cores, LL calls run on one thread per core (0: a thread per rank)"},
    Knob{"CCLAB_LL_GATHER", Type::Switch, 0, 1, {}, "1",
         "host: one-shot LL group calls are gathered, rank 0 writes every output (0: every rank folds)"},
    Knob{"CCLAB_BIND_RANKS", Type::Switch, 0, 1, {}, "0",
         "host: 1 pins rank r's thread to CPU r mod cores at its first call"},
    Knob{"CCLAB_PROC_SHM_BYTES", Type::Bytes, 8 * kKiB, kKiB * kKiB * kKiB * kKiB, {}, "1G",
         "proc: each rank's shared segment (half for buffers, half for staging); at most /dev/shm's free share"},
    Knob{"CCLAB_PROC_TRANSPORT", Type::Choice, 0, 0, "shm|mpi", "shm",
         "proc: shm is shared memory within a node; mpi sends every pair over MPI (to compare)"},
    Knob{"CCLAB_CUDA_PROC_STANDIN", Type::Choice, 0, 0, "host", "unset",
         "host: --backend cuda under mpirun runs on a host stand-in device (rehearsal without a GPU)"},
    Knob{"CCLAB_NCCL_LIBRARY", Type::Path, 0, 0, {}, "libnccl.so.2, libnccl.so",
         "the NCCL library to load first (then the default names)"},
    Knob{"CCLAB_CUBLAS_LIBRARY", Type::Path, 0, 0, {}, "libcublas.so.13, .12, .so",
         "the cuBLAS library to load first (then the default names)"},
    Knob{"CCLAB_EXPECT_GPU", Type::Switch, 0, 1, {}, "0",
         "tests: 1 makes a GPU test that cannot run fail naming the reason instead of skipping"},
};

[[nodiscard]] constexpr const Knob& knob(Id id) { return kTable[static_cast<std::size_t>(id)]; }

// The value of a set knob, parsed; nullopt when unset (or, for a Path, empty). Throws InvalidArgument
// naming the knob when the value is malformed, out of range, or the knob is of another type.
[[nodiscard]] std::optional<std::int64_t> integer(Id id);  // Integer, Bytes
[[nodiscard]] std::optional<bool> flag(Id id);             // Switch
[[nodiscard]] std::optional<std::string> text(Id id);      // Choice, Path

// Parses `value` as `k` would be: the integer (Integer, Bytes, Switch as 0/1) or throws InvalidArgument.
// For Choice and Path it only checks the value (returns 0).
std::int64_t parse(const Knob& k, std::string_view value);

// Every knob set in the environment, parsed; throws InvalidArgument for the first bad one. Each
// tool calls it at start (a bad value is a usage error: one line, exit 2).
void checkAll();

// The type and range as the tables show it: "0..1024", "bytes 8K..1T", "0, 1", "shm, mpi", "path".
[[nodiscard]] std::string rangeText(const Knob& k);
// `--help-env`: one aligned line per knob (name, range, default, meaning).
[[nodiscard]] std::string helpText();
// The table of docs/knobs.md (a Markdown table, header included).
[[nodiscard]] std::string markdownTable();

}  // namespace cclab::knobs
