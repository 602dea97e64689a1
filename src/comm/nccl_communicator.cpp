#include "comm/nccl_communicator.h"

#include <fmt/format.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "cluster/gpu_placement.h"
#include "comm/consensus.h"

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
    const ncclResult_t async_error = nccl_->state();
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
    // The report first: should the abort hang, it is already out. The abort
    // then frees the device from the hung kernel before the job ends.
    roll_call_->fail(seq_, what_, started_, error, [nccl = nccl_] { nccl->abort(); });
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

// HPCTRAIN_TEST_FAIL_CUDA_DEVICE=<rank>: that rank fails step 1 of start-up
// (see the header) first thing, as a node whose GPU or libraries are missing would.
void inject_device_failure(int rank) {
  // Read before any thread of this communicator exists.
  const char* failing = std::getenv("HPCTRAIN_TEST_FAIL_CUDA_DEVICE");  // NOLINT(concurrency-mt-unsafe)
  if (failing != nullptr && std::string(failing) == std::to_string(rank)) {
    throw handles::CudaError("device selection failed: injected by HPCTRAIN_TEST_FAIL_CUDA_DEVICE");
  }
}

// Step 1: this rank's GPU, from the GPUs it sees and the ranks on its node.
int select_device(const handles::CudaNcclApi& api, const World& world) {
  int visible = 0;
  handles::check_cuda(api, api.get_device_count(&visible), "cudaGetDeviceCount");
  const int device = cluster::gpu_for_local_rank(world.gpu_placement(), visible);
  handles::check_cuda(api, api.set_device(device), fmt::format("cudaSetDevice({})", device));
  return device;
}

}  // namespace

NcclCommunicator::NcclCommunicator(World& world, cudaStream_t compute_stream)
    : rank_(world.rank()), size_(world.size()), timeout_(world.collective_timeout()), compute_stream_(compute_stream) {
  // 1. What can fail on one rank alone, agreed before any rank waits on another.
  on_all_ranks(world.comm(), [&] {
    inject_device_failure(rank_);
    api_ = handles::load_cuda_nccl();
    device_ = select_device(*api_, world);
    stream_ = std::make_unique<handles::CudaStream>(api_);
    ready_ = std::make_unique<handles::CudaEvent>(api_);
    barrier_word_ = std::make_unique<handles::CudaBuffer>(api_, sizeof(float));
  });
  // 2. Rank 0's unique id, by MPI under the collective timeout.
  ncclUniqueId id{};
  on_all_ranks(world.comm(), [&] {
    if (rank_ == 0) handles::check_nccl(*api_, api_->nccl_get_unique_id(&id), "ncclGetUniqueId");
  });
  world.comm().broadcast(&id, sizeof id, DType::kUInt8, 0);
  // 3. The communicator, polled under the timeout: it is collective #1 of the roll call.
  roll_call_ = std::make_shared<RollCall>(world.mpi_comm(), timeout_, "nccl");
  const std::uint64_t seq = roll_call_->arrive();
  const Clock::time_point started = Clock::now();
  try {
    nccl_ = std::make_shared<handles::NcclComm>(api_, size_, id, rank_, timeout_);
  } catch (const handles::CudaError& e) {
    fail(seq, "ncclCommInitRankConfig", started, e.what());
  }
  settle(seq, "ncclCommInitRankConfig", ncclInProgress);
}

void NcclCommunicator::settle(std::uint64_t seq, const std::string& what, ncclResult_t rc) {
  const Clock::time_point started = Clock::now();
  while (rc == ncclInProgress) {
    roll_call_->poll();
    if (roll_call_->expired(started)) fail(seq, what, started, {});
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    rc = nccl_->state();
  }
  if (rc != ncclSuccess) fail(seq, what, started, api_->nccl_get_error_string(rc));
}

void NcclCommunicator::fail(std::uint64_t seq, const std::string& what, Clock::time_point started,
                            const std::string& error) {
  std::shared_ptr<handles::NcclComm> nccl = nccl_;
  roll_call_->fail(seq, what, started, error, [nccl] {
    if (nccl) nccl->abort();
  });
}

