// Libraries loaded at run time (NCCL, cuBLAS): the first of a list of names that dlopen accepts, and
// its symbols bound into typed function pointers, with one line saying what failed.
#pragma once

#include <dlfcn.h>

#include <string>
#include <string_view>
#include <vector>

#include "collectives/core/knobs.h"

namespace cclab {

// Candidate names: the path knob `knob` (knobs.h) when set and non-empty, then `names` in order.
std::vector<std::string> libraryCandidates(knobs::Id knob, std::initializer_list<const char*> names);

// dlopens the first candidate that loads (RTLD_NOW | RTLD_LOCAL; it stays loaded for the life of the
// process) and sets `origin` to its name. On failure returns nullptr and sets `why` to one line:
// "cannot load <what> (<each dlerror>); set <envVariable> or LD_LIBRARY_PATH".
void* openFirstLibrary(const std::vector<std::string>& candidates, std::string_view what, const char* envVariable,
                       std::string& origin, std::string& why);

// Binds `name` from `lib` into `out`; false (and `why` = "symbol <name> missing from <what>") when absent.
template <class F>
bool bindSymbol(void* lib, const char* name, F& out, std::string_view what, std::string& why) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out) why = "symbol " + std::string(name) + " missing from " + std::string(what);
  return out != nullptr;
}

}  // namespace cclab
