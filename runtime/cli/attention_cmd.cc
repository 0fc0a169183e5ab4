// mtlite attention -m MODEL TEXT [TEXT ...] [-o MAP.svg|MAP.json] [--json FILE] [--sentence I]
//                  [--layer L] [--beam N] [--crop]
// The cross-attention of one sentence as a heatmap: rows = target tokens (generated + </s>),
// columns = source tokens, per decoder layer, mean over heads (the runtime's alignments,
// TranslateOptions::return_alignments with alignment_layer = each layer). All TEXTs form one
// batch, so beside a longer sentence the drawn one has padding columns: masked keys, whose
// weights are exactly 0 (hatched in the picture). SVG is written here (no dependency); the JSON
// holds the numbers (bench/plot_attention.py draws them as PNG). docs/profiling.md.
#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "json_writer.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "output_file.h"

namespace mtlite {
namespace cli {

// `mtlite attention --help`: what the command does.
constexpr char kAttentionSummary[] =
    "Draws the cross-attention of one sentence: source tokens x target tokens (generated + </s>),\n"
    "per decoder layer, mean over heads. The TEXTs are translated as one batch and --sentence\n"
    "picks the one drawn: beside a longer sentence it shows its padding columns (masked, exactly 0,\n"
    "hatched). -o FILE.svg writes the picture, -o/--json FILE.json the numbers (rows sum to 1 over\n"
    "the sentence's own source tokens).";

namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    char c = s[s.size() - suffix.size() + i];
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

// One sentence's cross-attention: [rows][cols], cols = the batch's padded source width.
struct Heatmap {
  std::vector<std::string> source, target;  // pieces: the sentence's own source tokens; target + </s>
  std::vector<int32_t> source_ids, target_ids;
  std::string text, translation;
  int cols = 0, heads = 0;
  std::vector<int> layers;
  std::vector<std::vector<float>> weights;  // per layer: rows x cols
  int rows() const { return int(target.size()); }
};

std::string XmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') out += c;
        break;
    }
  }
  return out;
}

// UTF-8 code points (for label widths).
int Chars(std::string_view s) {
  int n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// White -> light blue -> dark blue; 0 is white.
std::string Color(float v) {
  const float x = v < 0 ? 0 : v > 1 ? 1 : v;
  static const float stops[3][3] = {{255, 255, 255}, {107, 174, 214}, {8, 48, 107}};
  const int i = x < 0.5f ? 0 : 1;
  const float t = x < 0.5f ? x * 2 : (x - 0.5f) * 2;
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", int(stops[i][0] + (stops[i + 1][0] - stops[i][0]) * t + 0.5f),
                int(stops[i][1] + (stops[i + 1][1] - stops[i][1]) * t + 0.5f),
                int(stops[i][2] + (stops[i + 1][2] - stops[i][2]) * t + 0.5f));
  return buf;
}

