// A small getopt-like parser shared by every *_perf tool and peer: each tool registers the flags it
// accepts (short name, long name, help) with a setter; parse() walks argv and reports the first
// problem as a UsageError naming the flag. Accepted forms: "-b 8", "-b8", "--minbytes 8",
// "--minbytes=8"; flags without a value: "-h", "--help".
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cclab::bench {

class CommandLine {
 public:
  using ValueSetter = std::function<void(std::string_view value)>;
  using SwitchSetter = std::function<void()>;

  explicit CommandLine(std::string program) : program_(std::move(program)) {}

  // A flag that takes a value. shortName may be '\0' (long form only).
  void addOption(char shortName, std::string longName, std::string valueName, std::string help, ValueSetter set);
  // A flag without a value.
  void addSwitch(char shortName, std::string longName, std::string help, SwitchSetter set);

  // Applies argv[1..argc) in order. Throws UsageError: unknown flag, missing value, positional
  // argument, or a setter's own UsageError prefixed with the flag ("-b/--minbytes: ...").
  void parse(int argc, const char* const* argv) const;

  [[nodiscard]] std::string usage() const;
  [[nodiscard]] const std::string& program() const { return program_; }

 private:
  struct Flag {
    char shortName = '\0';
    std::string longName;
    std::string valueName;  // empty: a switch
    std::string help;
    ValueSetter setValue;
    SwitchSetter setSwitch;
  };
  [[nodiscard]] const Flag* findShort(char c) const;
  [[nodiscard]] const Flag* findLong(std::string_view name) const;
  static std::string display(const Flag& f);
  static void apply(const Flag& f, std::string_view value);

  std::string program_;
  std::vector<Flag> flags_;
};

}  // namespace cclab::bench
