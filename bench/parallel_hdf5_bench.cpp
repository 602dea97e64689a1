// parallel_hdf5_bench: one checkpoint's bytes written by every rank at once,
// as a file per rank (hpctrain's sharded layout) against one shared file
// through parallel HDF5 (the MPI-IO driver), alternated round by round.
//
//   mpiexec -n N build/bench/parallel_hdf5_bench --dir D [--total-mib 1047] [--rounds 3]
//
// Each rank holds total/N of the bytes (rounded to whole 4 MiB chunks), as
// float32. Contenders, each ending with the data on disk (fsync):
//   per-rank          every rank creates its own file and writes its part into
//                     a dataset chunked by 4 MiB with HDF5's Fletcher32 filter
//                     (the chunk size and checksum of hpctrain's checkpoints);
//                     each rank fsyncs its file.
//   shared-fletcher32 one file for all ranks, one dataset with the same chunks
//                     and filter; every rank writes its slice. HDF5 writes
//                     filtered datasets in parallel only collectively.
//   shared-plain      one file, one contiguous dataset without a checksum,
//                     independent writes: parallel HDF5's fastest layout, which
//                     gives up the per-chunk checksum.
// After each shared write rank 0 fsyncs the file (one page cache on one node).
// Every rank reads its part back after each write, untimed, and compares it.
// Figure per contender: the median over rounds of the time from a barrier
// before the first create to a barrier after the last fsync, on rank 0.
//
// Built against Debian's MPICH build of HDF5 (libhdf5-mpich-dev) and against
// nothing of hpctrain's: hpctrain links the serial HDF5, and the two libraries
// cannot share a process. For the same reason the few HDF5 handles here are
// owned by a local guard instead of the handles layer's.
#include <fcntl.h>
#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr hsize_t kChunkElements = (hsize_t{4} << 20) / sizeof(float);

// Closes an HDF5 handle with the function that owns its kind.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t), const char* what) : id_(id), close_(close) {
    if (id < 0) throw std::runtime_error(fmt::format("HDF5: {} failed", what));
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { close_(id_); }
  hid_t get() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void check(herr_t status, const char* what) {
  if (status < 0) throw std::runtime_error(fmt::format("HDF5: {} failed", what));
}

void fsync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) throw std::runtime_error("fsync " + path + " failed");
  ::close(fd);
}

struct Part {
  int rank = 0;
  int ranks = 1;
  std::vector<float> data;
};

std::string per_rank_path(const std::string& dir, int rank) { return fmt::format("{}/rank-{:05}.h5", dir, rank); }
std::string shared_path(const std::string& dir) { return dir + "/shared.h5"; }

// Creates a float32 dataset of ELEMENTS, chunked with Fletcher32 or contiguous.
Handle create_dataset(hid_t file, hsize_t elements, bool fletcher32) {
  const Handle space(H5Screate_simple(1, &elements, nullptr), H5Sclose, "H5Screate_simple");
  const Handle create(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate");
  if (fletcher32) {
    check(H5Pset_chunk(create.get(), 1, &kChunkElements), "H5Pset_chunk");
    check(H5Pset_fletcher32(create.get()), "H5Pset_fletcher32");
  }
  return {H5Dcreate2(file, "weights", H5T_IEEE_F32LE, space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT), H5Dclose,
          "H5Dcreate2"};
}

void write_per_rank(const Part& part, const std::string& dir) {
  const std::string path = per_rank_path(dir, part.rank);
  {
    const Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, "H5Fcreate");
    const Handle set = create_dataset(file.get(), part.data.size(), true);
    check(H5Dwrite(set.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, part.data.data()), "H5Dwrite");
  }
  fsync_file(path);
}

void write_shared(const Part& part, const std::string& dir, bool fletcher32) {
  const std::string path = shared_path(dir);
  {
    const Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate");
    check(H5Pset_fapl_mpio(access.get(), MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    const Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), H5Fclose, "H5Fcreate");
    const auto mine = static_cast<hsize_t>(part.data.size());
    const Handle set = create_dataset(file.get(), mine * static_cast<hsize_t>(part.ranks), fletcher32);
    const Handle memory(H5Screate_simple(1, &mine, nullptr), H5Sclose, "H5Screate_simple");
    const Handle space(H5Dget_space(set.get()), H5Sclose, "H5Dget_space");
    const hsize_t first = mine * static_cast<hsize_t>(part.rank);
    check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &first, nullptr, &mine, nullptr), "H5Sselect_hyperslab");
    const Handle transfer(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "H5Pcreate");
    check(H5Pset_dxpl_mpio(transfer.get(), fletcher32 ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT),
          "H5Pset_dxpl_mpio");
    check(H5Dwrite(set.get(), H5T_NATIVE_FLOAT, memory.get(), space.get(), transfer.get(), part.data.data()),
          "H5Dwrite");
  }
  if (part.rank == 0) fsync_file(path);
}

