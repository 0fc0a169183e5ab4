// The runtime's records as plain Python data for mtlite._mtlite: translator limits, a model's
// size profile, an arena plan and a translate call's profile, each as a dict (or list of dicts).
#pragma once

#include <pybind11/pybind11.h>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace python {

pybind11::dict LimitsDict(const TranslatorLimits& l);
pybind11::list SizeProfileList(const Model& model);
pybind11::dict ArenaPlanDict(const ArenaPlanInfo& plan);

// A profile as plain Python data; entries with calls == 0 are left out.
pybind11::dict ProfileDict(const ProfileView& v);

}  // namespace python
}  // namespace mtlite
