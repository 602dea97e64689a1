#include "comm/nccl_communicator.h"

#include <fmt/format.h>

#include <thread>

namespace hpctrain::comm {
namespace {

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return ncclFloat32;
    case DType::kBFloat16: return ncclBfloat16;
    case DType::kFloat16: return ncclFloat16;
    case DType::kInt64: return ncclInt64;
    case DType::kUInt8: return ncclUint8;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::kSum ? ncclSum : ncclAvg; }

class NcclWork final : public Work {
 public:
  NcclWork(handles::CudaNcclApiPtr api, std::shared_ptr<RollCall> roll_call, std::shared_ptr<handles::NcclComm> nccl,
           std::uint64_t seq, std::string what, cudaStream_t stream)
      : api_(std::move(api)),
        roll_call_(std::move(roll_call)),
        nccl_(std::move(nccl)),
        seq_(seq),
        what_(std::move(what)),
        done_(api_),
        started_(Clock::now()) {
    handles::check_cuda(*api_, api_->event_record(done_.get(), stream), "cudaEventRecord");
  }

  bool test() override {
    if (finished_) return true;
    roll_call_->poll();
    const cudaError_t state = api_->event_query(done_.get());
    if (state == cudaSuccess) {
      finished_ = true;
      return true;
    }
    if (state != cudaErrorNotReady) abort_job(api_->get_error_string(state));
    ncclResult_t async_error = ncclSuccess;
    api_->nccl_comm_get_async_error(nccl_->get(), &async_error);
    if (async_error != ncclSuccess && async_error != ncclInProgress) {
      abort_job(api_->nccl_get_error_string(async_error));
    }
    if (roll_call_->expired(started_)) abort_job({});
    return false;
  }

  void wait() override {
    while (!test()) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }

 private:
  [[noreturn]] void abort_job(const std::string& error) {
    nccl_->abort();  // frees the device from the hung kernel before the job ends
    roll_call_->fail(seq_, what_, started_, error);
  }

  handles::CudaNcclApiPtr api_;
  std::shared_ptr<RollCall> roll_call_;
  std::shared_ptr<handles::NcclComm> nccl_;
  std::uint64_t seq_;
  std::string what_;
  handles::CudaEvent done_;
  Clock::time_point started_;
  bool finished_ = false;
};

}  // namespace

NcclCommunicator::NcclCommunicator(MPI_Comm parent, int cuda_device, std::chrono::milliseconds timeout)
    : device_(cuda_device),
      api_(handles::load_cuda_nccl()),
      roll_call_(std::make_shared<RollCall>(parent, timeout, "nccl")) {
  handles::check_mpi(MPI_Comm_rank(parent, &rank_), "MPI_Comm_rank");
  handles::check_mpi(MPI_Comm_size(parent, &size_), "MPI_Comm_size");
  handles::check_cuda(*api_, api_->set_device(device_), fmt::format("cudaSetDevice({})", device_));
  ncclUniqueId id{};
  if (rank_ == 0) handles::check_nccl(*api_, api_->nccl_get_unique_id(&id), "ncclGetUniqueId");
  handles::check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, parent), "MPI_Bcast(ncclUniqueId)");
  stream_ = std::make_unique<handles::CudaStream>(api_);
  ready_ = std::make_unique<handles::CudaEvent>(api_);
  barrier_word_ = std::make_unique<handles::CudaBuffer>(api_, sizeof(float));
  nccl_ = std::make_shared<handles::NcclComm>(api_, size_, id, rank_);
}

NcclCommunicator::~NcclCommunicator() {
  if (stream_) api_->stream_synchronize(stream_->get());
}

void NcclCommunicator::order_after_default_stream() {
  // Any thread may issue (DDP's communication thread among them), and a new
  // thread's current device is 0, not this rank's.
  handles::check_cuda(*api_, api_->set_device(device_), fmt::format("cudaSetDevice({})", device_));
  handles::check_cuda(*api_, api_->event_record(ready_->get(), cudaStreamLegacy), "cudaEventRecord(default stream)");
  handles::check_cuda(*api_, api_->stream_wait_event(stream_->get(), ready_->get(), 0), "cudaStreamWaitEvent");
}

WorkPtr NcclCommunicator::finish(std::uint64_t seq, std::string what) {
  return std::make_unique<NcclWork>(api_, roll_call_, nccl_, seq, std::move(what), stream_->get());
}

WorkPtr NcclCommunicator::allreduce_async(void* data, std::size_t count, DType dtype, ReduceOp op) {
  const std::uint64_t seq = roll_call_->arrive();
  std::string what = fmt::format("allreduce({} {}, {} elements)", to_string(dtype), to_string(op), count);
  order_after_default_stream();
  handles::check_nccl(
      *api_, api_->nccl_all_reduce(data, data, count, nccl_type(dtype), nccl_op(op), nccl_->get(), stream_->get()),
      what);
  return finish(seq, std::move(what));
}

WorkPtr NcclCommunicator::broadcast_async(void* data, std::size_t count, DType dtype, int root) {
  const std::uint64_t seq = roll_call_->arrive();
  std::string what = fmt::format("broadcast({}, {} elements, root {})", to_string(dtype), count, root);
  order_after_default_stream();
  handles::check_nccl(
      *api_, api_->nccl_broadcast(data, data, count, nccl_type(dtype), root, nccl_->get(), stream_->get()), what);
  return finish(seq, std::move(what));
}

WorkPtr NcclCommunicator::allgather_async(const void* send, void* recv, std::size_t count, DType dtype) {
  const std::uint64_t seq = roll_call_->arrive();
  std::string what = fmt::format("allgather({}, {} elements per rank)", to_string(dtype), count);
  order_after_default_stream();
  handles::check_nccl(*api_, api_->nccl_all_gather(send, recv, count, nccl_type(dtype), nccl_->get(), stream_->get()),
                      what);
  return finish(seq, std::move(what));
}

WorkPtr NcclCommunicator::reduce_scatter_async(const void* send, void* recv, std::size_t count, DType dtype,
                                               ReduceOp op) {
  const std::uint64_t seq = roll_call_->arrive();
  std::string what = fmt::format("reduce_scatter({} {}, {} elements per rank)", to_string(dtype), to_string(op), count);
  order_after_default_stream();
  handles::check_nccl(
      *api_, api_->nccl_reduce_scatter(send, recv, count, nccl_type(dtype), nccl_op(op), nccl_->get(), stream_->get()),
      what);
  return finish(seq, std::move(what));
}

WorkPtr NcclCommunicator::barrier_async() {
  const std::uint64_t seq = roll_call_->arrive();
  order_after_default_stream();
  handles::check_nccl(*api_,
                      api_->nccl_all_reduce(barrier_word_->get(), barrier_word_->get(), 1, ncclFloat32, ncclSum,
                                            nccl_->get(), stream_->get()),
                      "barrier");
  return finish(seq, "barrier");
}

}  // namespace hpctrain::comm
