#include "support/progress.h"

#include <unistd.h>

namespace hpctrain::support {

Progress::Progress(std::FILE* out, std::chrono::seconds interval)
    : out_(out), tty_(isatty(fileno(out)) != 0), interval_(tty_ ? std::chrono::milliseconds(100) : interval) {}

void Progress::update(const std::string& line) {
  const auto now = std::chrono::steady_clock::now();
  if (last_.time_since_epoch().count() != 0 && now - last_ < interval_) return;
  last_ = now;
  if (tty_) {
    const std::string pad(line.size() < last_width_ ? last_width_ - line.size() : 0, ' ');
    (void)std::fprintf(out_, "\r%s%s", line.c_str(), pad.c_str());
    last_width_ = line.size();
  } else {
    (void)std::fprintf(out_, "%s\n", line.c_str());
  }
  (void)std::fflush(out_);
}

void Progress::done(const std::string& line) {
  if (tty_) {
    const std::string pad(line.size() < last_width_ ? last_width_ - line.size() : 0, ' ');
    (void)std::fprintf(out_, "\r%s%s\n", line.c_str(), pad.c_str());
  } else {
    (void)std::fprintf(out_, "%s\n", line.c_str());
  }
  last_width_ = 0;
  (void)std::fflush(out_);
}

}  // namespace hpctrain::support