std::string Num(double v, int decimals = 1) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string Svg(const Heatmap& h, bool crop) {
  const int cell = 22, font = 11;
  const double char_w = 6.6;  // average advance of an 11 px sans-serif glyph
  const int real = int(h.source.size());
  const int cols = crop ? real : h.cols;
  auto source_label = [&](int j) { return j < real ? h.source[size_t(j)] : std::string("<pad>"); };
  int src_chars = 5, tgt_chars = 3;
  for (int j = 0; j < cols; ++j) src_chars = std::max(src_chars, Chars(source_label(j)));
  for (const std::string& t : h.target) tgt_chars = std::max(tgt_chars, Chars(t));
  const int left = 14 + int(tgt_chars * char_w), top = 30 + int(src_chars * char_w * 0.82);
  const int pw = left + cols * cell + 16, ph = top + h.rows() * cell + 12;
  const int per_row = std::min<int>(3, int(h.layers.size()));
  const int grid_rows = (int(h.layers.size()) + per_row - 1) / per_row;
  const int header = 58, footer = 46;
  const int width = std::max(per_row * pw, 520), height = header + grid_rows * ph + footer;

  std::string s;
  s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
       std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
       "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"" + std::to_string(font) + "\">\n";
  s += "<defs><pattern id=\"pad\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
       "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ffffff\"/>"
       "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#bbbbbb\" stroke-width=\"2\"/></pattern></defs>\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  s += "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">cross-attention (mean over " +
       std::to_string(h.heads) + " heads): " + XmlEscape(h.text) + "</text>\n";
  s += "<text x=\"10\" y=\"40\">&#8594; " + XmlEscape(h.translation) + "</text>\n";
  for (size_t p = 0; p < h.layers.size(); ++p) {
    const int ox = int(p % size_t(per_row)) * pw, oy = header + int(p / size_t(per_row)) * ph;
    const std::vector<float>& w = h.weights[p];
    s += "<g transform=\"translate(" + std::to_string(ox) + "," + std::to_string(oy) + ")\">\n";
    s += "<text x=\"" + std::to_string(left) + "\" y=\"14\" font-weight=\"bold\">decoder layer " +
         std::to_string(h.layers[p]) + "</text>\n";
    for (int j = 0; j < cols; ++j) {  // column labels, rotated
      const double x = left + j * cell + cell * 0.5 + 4, y = top - 6;
      s += "<text transform=\"translate(" + Num(x) + "," + Num(y) + ") rotate(-55)\"";
      if (j >= real) s += " fill=\"#888888\" font-style=\"italic\"";
      s += ">" + XmlEscape(source_label(j)) + "</text>\n";
    }
    for (int i = 0; i < h.rows(); ++i) {
      const int y = top + i * cell;
      s += "<text x=\"" + std::to_string(left - 5) + "\" y=\"" + Num(y + cell * 0.5 + font * 0.35) +
           "\" text-anchor=\"end\">" + XmlEscape(h.target[size_t(i)]) + "</text>\n";
      for (int j = 0; j < cols; ++j) {
        const float v = w[size_t(i) * size_t(h.cols) + size_t(j)];
        // A padding cell is hatched only when its weight is exactly 0: a bug would show colour.
        const std::string fill = j >= real && v == 0.0f ? "url(#pad)" : Color(v);
        char value[32];
        std::snprintf(value, sizeof value, "%.4f", double(v));
        s += "<rect x=\"" + std::to_string(left + j * cell) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
             std::to_string(cell) + "\" height=\"" + std::to_string(cell) + "\" fill=\"" + fill +
             "\" stroke=\"#e8e8e8\" stroke-width=\"0.5\"><title>" + XmlEscape(h.target[size_t(i)]) + " &#8592; " +
             XmlEscape(source_label(j)) + ": " + value + "</title></rect>\n";
      }
    }
    s += "</g>\n";
  }
  // Colour bar and legend.
  const int by = height - footer + 8, bx = 10, bw = 200;
  for (int i = 0; i < 50; ++i)
    s += "<rect x=\"" + Num(bx + i * bw / 50.0) + "\" y=\"" + std::to_string(by) + "\" width=\"" + Num(bw / 50.0 + 0.5) +
         "\" height=\"12\" fill=\"" + Color(float(i) / 49.0f) + "\"/>\n";
  s += "<text x=\"" + std::to_string(bx) + "\" y=\"" + std::to_string(by + 26) + "\">0</text>\n";
  s += "<text x=\"" + std::to_string(bx + bw) + "\" y=\"" + std::to_string(by + 26) + "\" text-anchor=\"end\">1</text>\n";
  s += "<rect x=\"" + std::to_string(bx + bw + 20) + "\" y=\"" + std::to_string(by) +
       "\" width=\"12\" height=\"12\" fill=\"url(#pad)\" stroke=\"#cccccc\"/>\n";
  s += "<text x=\"" + std::to_string(bx + bw + 38) + "\" y=\"" + std::to_string(by + 10) +
       "\">source padding of the batch (masked: weight exactly 0)</text>\n";
  s += "<text x=\"" + std::to_string(bx + bw + 20) + "\" y=\"" + std::to_string(by + 26) +
       "\">rows: target tokens; columns: source tokens; each row sums to 1</text>\n";
  s += "</svg>\n";
  return s;
}

