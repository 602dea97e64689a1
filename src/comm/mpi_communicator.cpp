#include "comm/mpi_communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <thread>

#include <sched.h>

namespace hpctrain::comm {
namespace {

void sum_bf16(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = float_to_bf16(bf16_to_float(a[i]) + bf16_to_float(b[i]));
}

void sum_fp16(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = float_to_half(half_to_float(a[i]) + half_to_float(b[i]));
}

int checked_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw handles::MpiError(
        fmt::format("a collective of {} elements exceeds MPI's count limit of {}; split it", count, INT_MAX));
  }
  return static_cast<int>(count);
}

// What a collective is, for messages. Formatted only when one is printed: a
// small collective takes a few microseconds, and formatting would add a tenth.
struct Collective {
  enum class Kind { kAllreduce, kBroadcast, kAllgather, kReduceScatter, kAlltoall, kBarrier } kind;
  DType dtype = DType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  std::size_t count = 0;
  int root = 0;
};

std::string describe(const Collective& c) {
  switch (c.kind) {
    case Collective::Kind::kAllreduce:
      return fmt::format("allreduce({} {}, {} elements)", to_string(c.dtype), to_string(c.op), c.count);
    case Collective::Kind::kBroadcast:
      return fmt::format("broadcast({}, {} elements, root {})", to_string(c.dtype), c.count, c.root);
    case Collective::Kind::kAllgather:
      return fmt::format("allgather({}, {} elements per rank)", to_string(c.dtype), c.count);
    case Collective::Kind::kReduceScatter:
      return fmt::format("reduce_scatter({} {}, {} elements per rank)", to_string(c.dtype), to_string(c.op), c.count);
    case Collective::Kind::kAlltoall:
      return fmt::format("alltoall({}, {} elements per rank)", to_string(c.dtype), c.count);
    case Collective::Kind::kBarrier: return "barrier";
  }
  return "collective";
}

// What completes a reduction into `data`: nothing for a sum, the division by
// the world size for an average.
std::function<void()> average_if_asked(ReduceOp op, void* data, std::size_t count, DType dtype, int size) {
  if (op != ReduceOp::kAverage) return nullptr;
  return [data, count, dtype, size] { divide_in_place(data, count, dtype, size); };
}

void check(int rc, const Collective& what) {
  if (rc != MPI_SUCCESS) handles::check_mpi(rc, describe(what));
}

// A pending MPI request. Completion runs `finish` (e.g. the division of an
// average) exactly once, on whichever thread observes it.
class MpiWork final : public Work {
 public:
  MpiWork(std::shared_ptr<RollCall> roll_call, WaitStrategy strategy, std::uint64_t seq, Collective what,
          MPI_Request request, std::function<void()> finish)
      : roll_call_(std::move(roll_call)),
        strategy_(strategy),
        seq_(seq),
        what_(what),
        request_(request),
        finish_(std::move(finish)),
        started_(Clock::now()) {}

  ~MpiWork() override {
    // Dropping an unfinished collective would leave MPI writing into freed memory.
    if (!done_) wait();
  }

  bool test() override {
    if (test_request()) return true;
    check_roll_call();
    return false;
  }

  void wait() override {
    // MPICH advances a non-blocking collective only inside MPI calls made by
    // this rank: every pause between two MPI_Test calls can stall the
    // collective's next protocol step (docs/bootstrap.md, "Waiting").
    const auto start = Clock::now();
    auto next_check = start;
    while (!test_request()) {
      const auto now = Clock::now();
      if (now >= next_check) {
        check_roll_call();
        next_check = now + kRollCallPeriod;
      }
      pause(now - start);
    }
  }

 private:
  // One MPI_Test; completion runs `finish` once.
  bool test_request() {
    if (done_) return true;
    int flag = 0;
    const int rc = MPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) fail_with(rc);
    if (flag == 0) return false;
    done_ = true;
    if (finish_) finish_();
    return true;
  }

  // The roll call (heartbeats, rank 0's bookkeeping) and the timeout. While
  // waiting, checked once per kRollCallPeriod rather than per test: it takes a
  // lock, and on rank 0 probes a second communicator.
  void check_roll_call() {
    roll_call_->poll();
    if (roll_call_->expired(started_)) roll_call_->fail(seq_, describe(what_), started_);
  }

  void pause(Clock::duration waited) const {
    switch (strategy_) {
      case WaitStrategy::kSpin: return;
      case WaitStrategy::kYield:
        // Spinning first keeps a short collective's latency at MPI's own.
        if (waited >= kSpinBeforeYield) sched_yield();
        return;
      case WaitStrategy::kSleep: {
        // 1/8 of the time waited so far, 20 us to 500 us.
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(waited);
        std::this_thread::sleep_for(std::clamp(us / 8, std::chrono::microseconds(20), std::chrono::microseconds(500)));
        return;
      }
    }
  }

  static constexpr auto kRollCallPeriod = std::chrono::milliseconds(1);
  static constexpr auto kSpinBeforeYield = std::chrono::microseconds(50);

  [[noreturn]] void fail_with(int rc) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(rc, text, &len);
    roll_call_->fail(seq_, describe(what_), started_, std::string(text, static_cast<std::size_t>(len)));
  }

  std::shared_ptr<RollCall> roll_call_;
  WaitStrategy strategy_;
  std::uint64_t seq_;
  Collective what_;
  MPI_Request request_;
  std::function<void()> finish_;
  Clock::time_point started_;
  bool done_ = false;
};

}  // namespace

