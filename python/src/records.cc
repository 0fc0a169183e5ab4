// The runtime's records as Python dicts (see records.h).
#include "records.h"

#include <pybind11/stl.h>

namespace py = pybind11;
using namespace pybind11::literals;  // "key"_a = value

namespace mtlite {
namespace python {

py::dict LimitsDict(const TranslatorLimits& l) {
  py::dict d;
  d["max_batch"] = l.max_batch;
  d["max_source_tokens"] = l.max_source_tokens;
  d["max_target_tokens"] = l.max_target_tokens;
  d["max_beam"] = l.max_beam;
  d["max_n_best"] = l.max_n_best;
  d["max_input_bytes"] = l.max_input_bytes;
  d["alignments"] = l.alignments;
  d["threads"] = l.num_threads;
  d["profiling"] = l.profiling;
  d["profile_events"] = l.profile_events;
  d["max_text_bytes"] = l.max_text_bytes;
  return d;
}

py::list SizeProfileList(const Model& model) {
  py::list out;
  for (const SizeComponent& c : model.SizeProfile())
    out.append(py::dict("name"_a = c.name, "bytes"_a = c.bytes, "dtypes"_a = c.dtypes));
  return out;
}

py::dict ArenaPlanDict(const ArenaPlanInfo& plan) {
  py::list buffers;
  for (const ArenaBufferInfo& b : plan.buffers)
    buffers.append(py::dict("name"_a = b.name, "offset"_a = b.offset, "bytes"_a = b.bytes,
                            "first_phase"_a = b.first_phase, "last_phase"_a = b.last_phase,
                            "persistent"_a = b.persistent));
  return py::dict("total_bytes"_a = plan.total_bytes, "unshared_bytes"_a = plan.unshared_bytes,
                  "phases"_a = plan.phases, "buffers"_a = buffers);
}

py::dict ProfileDict(const ProfileView& v) {
  py::list entries, events;
  for (size_t i = 0; i < v.num_entries; ++i) {
    const ProfileEntry& e = v.entries[i];
    if (e.calls == 0) continue;
    entries.append(py::dict("op"_a = e.op, "component"_a = e.component, "parent"_a = e.parent, "layer"_a = e.layer,
                            "calls"_a = e.calls, "total_ns"_a = e.total_ns, "bytes"_a = e.bytes, "macs"_a = e.macs));
  }
  for (size_t i = 0; i < v.num_events; ++i) {
    const ProfileEvent& e = v.events[i];
    events.append(py::dict("op"_a = e.op, "layer"_a = e.layer, "lane"_a = e.lane, "depth"_a = e.depth,
                           "step"_a = e.step, "start_ns"_a = e.start_ns, "end_ns"_a = e.end_ns, "bytes"_a = e.bytes,
                           "macs"_a = e.macs, "m"_a = e.m, "n"_a = e.n, "k"_a = e.k));
  }
  return py::dict("wall_ns"_a = v.wall_ns, "steps"_a = v.steps, "sentences"_a = v.sentences, "threads"_a = v.threads,
                  "dropped_events"_a = v.dropped_events, "entries"_a = entries, "events"_a = events);
}

ProfileCopy::ProfileCopy(const ProfileView& v)
    : entries(v.entries, v.entries + v.num_entries), events(v.events, v.events + v.num_events), view(v) {
  view.entries = entries.data();
  view.events = events.data();
}

}  // namespace python
}  // namespace mtlite
