// The runtime's records as plain Python data for mtlite._mtlite: translator limits, a model's
// size profile, an arena plan and a translate call's profile, each as a dict (or list of dicts).
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace python {

pybind11::dict LimitsDict(const TranslatorLimits& l);
pybind11::list SizeProfileList(const Model& model);
pybind11::dict ArenaPlanDict(const ArenaPlanInfo& plan);

// A translate call's profile copied out of the translator's arena (a ProfileView is valid only
// until the next call), so that it can be converted after the translator's mutex is released.
struct ProfileCopy {
  explicit ProfileCopy(const ProfileView& v);
  ProfileCopy(const ProfileCopy&) = delete;
  ProfileCopy& operator=(const ProfileCopy&) = delete;

  std::vector<ProfileEntry> entries;
  std::vector<ProfileEvent> events;
  ProfileView view;  // v, its arrays pointing into the vectors above
};

// A profile as plain Python data; entries with calls == 0 are left out.
pybind11::dict ProfileDict(const ProfileView& v);

}  // namespace python
}  // namespace mtlite
