// See verify.h beside this file: the old code's CheckpointInfo and reader.
#pragma once

#include "ckpt_file/verify.h"
