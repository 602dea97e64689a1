#include "handles/hdf5.h"

#include <fmt/format.h>

namespace hpctrain::handles {

hid_t check_h5(hid_t id, const std::string& what) {
  if (id < 0) throw Hdf5Error(fmt::format("{}: HDF5 error", what));
  return id;
}

void check_h5_status(herr_t status, const std::string& what) {
  if (status < 0) throw Hdf5Error(fmt::format("{}: HDF5 error", what));
}

void quiet_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

H5Id& H5Id::operator=(H5Id&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    other.id_ = H5I_INVALID_HID;
  }
  return *this;
}

void H5Id::reset() {
  if (id_ < 0) return;
  // One owner type for every kind of identifier: close by what it is.
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: H5Idec_ref(id_); break;
  }
  id_ = H5I_INVALID_HID;
}

std::string hdf5_library_version() {
  unsigned major = 0;
  unsigned minor = 0;
  unsigned release = 0;
  H5get_libversion(&major, &minor, &release);
  return fmt::format("{}.{}.{}", major, minor, release);
}

}  // namespace hpctrain::handles
