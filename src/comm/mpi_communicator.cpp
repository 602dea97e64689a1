#include "comm/mpi_communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <thread>

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

// A pending MPI request. Completion runs `finish` (e.g. the division of an
// average) exactly once, on whichever thread observes it.
class MpiWork final : public Work {
 public:
  MpiWork(std::shared_ptr<RollCall> roll_call, std::uint64_t seq, std::string what, MPI_Request request,
          std::function<void()> finish)
      : roll_call_(std::move(roll_call)),
        seq_(seq),
        what_(std::move(what)),
        request_(request),
        finish_(std::move(finish)),
        started_(Clock::now()) {}

  ~MpiWork() override {
    // Dropping an unfinished collective would leave MPI writing into freed memory.
    if (!done_) wait();
  }

  bool test() override {
    if (done_) return true;
    roll_call_->poll();
    int flag = 0;
    const int rc = MPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) fail_with(rc);
    if (flag != 0) {
      done_ = true;
      if (finish_) finish_();
      return true;
    }
    if (roll_call_->expired(started_)) roll_call_->fail(seq_, what_, started_);
    return false;
  }

  void wait() override {
    // Spin briefly for small messages, then sleep in proportion to the time
    // already waited (1/8 of it, 20 us to 500 us). MPI over TCP progresses
    // only while someone polls, and the poller shares its core with backward:
    // a long transfer is polled rarely enough to cost compute few context
    // switches, and one done within 160 us is still noticed within 20 us.
    const auto start = Clock::now();
    for (int spins = 0; !test(); ++spins) {
      if (spins < 200) continue;
      const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
      std::this_thread::sleep_for(
          std::clamp(waited / 8, std::chrono::microseconds(20), std::chrono::microseconds(500)));
    }
  }

 private:
  [[noreturn]] void fail_with(int rc) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(rc, text, &len);
    roll_call_->fail(seq_, what_, started_, std::string(text, static_cast<std::size_t>(len)));
  }

  std::shared_ptr<RollCall> roll_call_;
  std::uint64_t seq_;
  std::string what_;
  MPI_Request request_;
  std::function<void()> finish_;
  Clock::time_point started_;
  bool done_ = false;
};

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm parent, std::chrono::milliseconds timeout)
    : comm_(handles::MpiComm::dup(parent)),
      rank_(comm_.rank()),
      size_(comm_.size()),
      half_type_(handles::MpiDatatype::contiguous_bytes(2)),
      bf16_sum_(&sum_bf16, true),
      fp16_sum_(&sum_fp16, true),
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

WorkPtr MpiCommunicator::allreduce_async(void* data, std::size_t count, DType dtype, ReduceOp op) {
  const int n = checked_count(count);
  const std::uint64_t seq = roll_call_->arrive();
  std::string what = fmt::format("allreduce({} {}, {} elements)", to_string(dtype), to_string(op), count);
  MPI_Request request = MPI_REQUEST_NULL;
  handles::check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data, n, mpi_type(dtype), sum_op(dtype), comm_.get(), &request),
                     what);
  std::function<void()> finish;
  if (op == ReduceOp::kAverage) {
    finish = [data, count, dtype, size = size_] { divide_in_place(data, count, dtype, size); };
  }
  return std::make_unique<MpiWork>(roll_call_, seq, std::move(what), request, std::move(finish));
}

WorkPtr MpiCommunicator::broadcast_async(void* data, std::size_t count, DType dtype, int root) {
  const int n = checked_count(count);
  const std::uint64_t seq = roll_call_->arrive();
  std::string what = fmt::format("broadcast({}, {} elements, root {})", to_string(dtype), count, root);
  MPI_Request request = MPI_REQUEST_NULL;
  handles::check_mpi(MPI_Ibcast(data, n, mpi_type(dtype), root, comm_.get(), &request), what);
  return std::make_unique<MpiWork>(roll_call_, seq, std::move(what), request, nullptr);
}

WorkPtr MpiCommunicator::allgather_async(const void* send, void* recv, std::size_t count, DType dtype) {
  const int n = checked_count(count);
  const std::uint64_t seq = roll_call_->arrive();
  std::string what = fmt::format("allgather({}, {} elements per rank)", to_string(dtype), count);
  MPI_Request request = MPI_REQUEST_NULL;
  handles::check_mpi(MPI_Iallgather(send, n, mpi_type(dtype), recv, n, mpi_type(dtype), comm_.get(), &request), what);
  return std::make_unique<MpiWork>(roll_call_, seq, std::move(what), request, nullptr);
}

WorkPtr MpiCommunicator::barrier_async() {
  const std::uint64_t seq = roll_call_->arrive();
  MPI_Request request = MPI_REQUEST_NULL;
  handles::check_mpi(MPI_Ibarrier(comm_.get(), &request), "barrier");
  return std::make_unique<MpiWork>(roll_call_, seq, "barrier", request, nullptr);
}

}  // namespace hpctrain::comm