std::string FloatText(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", double(v));
  return buf;
}

std::string Json(const AttentionArgs& a, const Heatmap& h) {
  JsonWriter w;
  w.BeginObject().Key("format").String("mtlite-attention").Key("format_version").Int(1).Key("model").String(a.model);
  w.Key("texts").BeginArray(JsonWriter::kInline);
  for (const std::string& t : a.texts) w.String(t);
  w.EndArray().Key("sentence").Int(a.sentence).Key("text").String(h.text).Key("translation").String(h.translation);
  w.Key("beam").Int(a.beam).Key("heads").Int(h.heads).Key("source_tokens").Int(h.cols);
  w.Key("source_length").Int(int(h.source.size()));
  w.Key("source_pieces").BeginArray(JsonWriter::kInline);
  for (const std::string& p : h.source) w.String(p);
  w.EndArray().Key("source_ids").BeginArray(JsonWriter::kInline);
  for (int32_t id : h.source_ids) w.Int(id);
  w.EndArray().Key("target_pieces").BeginArray(JsonWriter::kInline);
  for (const std::string& p : h.target) w.String(p);
  w.EndArray().Key("target_ids").BeginArray(JsonWriter::kInline);
  for (int32_t id : h.target_ids) w.Int(id);
  w.EndArray().Key("layers").BeginArray();
  for (size_t p = 0; p < h.layers.size(); ++p) {
    w.BeginObject().Key("layer").Int(h.layers[p]).Key("weights").BeginArray();
    for (int i = 0; i < h.rows(); ++i) {
      w.BeginArray(JsonWriter::kInline);
      for (int j = 0; j < h.cols; ++j) w.Raw(FloatText(h.weights[p][size_t(i) * size_t(h.cols) + size_t(j)]));
      w.EndArray();
    }
    w.EndArray().EndObject();
  }
  w.EndArray();
  return w.EndObject().str() + "\n";
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "mtlite attention: %s\n", message.c_str());
  return 1;
}

}  // namespace

ParseResult ParseAttentionArgs(int argc, const char* const* argv, AttentionArgs* a) {
  ArgParser p("mtlite attention", kAttentionSummary);
  p.Rest("TEXT", &a->texts, "sentences translated as one batch (at least one)");
  p.String("-m,--model", "MODEL", &a->model, "the .mtlite model file").Required();
  p.String("-o,--output", "FILE", &a->output, "FILE.svg: the heatmap; FILE.json: its numbers");
  p.String("--json", "FILE", &a->json, "also write the numbers as JSON");
  p.Int("--sentence", "I", 0, 1023, &a->sentence, "the TEXT to draw (0-based); the others are its batch");
  p.Int("--layer", "L", -1, 65535, &a->layer, "decoder layer to draw; -1: every layer");
  p.Int("--beam", "N", 1, 64, &a->beam, "beam size; 1 = greedy");
  p.Int("--max-length", "N", 1, 65536, &a->max_length, "generated tokens, including </s>");
  p.Int("--max-source-tokens", "N", 1, 65536, &a->max_source_tokens, "source tokens per sentence, including </s>");
  p.Flag("--crop", &a->crop, "draw only the sentence's own source tokens (the JSON keeps the padded width)");
  p.Check([a] {
    if (a->texts.empty()) return std::string("missing TEXT (the sentence to draw)");
    if (a->texts.size() > 1024) return std::string("at most 1024 TEXTs");
    if (size_t(a->sentence) >= a->texts.size())
      return "--sentence " + std::to_string(a->sentence) + " but there " +
             (a->texts.size() == 1 ? std::string("is 1 TEXT") : "are " + std::to_string(a->texts.size()) + " TEXTs");
    if (a->output.empty() && a->json.empty()) return std::string("give -o FILE.svg|FILE.json and/or --json FILE");
    if (!a->output.empty() && !EndsWith(a->output, ".svg") && !EndsWith(a->output, ".json"))
      return "-o " + a->output + ": the name must end in .svg or .json (PNG: bench/plot_attention.py draws the JSON)";
    return std::string();
  });
  const ParseResult r = p.Parse(argc, argv);
  a->batch = int(a->texts.size());
  return r;
}

