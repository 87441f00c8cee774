#include "trainer/model/layout.h"

#include <algorithm>
#include <charconv>

#include "collectives/core/errors.h"

namespace cclab::trainer {

ParameterLayout::ParameterLayout(std::vector<std::int64_t> widths) : widths_(std::move(widths)) {
  if (widths_.size() < 2) throw InvalidArgument("an MLP needs at least an input and an output width");
  for (std::int64_t w : widths_)
    if (w < 1) throw InvalidArgument("MLP widths must be >= 1, got " + std::to_string(w));
  std::int64_t offset = 0;
  for (std::size_t l = 0; l + 1 < widths_.size(); ++l) {
    LayerSlice s;
    s.in = widths_[l];
    s.out = widths_[l + 1];
    s.weightOffset = offset;
    s.biasOffset = offset + s.in * s.out;
    offset = s.end();
    layers_.push_back(s);
  }
}

std::int64_t ParameterLayout::maxWidth() const { return *std::max_element(widths_.begin(), widths_.end()); }

std::vector<std::int64_t> parseWidths(std::string_view s) {
  std::vector<std::int64_t> w;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const std::size_t dash = std::min(s.find_first_of(",-", pos), s.size());  // 784,256,10 or 784-256-10
    std::int64_t v = 0;
    const auto* first = s.data() + pos;
    const auto* last = s.data() + dash;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || ptr != last || v < 1)
      throw InvalidArgument("bad MLP widths '" + std::string(s) + "' (expected e.g. 784,256,128,10)");
    w.push_back(v);
    pos = dash + 1;
  }
  if (w.size() < 2) throw InvalidArgument("bad MLP widths '" + std::string(s) + "': need at least two");
  return w;
}

std::string formatWidths(const std::vector<std::int64_t>& widths) {
  std::string s;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    if (i) s += '-';
    s += std::to_string(widths[i]);
  }
  return s;
}

}  // namespace cclab::trainer