// Reads this rank's slice back (untimed) and compares it with what was written,
// so that no contender is timed on a write that lost data.
void check_written(const Part& part, const std::string& path, hsize_t first) {
  std::vector<float> back(part.data.size());
  {
    const Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "H5Fopen");
    const Handle set(H5Dopen2(file.get(), "weights", H5P_DEFAULT), H5Dclose, "H5Dopen2");
    const auto mine = static_cast<hsize_t>(part.data.size());
    const Handle memory(H5Screate_simple(1, &mine, nullptr), H5Sclose, "H5Screate_simple");
    const Handle space(H5Dget_space(set.get()), H5Sclose, "H5Dget_space");
    check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &first, nullptr, &mine, nullptr), "H5Sselect_hyperslab");
    check(H5Dread(set.get(), H5T_NATIVE_FLOAT, memory.get(), space.get(), H5P_DEFAULT, back.data()), "H5Dread");
  }
  if (back != part.data) throw std::runtime_error(path + ": what was read back differs from what was written");
}

double timed(const std::function<void()>& write) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  write();
  MPI_Barrier(MPI_COMM_WORLD);
  return MPI_Wtime() - start;
}

void remove_files(const Part& part, const std::string& dir) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (part.rank == 0) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) std::filesystem::remove(entry.path());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

int run(int argc, char** argv) {
  CLI::App app{"per-rank HDF5 files against one shared file through parallel HDF5"};
  std::string dir;
  std::int64_t total_mib = 1047;
  int rounds = 3;
  app.add_option("--dir", dir, "an empty directory on the file system to measure")->required();
  app.add_option("--total-mib", total_mib, "the checkpoint's size over all ranks, MiB")->check(CLI::Range(4, 1 << 20));
  app.add_option("--rounds", rounds, "rounds; each writes every contender once")->check(CLI::Range(1, 100));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  Part part;
  MPI_Comm_rank(MPI_COMM_WORLD, &part.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &part.ranks);
  const auto chunks = std::max<std::int64_t>(1, total_mib / 4 / part.ranks);
  part.data.resize(static_cast<std::size_t>(chunks) * kChunkElements);
  for (std::size_t i = 0; i < part.data.size(); ++i) part.data[i] = static_cast<float>((i * 2654435761U) % 1000003U);
  const double bytes = static_cast<double>(part.data.size() * sizeof(float)) * part.ranks;

  const std::vector<std::pair<std::string, std::function<void()>>> contenders{
      {"per-rank", [&] { write_per_rank(part, dir); }},
      {"shared-fletcher32", [&] { write_shared(part, dir, true); }},
      {"shared-plain", [&] { write_shared(part, dir, false); }},
  };
  std::map<std::string, std::vector<double>> seconds;
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < contenders.size(); ++i) {  // which goes first rotates
      const auto& [name, write] = contenders[(i + static_cast<std::size_t>(round)) % contenders.size()];
      seconds[name].push_back(timed(write));
      const bool shared = name != "per-rank";
      check_written(part, shared ? shared_path(dir) : per_rank_path(dir, part.rank),
                    shared ? part.data.size() * static_cast<hsize_t>(part.rank) : 0);
      remove_files(part, dir);
    }
  }
  if (part.rank == 0) {
    fmt::print("{} ranks, {:.0f} MiB in all ({} MiB per rank), {} rounds, median of rounds\n", part.ranks,
               bytes / (1 << 20), chunks * 4, rounds);
    const double reference = median(seconds["per-rank"]);
    for (const auto& [name, write] : contenders) {
      const double s = median(seconds[name]);
      fmt::print("  {:<18} {:7.3f} s  {:6.0f} MiB/s  time / per-rank {:5.2f}\n", name, s, bytes / s / (1 << 20),
                 s / reference);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "parallel_hdf5_bench: {}\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
