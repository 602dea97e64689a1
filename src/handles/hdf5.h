// RAII owner for HDF5 identifiers (files, groups, datasets, dataspaces,
// property lists, datatypes, attributes), and the check that turns a failed
// HDF5 call into an exception naming the call and the file.
#pragma once

#include <hdf5.h>

#include <stdexcept>
#include <string>

namespace hpctrain::handles {

class Hdf5Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Returns `id`, or throws Hdf5Error("<what>: HDF5 error") when it is negative.
hid_t check_h5(hid_t id, const std::string& what);
// For calls that return herr_t.
void check_h5_status(herr_t status, const std::string& what);

// Silences HDF5's own error printing for the life of the process's calls that
// follow: errors reach the user through our exceptions instead.
void quiet_hdf5_errors();

// The libhdf5 this process runs against, "1.14.5" (H5get_libversion).
std::string hdf5_library_version();

class H5Id {
 public:
  H5Id() = default;
  explicit H5Id(hid_t id) : id_(id) {}
  ~H5Id() { reset(); }
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  H5Id(H5Id&& other) noexcept : id_(other.id_) { other.id_ = H5I_INVALID_HID; }
  H5Id& operator=(H5Id&& other) noexcept;

  [[nodiscard]] hid_t get() const { return id_; }
  void reset();

 private:
  hid_t id_ = H5I_INVALID_HID;
};

}  // namespace hpctrain::handles
