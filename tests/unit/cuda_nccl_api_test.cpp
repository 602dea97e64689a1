// The CUDA runtime and NCCL opened at run time: the real libraries the build
// found load on this machine without a GPU, an explicit path is the only place
// tried, and a library that is not NCCL is refused by name.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include "handles/cuda_nccl_api.h"

namespace hpctrain::handles {
namespace {

// Sets an environment variable for one test and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;  // NOLINT(concurrency-mt-unsafe): single-threaded test
    setenv(name, value.c_str(), 1);                       // NOLINT(concurrency-mt-unsafe)
  }
  ~ScopedEnv() {
    if (old_.empty()) {
      unsetenv(name_);  // NOLINT(concurrency-mt-unsafe)
    } else {
      setenv(name_, old_.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const CudaError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CudaNcclApi, OpensTheLibrariesWithoutAGpu) {
  const auto api = load_cuda_nccl();
  EXPECT_TRUE(std::filesystem::exists(api->nccl_path)) << api->nccl_path;
  EXPECT_TRUE(std::filesystem::exists(api->cudart_path)) << api->cudart_path;
  EXPECT_NE(api->nccl_path.find("libnccl.so"), std::string::npos) << api->nccl_path;
  // The library the build found is the one whose header it compiled against.
  EXPECT_EQ(api->nccl_version, NCCL_VERSION_CODE);
  int runtime = 0;
  ASSERT_EQ(api->runtime_get_version(&runtime), cudaSuccess);
  EXPECT_EQ(runtime / 1000, CUDART_VERSION / 1000);
  // No GPU here: the runtime answers with an error, which names itself.
  int devices = -1;
  const cudaError_t rc = api->get_device_count(&devices);
  if (rc != cudaSuccess) {
    EXPECT_STRNE(api->get_error_string(rc), "");
  }
  EXPECT_NE(describe(*api).find(api->nccl_path), std::string::npos) << describe(*api);
}

TEST(CudaNcclApi, AnExplicitPathIsTheOnlyPlaceTried) {
  const ScopedEnv env("HPCTRAIN_NCCL_LIBRARY", "/nonexistent/libnccl.so.2");
  const std::string error = error_of([] { load_cuda_nccl(); });
  EXPECT_NE(error.find("/nonexistent/libnccl.so.2"), std::string::npos) << error;
  EXPECT_NE(error.find("HPCTRAIN_NCCL_LIBRARY"), std::string::npos) << error;
  EXPECT_EQ(error.find("tried:\n  libnccl.so"), std::string::npos) << error;
}

TEST(CudaNcclApi, ALibraryThatIsNotNcclIsRefused) {
  const std::string cudart = load_cuda_nccl()->cudart_path;
  const ScopedEnv env("HPCTRAIN_NCCL_LIBRARY", cudart);
  const std::string error = error_of([] { load_cuda_nccl(); });
  EXPECT_NE(error.find(cudart + " has no function ncclGetVersion"), std::string::npos) << error;
}

}  // namespace
}  // namespace hpctrain::handles
