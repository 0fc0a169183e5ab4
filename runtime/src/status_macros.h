// Early return on a non-OK mtlite::Status (internal).
#pragma once

#include "mtlite/mtlite.hpp"

#define MTLITE_RETURN_IF_ERROR(expr) \
  do {                               \
    ::mtlite::Status _st = (expr);   \
    if (!_st.ok()) return _st;       \
  } while (0)
