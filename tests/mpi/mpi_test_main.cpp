// GoogleTest main for tests run under mpiexec: every rank runs every test, rank 0
// prints, and the job fails when any rank fails.
#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi_test_main.h"

const hpctrain::handles::MpiRuntime& hpctrain::testing::mpi_runtime() {
  // Finalised at exit, after every test's communicators are gone.
  static const hpctrain::handles::MpiRuntime runtime;
  return runtime;
}

int main(int argc, char** argv) {
  hpctrain::testing::mpi_runtime();
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int mine = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any != 0 && mine == 0 && rank == 0) (void)std::fprintf(stderr, "a test failed on another rank\n");
  return any;
}
