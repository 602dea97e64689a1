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

int signal_number(config::Signal signal) {
  switch (signal) {
    case config::Signal::kUsr1: return SIGUSR1;
    case config::Signal::kUsr2: return SIGUSR2;
    case config::Signal::kTerm: return SIGTERM;
  }
  throw std::invalid_argument("checkpoint.signal: a signal hpctrain does not handle");
}

}  // namespace

PreemptionSignal::PreemptionSignal(config::Signal signal)
    : name_(config::name_of(signal)), number_(signal_number(signal)) {
  g_preemption_signals.store(0);
  struct sigaction action {};
  action.sa_handler = on_preemption_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // blocking calls in MPI and I/O carry on
  if (sigaction(number_, &action, &g_previous) != 0) {
    throw std::runtime_error("cannot install the SIG" + name_ + " handler");
  }
}

PreemptionSignal::~PreemptionSignal() { sigaction(number_, &g_previous, nullptr); }

bool PreemptionSignal::raised() const { return g_preemption_signals.load() > 0; }

}  // namespace hpctrain::train
