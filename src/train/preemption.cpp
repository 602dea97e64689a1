#include "train/preemption.h"

#include <atomic>
#include <csignal>
#include <stdexcept>

namespace hpctrain::train {
namespace {

// A signal handler can reach nothing but globals: this flag is the one piece of
// process-wide mutable state, written only by the handler below.
std::atomic<int> g_preemption_signals{0};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free flag");

struct sigaction g_previous {};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

extern "C" void on_preemption_signal(int /*signal*/) { g_preemption_signals.fetch_add(1); }

int signal_number(const std::string& name) {
  if (name == "USR1") return SIGUSR1;
  if (name == "USR2") return SIGUSR2;
  if (name == "TERM") return SIGTERM;
  throw std::invalid_argument("checkpoint.signal must be USR1, USR2 or TERM, not " + name);
}

}  // namespace

PreemptionSignal::PreemptionSignal(const std::string& name) : name_(name), number_(signal_number(name)) {
  g_preemption_signals.store(0);
  struct sigaction action {};
  action.sa_handler = on_preemption_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // blocking calls in MPI and I/O carry on
  if (sigaction(number_, &action, &g_previous) != 0) {
    throw std::runtime_error("cannot install the SIG" + name + " handler");
  }
}

PreemptionSignal::~PreemptionSignal() { sigaction(number_, &g_previous, nullptr); }

bool PreemptionSignal::raised() const { return g_preemption_signals.load() > 0; }

}  // namespace hpctrain::train
