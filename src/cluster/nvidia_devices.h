// The NVIDIA GPUs a node has, as its driver shows them: /dev/nvidia0,
// /dev/nvidia1, ... (not nvidiactl, nvidia-uvm and the other control files).
// Read without CUDA or LibTorch, so that a build that cannot use them can
// still say they are there.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace hpctrain::cluster {

// The GPU device files under `dev`, sorted; empty where there are none or `dev` cannot be read.
std::vector<std::string> nvidia_device_files(const std::filesystem::path& dev = "/dev");

}  // namespace hpctrain::cluster
