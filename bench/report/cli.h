// The command line of every *_perf tool and peer, on CLI11: each tool registers the flags it accepts
// (short name, long name, value name, help) with a setter, so the harness and the peers parse the
// shared flags identically. nccl-tests' spellings all work: "-b 8", "-b8", "--minbytes 8",
// "--minbytes=8"; a flag given twice keeps the last value (getopt's rule). Every problem is one
// UsageError line naming the flag.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace cclab::bench {

class CommandLine {
 public:
  using ValueSetter = std::function<void(std::string_view value)>;
  using SwitchSetter = std::function<void()>;

  explicit CommandLine(std::string program);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // A flag that takes a value. shortName may be '\0' (long form only).
  void addOption(char shortName, const std::string& longName, const std::string& valueName, const std::string& help,
                 ValueSetter set);
  // A flag without a value.
  void addSwitch(char shortName, const std::string& longName, const std::string& help, SwitchSetter set);

  // Parses argv[1..argc) and runs the setters. Throws UsageError: unknown flag, missing value, stray
  // argument, or a setter's error prefixed with its flag ("-b/--minbytes: ...").
  void parse(int argc, const char* const* argv);

  // "usage: TOOL [flags]" and one line per flag: "-b/--minbytes SIZE   help".
  [[nodiscard]] std::string usage() const;

 private:
  std::string program_;
  std::unique_ptr<CLI::App> app_;
};

}  // namespace cclab::bench
