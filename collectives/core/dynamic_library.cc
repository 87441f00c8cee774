#include "collectives/core/dynamic_library.h"

#include <optional>
#include <utility>

namespace cclab {

std::vector<std::string> libraryCandidates(knobs::Id knob, std::initializer_list<const char*> names) {
  std::vector<std::string> candidates;
  if (std::optional<std::string> path = knobs::text(knob)) candidates.push_back(std::move(*path));
  for (const char* name : names) candidates.emplace_back(name);
  return candidates;
}

void* openFirstLibrary(const std::vector<std::string>& candidates, std::string_view what, const char* envVariable,
                       std::string& origin, std::string& why) {
  std::string tried;
  for (const std::string& c : candidates) {
    if (void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      origin = c;
      return lib;
    }
    const char* err = dlerror();
    tried += (tried.empty() ? "" : "; ") + (err ? std::string(err) : c);
  }
  why = "cannot load " + std::string(what) + " (" + tried + "); set " + envVariable + " or LD_LIBRARY_PATH";
  return nullptr;
}

}  // namespace cclab
