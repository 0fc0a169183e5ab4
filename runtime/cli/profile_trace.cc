#include "profile_trace.h"

#include <algorithm>
#include <cinttypes>

#include "json_writer.h"

namespace mtlite {
namespace cli {

bool TraceWriter::Open(const std::string& path, const std::string& model, int threads) {
  if (!out_.Open(path)) return false;
  open_ = true;
  out_.Write("{\"displayTimeUnit\": \"ns\",\n\"traceEvents\": [\n");
  Meta("process_name", 0, "\"name\": " + JsonQuote("mtlite profile: " + model));
  for (int lane = 0; lane < threads; ++lane) {
    Meta("thread_name", lane,
         "\"name\": " + JsonQuote(lane == 0 ? std::string("caller (lane 0)") : "worker " + std::to_string(lane)));
    Meta("thread_sort_index", lane, "\"sort_index\": " + std::to_string(lane));
  }
  return true;
}

void TraceWriter::Call(const ProfileView& v, uint32_t call, uint64_t offset_ns,
                       const std::map<std::string, std::string>& cat) {
  order_.resize(v.num_events);
  for (size_t i = 0; i < v.num_events; ++i) order_[i] = &v.events[i];
  std::stable_sort(order_.begin(), order_.end(), [](const ProfileEvent* a, const ProfileEvent* b) {
    if (a->lane != b->lane) return a->lane < b->lane;
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns;
    return a->end_ns > b->end_ns;  // a parent before a child that starts with it
  });
  for (const ProfileEvent* e : order_) {
    const auto c = cat.find(e->op);
    std::string args = "\"call\": " + std::to_string(call) + ", \"depth\": " + std::to_string(e->depth);
    if (e->layer >= 0) args += ", \"layer\": " + std::to_string(e->layer);
    if (e->step >= 0) args += ", \"step\": " + std::to_string(e->step);
    if (e->bytes) args += ", \"bytes\": " + std::to_string(e->bytes);
    if (e->macs) args += ", \"macs\": " + std::to_string(e->macs);
    if (e->m || e->n || e->k)
      args += ", \"m\": " + std::to_string(e->m) + ", \"n\": " + std::to_string(e->n) + ", \"k\": " + std::to_string(e->k);
    const uint64_t ts = offset_ns + e->start_ns, dur = e->end_ns - e->start_ns;
    Sep();
    out_.Printf("{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": 1, \"tid\": %d, "
                "\"ts\": %" PRIu64 ".%03" PRIu64 ", \"dur\": %" PRIu64 ".%03" PRIu64 ", \"args\": {%s}}",
                e->op, c == cat.end() ? "?" : c->second.c_str(), e->lane + 1, ts / 1000, ts % 1000, dur / 1000,
                dur % 1000, args.c_str());
    ++events_;
  }
}

bool TraceWriter::Finish(const std::string& other_data) {
  out_.Write("\n],\n\"otherData\": " + other_data + "}\n");
  open_ = false;
  return out_.Close();
}

void TraceWriter::Sep() {
  if (!first_) out_.Write(",\n");
  first_ = false;
}

void TraceWriter::Meta(const char* name, int lane, const std::string& args) {
  Sep();
  out_.Printf("{\"name\": \"%s\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, \"args\": {%s}}", name, lane + 1,
              args.c_str());
}

}  // namespace cli
}  // namespace mtlite
