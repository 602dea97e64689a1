#include "handles/mpi.h"

#include <fmt/format.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

namespace hpctrain::handles {
namespace {
bool finalized() {
  int done = 0;
  MPI_Finalized(&done);
  return done != 0;
}
}  // namespace

void check_mpi(int rc, const std::string& what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw MpiError(fmt::format("{}: {}", what, std::string(text, static_cast<std::size_t>(len))));
}

void require_thread_multiple(int provided) {
  if (provided == MPI_THREAD_MULTIPLE) return;
  const char* name = provided == MPI_THREAD_SINGLE       ? "MPI_THREAD_SINGLE"
                     : provided == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                     : provided == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                                                         : "an unknown level";
  throw MpiError(fmt::format(
      "the MPI library provides thread level {} ({}), but hpctrain needs MPI_THREAD_MULTIPLE: its communication "
      "and watchdog threads call MPI beside the main thread; use an MPI library built with thread support "
      "(MPICH configured with --enable-threads=multiple or runtime, as Debian's is)",
      name, provided));
}

MpiRuntime::MpiRuntime() {
  // THREAD_MULTIPLE so that a reducer's communication thread may drive MPI while
  // the main thread also issues collectives.
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &thread_level_), "MPI_Init_thread");
  try {
    require_thread_multiple(thread_level_);
  } catch (const MpiError&) {
    MPI_Finalize();  // every rank gets the same answer from the same library, so none is left waiting
    throw;
  }
  // Errors come back as return codes, so they reach our exceptions and messages
  // instead of MPI's default abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

MpiRuntime::~MpiRuntime() {
  if (finalized() || std::uncaught_exceptions() > 0) return;
  finalize(exit_status_, "the work is complete");
}

void MpiRuntime::finalize(int status, std::string_view outcome) {
  exit_status_ = status;
  std::mutex mutex;
  std::condition_variable done_changed;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mutex);
    if (done_changed.wait_for(lock, finalize_grace, [&] { return done; })) return;
    fmt::print(stderr,
               "hpctrain: MPI_Finalize did not return within {} s (a known MPICH 4.0.2 hang over UCX's TCP "
               "transport); {}, ending with status {}\n",
               finalize_grace.count(), outcome, status);
    (void)std::fflush(nullptr);
    std::_Exit(status);
  });
  MPI_Finalize();
  {
    const std::lock_guard lock(mutex);
    done = true;
  }
  done_changed.notify_all();
  watchdog.join();
}

int MpiRuntime::world_rank() const {
  int rank = 0;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  return rank;
}

std::string MpiRuntime::library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string version(text, static_cast<std::size_t>(len));
  if (auto nl = version.find('\n'); nl != std::string::npos) version.resize(nl);
  for (char& c : version) {
    if (c == '\t') c = ' ';
  }
  return version;
}

MpiComm& MpiComm::operator=(MpiComm&& other) noexcept {
  if (this != &other) {
    reset();
    comm_ = other.comm_;
    other.comm_ = MPI_COMM_NULL;
  }
  return *this;
}

MpiComm MpiComm::dup(MPI_Comm parent) {
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(parent, &comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return MpiComm(comm);
}

MpiComm MpiComm::split_shared(MPI_Comm parent) {
  int rank = 0;
  MPI_Comm_rank(parent, &rank);
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &comm),
            "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return MpiComm(comm);
}

int MpiComm::rank() const {
  int r = 0;
  check_mpi(MPI_Comm_rank(comm_, &r), "MPI_Comm_rank");
  return r;
}

int MpiComm::size() const {
  int s = 0;
  check_mpi(MPI_Comm_size(comm_, &s), "MPI_Comm_size");
  return s;
}

void MpiComm::reset() {
  if (comm_ != MPI_COMM_NULL && !finalized()) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
}

MpiDatatype MpiDatatype::contiguous_bytes(int bytes) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_contiguous(bytes, MPI_BYTE, &type), "MPI_Type_contiguous");
  check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
  return MpiDatatype(type);
}

MpiDatatype::~MpiDatatype() {
  if (type_ != MPI_DATATYPE_NULL && !finalized()) MPI_Type_free(&type_);
}

MpiOp::MpiOp(MPI_User_function* fn, bool commutative) {
  check_mpi(MPI_Op_create(fn, commutative ? 1 : 0, &op_), "MPI_Op_create");
}

MpiOp::~MpiOp() {
  if (op_ != MPI_OP_NULL && !finalized()) MPI_Op_free(&op_);
}

}  // namespace hpctrain::handles
