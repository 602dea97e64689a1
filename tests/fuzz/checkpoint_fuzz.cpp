// Fuzz harness: the checkpoint reader (ckpt_file/), on mutations of real
// checkpoints (the seed corpus holds small DDP and DDAP ones). As auto-resume
// does, it verifies the file and, when that passes, reads what a restore reads:
// the root attributes, the stored config, and every dataset. Any input must
// verify, or be named bad, or end in an error naming the file; nothing may
// crash, hang, leak or read outside its buffers.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "checkpoint_reads.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path = hpctrain::fuzz::scratch_file("ckpt");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  hpctrain::fuzz::verify_then_restore(path);
  return 0;
}
