// Run-time library loading (NCCL and cuBLAS use it): the first loadable candidate wins, the
// environment variable comes first, symbols bind or name what is missing, and a total failure is one
// line naming every attempt and the variable to set.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "collectives/core/dynamic_library.h"

namespace cclab {
namespace {

TEST(DynamicLibrary, TheFirstLoadableCandidateWinsAndItsSymbolsBind) {
  std::string origin, why;
  void* lib = openFirstLibrary({"/nonexistent/libcclab-none.so", "libc.so.6", "libm.so.6"}, "libc", "CCLAB_TEST_LIB", origin, why);
  ASSERT_NE(lib, nullptr) << why;
  EXPECT_EQ(origin, "libc.so.6");
  std::size_t (*len)(const char*) = nullptr;
  ASSERT_TRUE(bindSymbol(lib, "strlen", len, "libc", why)) << why;
  EXPECT_EQ(len("cclab-7"), 7U);
  void (*missing)() = nullptr;
  EXPECT_FALSE(bindSymbol(lib, "cclab_no_such_symbol", missing, "libc", why));
  EXPECT_EQ(why, "symbol cclab_no_such_symbol missing from libc");
}

TEST(DynamicLibrary, NothingLoadsGivesOneLineNamingEveryAttemptAndTheVariable) {
  std::string origin = "unchanged", why;
  EXPECT_EQ(openFirstLibrary({"/nonexistent/a.so", "/nonexistent/b.so"}, "Foo", "CCLAB_FOO_LIBRARY", origin, why), nullptr);
  EXPECT_EQ(origin, "unchanged");
  EXPECT_EQ(why.rfind("cannot load Foo (", 0), 0U) << why;
  EXPECT_NE(why.find("/nonexistent/a.so"), std::string::npos) << why;
  EXPECT_NE(why.find("/nonexistent/b.so"), std::string::npos) << why;
  EXPECT_NE(why.find("set CCLAB_FOO_LIBRARY or LD_LIBRARY_PATH"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

TEST(DynamicLibrary, TheEnvironmentVariableComesFirstWhenSet) {
  const char* old = std::getenv("CCLAB_NCCL_LIBRARY");
  const std::string saved = old ? old : "";
  ::setenv("CCLAB_NCCL_LIBRARY", "/custom/libx.so", 1);
  EXPECT_EQ(libraryCandidates(knobs::Id::NcclLibrary, {"a.so", "b.so"}),
            (std::vector<std::string>{"/custom/libx.so", "a.so", "b.so"}));
  ::setenv("CCLAB_NCCL_LIBRARY", "", 1);
  EXPECT_EQ(libraryCandidates(knobs::Id::NcclLibrary, {"a.so"}), (std::vector<std::string>{"a.so"}));
  if (old)
    ::setenv("CCLAB_NCCL_LIBRARY", saved.c_str(), 1);
  else
    ::unsetenv("CCLAB_NCCL_LIBRARY");
}

}  // namespace
}  // namespace cclab
