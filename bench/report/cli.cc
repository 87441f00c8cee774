// CommandLine (cli.h) on CLI11: flag registration, one-line errors, the help text.
#include "bench/report/cli.h"

#include <algorithm>
#include <exception>

#include <CLI/CLI.hpp>

#include "bench/report/usage_error.h"

namespace cclab::bench {
namespace {

// "-b" and "--minbytes" joined by `separator`: "," for CLI11's name list, "/" for messages and help.
std::string joinNames(char shortName, const std::string& longName, const char* separator) {
  std::string s;
  if (shortName) s += std::string("-") + shortName;
  if (shortName && !longName.empty()) s += separator;
  if (!longName.empty()) s += "--" + longName;
  return s;
}

std::string display(char shortName, const std::string& longName) { return joinNames(shortName, longName, "/"); }
std::string cliNames(char shortName, const std::string& longName) { return joinNames(shortName, longName, ","); }

std::string oneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

CommandLine::CommandLine(std::string program) : program_(std::move(program)), app_(std::make_unique<CLI::App>(program_)) {
  app_->set_help_flag();  // -h/--help is registered by the tool, and usage() prints the flags
  app_->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

CommandLine::~CommandLine() = default;

void CommandLine::addOption(char shortName, const std::string& longName, const std::string& valueName,
                            const std::string& help, ValueSetter set) {
  const std::string shown = display(shortName, longName);
  app_->add_option_function<std::string>(
          cliNames(shortName, longName),
          [shown, set = std::move(set)](const std::string& value) {
            try {
              set(value);
            } catch (const std::exception& e) {  // UsageError, or InvalidArgument from the collectives API
              const std::string what = e.what();
              throw UsageError(what.rfind(shown, 0) == 0 ? what : shown + ": " + what);
            }
          },
          help)
      ->type_name(valueName);
}

void CommandLine::addSwitch(char shortName, const std::string& longName, const std::string& help, SwitchSetter set) {
  app_->add_flag_callback(cliNames(shortName, longName), std::move(set), help);
}

void CommandLine::parse(int argc, const char* const* argv) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    throw UsageError(oneLine(e.what()) + " (see --help)");
  }
}

std::string CommandLine::usage() const {
  constexpr std::size_t kHelpColumn = 34;
  std::string s = "usage: " + program_ + " [flags]\n";
  for (const CLI::Option* o : app_->get_options()) {
    const auto& shorts = o->get_snames();
    const auto& longs = o->get_lnames();
    std::string left = "  " + display(shorts.empty() ? '\0' : shorts.front().front(), longs.empty() ? "" : longs.front());
    if (!o->get_type_name().empty()) left += " " + o->get_type_name();
    left.resize(std::max(kHelpColumn, left.size() + 2), ' ');
    s += left + o->get_description() + "\n";
  }
  return s;
}

}  // namespace cclab::bench
