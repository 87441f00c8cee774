#include "collectives/core/dynamic_library.h"

#include <cstdlib>

namespace cclab {

std::vector<std::string> libraryCandidates(const char* envVariable, std::initializer_list<const char*> names) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv(envVariable); env && *env) candidates.emplace_back(env);
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
