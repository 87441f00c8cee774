#include "bench/report/command_line.h"

#include <algorithm>

#include "bench/report/usage_error.h"

namespace cclab::bench {

void CommandLine::addOption(char shortName, std::string longName, std::string valueName, std::string help,
                            ValueSetter set) {
  flags_.push_back({shortName, std::move(longName), std::move(valueName), std::move(help), std::move(set), {}});
}

void CommandLine::addSwitch(char shortName, std::string longName, std::string help, SwitchSetter set) {
  flags_.push_back({shortName, std::move(longName), {}, std::move(help), {}, std::move(set)});
}

const CommandLine::Flag* CommandLine::findShort(char c) const {
  const auto it = std::find_if(flags_.begin(), flags_.end(), [c](const Flag& f) { return f.shortName == c; });
  return it == flags_.end() ? nullptr : &*it;
}

const CommandLine::Flag* CommandLine::findLong(std::string_view name) const {
  const auto it = std::find_if(flags_.begin(), flags_.end(), [name](const Flag& f) { return f.longName == name; });
  return it == flags_.end() ? nullptr : &*it;
}

std::string CommandLine::display(const Flag& f) {
  std::string s;
  if (f.shortName) s += std::string("-") + f.shortName;
  if (f.shortName && !f.longName.empty()) s += "/";
  if (!f.longName.empty()) s += "--" + f.longName;
  return s;
}

void CommandLine::apply(const Flag& f, std::string_view value) {
  try {
    f.setValue(value);
  } catch (const UsageError& e) {
    throw UsageError(display(f) + ": " + e.what());
  } catch (const std::exception& e) {  // parsers of the collectives API throw InvalidArgument etc.
    throw UsageError(display(f) + ": " + e.what());
  }
}

void CommandLine::parse(int argc, const char* const* argv) const {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const Flag* flag = nullptr;
    std::string_view inlineValue;
    bool hasInline = false;
    if (arg.size() > 2 && arg.substr(0, 2) == "--") {
      const std::string_view body = arg.substr(2);
      const auto eq = body.find('=');
      flag = findLong(body.substr(0, eq));
      if (eq != std::string_view::npos) {
        inlineValue = body.substr(eq + 1);
        hasInline = true;
      }
    } else if (arg.size() >= 2 && arg[0] == '-' && arg[1] != '-') {
      flag = findShort(arg[1]);
      if (arg.size() > 2) {
        inlineValue = arg.substr(2);
        hasInline = true;
      }
    } else {
      throw UsageError("unexpected argument '" + std::string(arg) + "' (see --help)");
    }
    if (!flag) throw UsageError("unknown flag '" + std::string(arg) + "' (see --help)");
    if (flag->valueName.empty()) {
      if (hasInline) throw UsageError(display(*flag) + " takes no value, got '" + std::string(arg) + "'");
      flag->setSwitch();
      continue;
    }
    if (hasInline) {
      apply(*flag, inlineValue);
    } else {
      if (i + 1 >= argc) throw UsageError(display(*flag) + " needs a value (" + flag->valueName + ")");
      apply(*flag, argv[++i]);
    }
  }
}

std::string CommandLine::usage() const {
  std::string s = "usage: " + program_ + " [flags]\n";
  for (const Flag& f : flags_) {
    std::string left = "  " + display(f);
    if (!f.valueName.empty()) left += " " + f.valueName;
    constexpr std::size_t kHelpColumn = 34;
    left.resize(std::max(kHelpColumn, left.size() + 2), ' ');
    s += left + f.help + "\n";
  }
  return s;
}

}  // namespace cclab::bench
