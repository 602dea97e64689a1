#include "cluster/nvidia_devices.h"

#include <algorithm>

namespace hpctrain::cluster {

std::vector<std::string> nvidia_device_files(const std::filesystem::path& dev) {
  std::vector<std::string> found;
  std::error_code error;
  std::filesystem::directory_iterator it(dev, error);
  // A bound: /dev holds hundreds of entries, never millions.
  for (std::size_t seen = 0; !error && it != std::filesystem::directory_iterator() && seen < 100000;
       it.increment(error), ++seen) {
    const std::string name = it->path().filename().string();
    if (name.size() > 6 && name.starts_with("nvidia") && name.find_first_not_of("0123456789", 6) == std::string::npos) {
      found.push_back(it->path().string());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace hpctrain::cluster