NcclCommunicator::~NcclCommunicator() {
  if (!nccl_) return;
  // Wait for the queued work, for at most the timeout: a peer that is gone
  // would keep it from ever finishing. Then NcclComm finalizes, or aborts.
  if (api_->event_record(ready_->get(), stream_->get()) != cudaSuccess) return;
  const Clock::time_point until = Clock::now() + timeout_;
  while (api_->event_query(ready_->get()) == cudaErrorNotReady && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (api_->event_query(ready_->get()) != cudaSuccess) nccl_->abort();
}

void NcclCommunicator::order_after_compute() {
  // Any thread may issue (DDP's communication thread among them), and a new
  // thread's current device is 0, not this rank's.
  handles::check_cuda(*api_, api_->set_device(device_), fmt::format("cudaSetDevice({})", device_));
  handles::check_cuda(*api_, api_->event_record(ready_->get(), compute_stream_), "cudaEventRecord(compute stream)");
  handles::check_cuda(*api_, api_->stream_wait_event(stream_->get(), ready_->get(), 0), "cudaStreamWaitEvent");
}

WorkPtr NcclCommunicator::issue(const std::string& what, const Call& call) {
  const std::uint64_t seq = roll_call_->arrive();
  const Clock::time_point started = Clock::now();
  // After arrive() every failure goes through the roll call: the other ranks
  // are already in this collective and would otherwise wait for the timeout.
  ncclResult_t rc = ncclSuccess;
  try {
    order_after_compute();
    rc = call(nccl_->get(), stream_->get());
  } catch (const handles::CudaError& e) {
    fail(seq, what, started, e.what());
  }
  settle(seq, what, rc);
  try {
    return std::make_unique<NcclWork>(api_, roll_call_, nccl_, seq, what, stream_->get());
  } catch (const handles::CudaError& e) {
    fail(seq, what, started, e.what());
  }
}

WorkPtr NcclCommunicator::start_allreduce(void* data, std::size_t count, DType dtype, ReduceOp op) {
  return issue(fmt::format("allreduce({} {}, {} elements)", to_string(dtype), to_string(op), count),
               [&](ncclComm_t comm, cudaStream_t stream) {
                 return api_->nccl_all_reduce(data, data, count, nccl_type(dtype), nccl_op(op), comm, stream);
               });
}

WorkPtr NcclCommunicator::start_broadcast(void* data, std::size_t count, DType dtype, int root) {
  return issue(fmt::format("broadcast({}, {} elements, root {})", to_string(dtype), count, root),
               [&](ncclComm_t comm, cudaStream_t stream) {
                 return api_->nccl_broadcast(data, data, count, nccl_type(dtype), root, comm, stream);
               });
}

WorkPtr NcclCommunicator::start_allgather(const void* send, void* recv, std::size_t count, DType dtype) {
  return issue(fmt::format("allgather({}, {} elements per rank)", to_string(dtype), count),
               [&](ncclComm_t comm, cudaStream_t stream) {
                 return api_->nccl_all_gather(send, recv, count, nccl_type(dtype), comm, stream);
               });
}

WorkPtr NcclCommunicator::start_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                                               ReduceOp op) {
  return issue(fmt::format("reduce_scatter({} {}, {} elements per rank)", to_string(dtype), to_string(op), count),
               [&](ncclComm_t comm, cudaStream_t stream) {
                 return api_->nccl_reduce_scatter(send, recv, count, nccl_type(dtype), nccl_op(op), comm, stream);
               });
}

ncclResult_t NcclCommunicator::alltoall_group(const void* send, void* recv, std::size_t count, DType dtype,
                                              ncclComm_t comm, cudaStream_t stream) const {
  const auto ok = [](ncclResult_t rc) { return rc == ncclSuccess || rc == ncclInProgress; };
  ncclResult_t rc = api_->nccl_group_start();
  if (!ok(rc)) return rc;
  const std::size_t block = count * element_size(dtype);
  for (int peer = 0; peer < size_ && ok(rc); ++peer) {
    const std::size_t offset = static_cast<std::size_t>(peer) * block;
    rc = api_->nccl_send(static_cast<const char*>(send) + offset, count, nccl_type(dtype), peer, comm, stream);
    if (ok(rc)) rc = api_->nccl_recv(static_cast<char*>(recv) + offset, count, nccl_type(dtype), peer, comm, stream);
  }
  // The group is closed whatever happened inside it; its first error is the one reported.
  const ncclResult_t ended = api_->nccl_group_end();
  return ok(rc) ? ended : rc;
}

WorkPtr NcclCommunicator::start_alltoall(const void* send, void* recv, std::size_t count, DType dtype) {
  const std::string what = fmt::format("alltoall({}, {} elements per rank)", to_string(dtype), count);
  return issue(what, [&](ncclComm_t comm, cudaStream_t stream) {
    return alltoall_group(send, recv, count, dtype, comm, stream);
  });
}

WorkPtr NcclCommunicator::start_barrier() {
  return issue("barrier", [&](ncclComm_t comm, cudaStream_t stream) {
    return api_->nccl_all_reduce(barrier_word_->get(), barrier_word_->get(), 1, ncclFloat32, ncclSum, comm, stream);
  });
}

}  // namespace hpctrain::comm
