// main() of the MPI tests: every rank runs every test; the job fails if any rank failed.
#include <gtest/gtest.h>

#include "collectives/mpi/mpi_world.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const cclab::mpi::World world;  // initializes MPI for the tests
  if (world.rank() != 0) {        // one rank prints the progress; every rank prints its failures
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  const long long failures = world.sumOf(failed);
  if (world.rank() == 0 && failures > 0) std::fprintf(stderr, "mpi_test: %lld rank(s) failed\n", failures);
  return failures > 0 ? 1 : 0;
}
