// How checkpoint element types are stored in HDF5 and read back (inside
// ckpt_file only): each ElementType has one file type, little-endian IEEE or
// two's complement, and a reader accepts exactly those four, so that a
// dataset whose datatype header was altered (another float layout, another
// byte order, a compound) is refused instead of converted.
#pragma once

#include <hdf5.h>

#include <optional>

#include "ckpt_file/hdf5_file.h"

namespace hpctrain::ckpt_file {

struct H5TypePair {
  hid_t file;    // how it is stored
  hid_t memory;  // how it is read and written here
};

H5TypePair h5_type(ElementType type);

// The ElementType a stored datatype is, if it is exactly one of ours.
std::optional<ElementType> stored_element_type(hid_t type);

}  // namespace hpctrain::ckpt_file
