// RAII owners for MPI: the runtime itself, communicators, datatypes and ops.
// Failures become MpiError carrying MPI's own error string.
#pragma once

#include <mpi.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hpctrain::handles {

class MpiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws MpiError("<what>: <MPI error string>") when rc is not MPI_SUCCESS.
void check_mpi(int rc, const std::string& what);

// Throws MpiError unless `provided` (MPI_Init_thread's answer) is
// MPI_THREAD_MULTIPLE: hpctrain's helper threads (DDP's communication thread,
// overlapped merges, collective watchdogs) call MPI while the main thread
// does, which a lower level makes undefined behaviour, not an error.
void require_thread_multiple(int provided);

// MPI_Init_thread on construction, MPI_Finalize on destruction. Exactly one per
// process; MPI itself forbids a second initialisation.
//
// MPI_Finalize is given finalize_grace to return. MPICH 4.0.2 over UCX's TCP
// transport sometimes never does (seen with 2 ranks on 2 nodes, after every
// rank had passed the final barrier), which would hold the job until its time
// limit. Past the grace the process says so and ends with the status the
// program was about to return (set_exit_status): by then all work and files
// are complete.
//
// While an exception unwinds, MPI_Finalize is not called: the other ranks may
// be inside a collective this rank will never join, so it could hang, and the
// program's edge, which prints the error, runs only after this destructor.
// The process ends with the edge's status 1; the other ranks' collective
// timeouts name it as missing. A failure every rank agreed on is different:
// no collective is pending, and the caller finalizes (finalize(1)) before the
// exception goes on, since MPICH 4.2's mpiexec may report status 0 for ranks
// that end without MPI_Finalize.
class MpiRuntime {
 public:
  static constexpr std::chrono::seconds finalize_grace{30};

  MpiRuntime();
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  [[nodiscard]] int thread_level() const { return thread_level_; }
  // This process's rank in MPI_COMM_WORLD, for work before a World exists.
  [[nodiscard]] int world_rank() const;
  [[nodiscard]] static std::string library_version();
  // The status to end with should MPI_Finalize not return in time.
  void set_exit_status(int status) { exit_status_ = status; }
  // MPI_Finalize now, within finalize_grace; past it the process says
  // `outcome` and ends with `status`. Every rank must call it; no MPI call
  // may follow.
  void finalize(int status, std::string_view outcome);

 private:
  int thread_level_ = MPI_THREAD_SINGLE;
  int exit_status_ = 0;
};

// An owned communicator (from MPI_Comm_dup or MPI_Comm_split*), freed on destruction.
class MpiComm {
 public:
  MpiComm() = default;
  explicit MpiComm(MPI_Comm comm) : comm_(comm) {}
  ~MpiComm() { reset(); }
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;
  MpiComm(MpiComm&& other) noexcept : comm_(other.comm_) { other.comm_ = MPI_COMM_NULL; }
  MpiComm& operator=(MpiComm&& other) noexcept;

  static MpiComm dup(MPI_Comm parent);
  static MpiComm split_shared(MPI_Comm parent);  // the ranks sharing this node's memory

  [[nodiscard]] MPI_Comm get() const { return comm_; }
  [[nodiscard]] int rank() const;
  [[nodiscard]] int size() const;
  void reset();

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// An owned, committed derived datatype.
class MpiDatatype {
 public:
  MpiDatatype() = default;
  static MpiDatatype contiguous_bytes(int bytes);
  ~MpiDatatype();
  MpiDatatype(const MpiDatatype&) = delete;
  MpiDatatype& operator=(const MpiDatatype&) = delete;
  MpiDatatype(MpiDatatype&& other) noexcept : type_(other.type_) { other.type_ = MPI_DATATYPE_NULL; }
  MpiDatatype& operator=(MpiDatatype&&) = delete;
  [[nodiscard]] MPI_Datatype get() const { return type_; }

 private:
  explicit MpiDatatype(MPI_Datatype type) : type_(type) {}
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// An owned user-defined reduction.
class MpiOp {
 public:
  MpiOp() = default;
  MpiOp(MPI_User_function* fn, bool commutative);
  ~MpiOp();
  MpiOp(const MpiOp&) = delete;
  MpiOp& operator=(const MpiOp&) = delete;
  MpiOp(MpiOp&& other) noexcept : op_(other.op_) { other.op_ = MPI_OP_NULL; }
  MpiOp& operator=(MpiOp&&) = delete;
  [[nodiscard]] MPI_Op get() const { return op_; }

 private:
  MPI_Op op_ = MPI_OP_NULL;
};

}  // namespace hpctrain::handles
