// Replays fuzz inputs through a harness's LLVMFuzzerTestOneInput without
// libFuzzer, so the GCC build and CTest check every stored reproducer and seed
// on every run: fuzz_replay_NAME DIR|FILE... runs each file once, in name
// order, and fails (by crashing, as libFuzzer would report it, or by an input
// taking longer than the limit) on the first input the harness cannot take.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

constexpr unsigned kSecondsPerInput = 5;  // libFuzzer's -timeout in tests/fuzz/fuzz.sh

void timed_out(int /*signal*/) {
  const char message[] = "fuzz replay: an input ran longer than the limit (a hang)\n";
  (void)write(STDERR_FILENO, message, sizeof(message) - 1);
  std::_Exit(124);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else {
      inputs.push_back(arg);
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    (void)std::fprintf(stderr, "fuzz replay: no inputs in the given paths\n");
    return 1;
  }
  (void)std::signal(SIGALRM, timed_out);
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    (void)std::fprintf(stderr, "fuzz replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
    alarm(kSecondsPerInput);
    (void)LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    alarm(0);
  }
  std::printf("fuzz replay: %zu inputs, none crashed or hung\n", inputs.size());
  return 0;
}