int AttentionMain(int argc, char** argv) {
  AttentionArgs a;
  const ParseResult parsed = ParseAttentionArgs(argc, argv, &a);
  if (!parsed.ok()) return PrintParseResult(parsed, "mtlite attention");
  auto model = Model::Load(a.model);
  if (!model.ok()) return Fail(a.model + ": " + model.status().ToString());
  const Model& md = *model.value();
  const ModelConfig& cfg = md.config();
  if (a.layer >= cfg.decoder_layers) {
    std::fprintf(stderr, "mtlite attention: --layer %d: the model has %d decoder layers (0..%d)\n", a.layer,
                 cfg.decoder_layers, cfg.decoder_layers - 1);
    return 2;
  }
  TranslatorLimits lim = TranslationLimits(a, cfg);
  size_t max_bytes = 4096;
  for (const std::string& t : a.texts) max_bytes = std::max(max_bytes, t.size());
  lim.max_input_bytes = int(std::min<size_t>(max_bytes, size_t(1) << 24));
  lim.alignments = true;
  auto tr = Translator::Create(model.value(), lim);
  if (!tr.ok()) return Fail(tr.status().ToString());

  Heatmap h;
  h.text = a.texts[size_t(a.sentence)];
  h.heads = cfg.decoder_heads;
  if (Status s = EncodeSource(md, h.text, &h.source_ids); !s.ok()) return Fail("sentence " + std::to_string(a.sentence) + ": " + s.ToString());
  if (h.source_ids.empty()) return Fail("sentence " + std::to_string(a.sentence) + " is empty: nothing to draw");
  const detail::ModelData& data = md.data();
  for (int32_t id : h.source_ids) h.source.emplace_back(data.source_vocab.id_to_piece[size_t(id)]);

  std::vector<std::string_view> views(a.texts.begin(), a.texts.end());
  TranslateOptions opt;
  opt.beam_size = a.beam;
  opt.max_length = lim.max_target_tokens;
  opt.return_alignments = true;
  for (int l = 0; l < cfg.decoder_layers; ++l) {
    if (a.layer >= 0 && l != a.layer) continue;
    opt.alignment_layer = l;
    const SentenceResultView* res = nullptr;
    if (Status s = tr.value()->TranslateViews(views.data(), views.size(), opt, &res); !s.ok()) return Fail(s.ToString());
    const SentenceResultView& sv = res[a.sentence];
    if (sv.num_hypotheses < 1 || !sv.hypotheses[0].alignment) return Fail("the runtime returned no alignment");
    const HypothesisView& hyp = sv.hypotheses[0];
    if (h.layers.empty()) {
      h.translation.assign(hyp.text.data(), hyp.text.size());
      h.cols = hyp.source_tokens;
      h.target_ids.assign(hyp.ids, hyp.ids + hyp.num_ids);
      h.target_ids.push_back(cfg.eos_id);
      for (int32_t id : h.target_ids) h.target.emplace_back(data.target_vocab.id_to_piece[size_t(id)]);
      if (h.cols < int(h.source.size()))
        return Fail("the alignment has " + std::to_string(h.cols) + " columns for " + std::to_string(h.source.size()) +
                    " source tokens");
    } else if (hyp.num_ids + 1 != h.rows() || hyp.source_tokens != h.cols) {
      return Fail("the translation changed between layers");
    }
    h.layers.push_back(l);
    h.weights.emplace_back(hyp.alignment, hyp.alignment + size_t(h.rows()) * size_t(h.cols));
  }

  if (!a.output.empty()) {
    const std::string out = EndsWith(a.output, ".svg") ? Svg(h, a.crop) : Json(a, h);
    if (std::string error; !WriteWholeFile(a.output, out, &error)) return Fail(error);
  }
  if (std::string error; !a.json.empty() && !WriteWholeFile(a.json, Json(a, h), &error)) return Fail(error);
  return 0;
}

}  // namespace cli
}  // namespace mtlite
