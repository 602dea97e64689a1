// The MPI thread level hpctrain starts under: anything below
// MPI_THREAD_MULTIPLE is refused, by name, before a helper thread could call MPI.
#include <gtest/gtest.h>

#include <string>

#include "handles/mpi.h"

namespace hpctrain::handles {
namespace {

TEST(MpiThreadLevel, OnlyMultipleIsAccepted) {
  EXPECT_NO_THROW(require_thread_multiple(MPI_THREAD_MULTIPLE));
  for (const int level : {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED}) {
    try {
      require_thread_multiple(level);
      ADD_FAILURE() << "thread level " << level << " accepted";
    } catch (const MpiError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("needs MPI_THREAD_MULTIPLE"), std::string::npos) << message;
      EXPECT_NE(message.find(level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED" : "MPI_THREAD_"),
                std::string::npos)
          << message;
    }
  }
}

}  // namespace
}  // namespace hpctrain::handles