const char* to_string(WaitStrategy strategy) {
  switch (strategy) {
    case WaitStrategy::kSpin: return "spin";
    case WaitStrategy::kYield: return "yield";
    case WaitStrategy::kSleep: return "sleep";
  }
  return "?";
}

MpiCommunicator::MpiCommunicator(MPI_Comm parent, std::chrono::milliseconds timeout, WaitStrategy strategy)
    : comm_(handles::MpiComm::dup(parent)),
      rank_(comm_.rank()),
      size_(comm_.size()),
      half_type_(handles::MpiDatatype::contiguous_bytes(2)),
      bf16_sum_(&sum_bf16, true),
      fp16_sum_(&sum_fp16, true),
      strategy_(strategy),
      roll_call_(std::make_shared<RollCall>(parent, timeout, "mpi")) {}

MPI_Datatype MpiCommunicator::mpi_type(DType dtype) const {
  switch (dtype) {
    case DType::kFloat32: return MPI_FLOAT;
    case DType::kInt64: return MPI_INT64_T;
    case DType::kUInt8: return MPI_UINT8_T;
    case DType::kBFloat16:
    case DType::kFloat16: return half_type_.get();
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op MpiCommunicator::sum_op(DType dtype) const {
  switch (dtype) {
    case DType::kBFloat16: return bf16_sum_.get();
    case DType::kFloat16: return fp16_sum_.get();
    default: return MPI_SUM;
  }
}

WorkPtr MpiCommunicator::start_allreduce(void* data, std::size_t count, DType dtype, ReduceOp op) {
  const int n = checked_count(count);
  const std::uint64_t seq = roll_call_->arrive();
  const Collective what{Collective::Kind::kAllreduce, dtype, op, count};
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(MPI_IN_PLACE, data, n, mpi_type(dtype), sum_op(dtype), comm_.get(), &request), what);
  return std::make_unique<MpiWork>(roll_call_, strategy_, seq, what, request,
                                   average_if_asked(op, data, count, dtype, size_));
}

WorkPtr MpiCommunicator::start_broadcast(void* data, std::size_t count, DType dtype, int root) {
  const int n = checked_count(count);
  const std::uint64_t seq = roll_call_->arrive();
  const Collective what{Collective::Kind::kBroadcast, dtype, ReduceOp::kSum, count, root};
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibcast(data, n, mpi_type(dtype), root, comm_.get(), &request), what);
  return std::make_unique<MpiWork>(roll_call_, strategy_, seq, what, request, nullptr);
}

WorkPtr MpiCommunicator::start_allgather(const void* send, void* recv, std::size_t count, DType dtype) {
  const int n = checked_count(count);
  const std::uint64_t seq = roll_call_->arrive();
  const Collective what{Collective::Kind::kAllgather, dtype, ReduceOp::kSum, count};
  MPI_Request request = MPI_REQUEST_NULL;
  // MPI forbids overlapping buffers; the in-place form says so with MPI_IN_PLACE.
  const bool in_place =
      send == static_cast<const char*>(recv) + static_cast<std::size_t>(rank_) * count * element_size(dtype);
  check(MPI_Iallgather(in_place ? MPI_IN_PLACE : send, n, mpi_type(dtype), recv, n, mpi_type(dtype), comm_.get(),
                       &request),
        what);
  return std::make_unique<MpiWork>(roll_call_, strategy_, seq, what, request, nullptr);
}

WorkPtr MpiCommunicator::start_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                                              ReduceOp op) {
  const int n = checked_count(count);
  const std::uint64_t seq = roll_call_->arrive();
  const Collective what{Collective::Kind::kReduceScatter, dtype, op, count};
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ireduce_scatter_block(send, recv, n, mpi_type(dtype), sum_op(dtype), comm_.get(), &request), what);
  return std::make_unique<MpiWork>(roll_call_, strategy_, seq, what, request,
                                   average_if_asked(op, recv, count, dtype, size_));
}

WorkPtr MpiCommunicator::start_alltoall(const void* send, void* recv, std::size_t count, DType dtype) {
  const int n = checked_count(count);
  const std::uint64_t seq = roll_call_->arrive();
  const Collective what{Collective::Kind::kAlltoall, dtype, ReduceOp::kSum, count};
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ialltoall(send, n, mpi_type(dtype), recv, n, mpi_type(dtype), comm_.get(), &request), what);
  return std::make_unique<MpiWork>(roll_call_, strategy_, seq, what, request, nullptr);
}

WorkPtr MpiCommunicator::start_barrier() {
  const std::uint64_t seq = roll_call_->arrive();
  MPI_Request request = MPI_REQUEST_NULL;
  const Collective what{Collective::Kind::kBarrier};
  check(MPI_Ibarrier(comm_.get(), &request), what);
  return std::make_unique<MpiWork>(roll_call_, strategy_, seq, what, request, nullptr);
}

}  // namespace hpctrain::comm
