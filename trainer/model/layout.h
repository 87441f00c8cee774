// Where an MLP's parameters live in one flat float vector: layer l's weight matrix W_l
// (out x in, row-major, as PyTorch's nn.Linear) followed by its bias b_l, layers in forward order.
// Any run of consecutive layers is one contiguous range, which is what gradient buckets need.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cclab::trainer {

inline constexpr std::string_view kDefaultWidths = "784-256-128-10";

struct LayerSlice {
  std::int64_t in = 0;
  std::int64_t out = 0;
  std::int64_t weightOffset = 0;  // W: out x in
  std::int64_t biasOffset = 0;    // b: out

  [[nodiscard]] std::int64_t begin() const { return weightOffset; }
  [[nodiscard]] std::int64_t end() const { return biasOffset + out; }
  [[nodiscard]] std::int64_t count() const { return end() - begin(); }
};

class ParameterLayout {
 public:
  // widths = {inputs, hidden..., classes}; throws InvalidArgument for fewer than 2 or a width < 1.
  explicit ParameterLayout(std::vector<std::int64_t> widths);

  [[nodiscard]] const std::vector<std::int64_t>& widths() const { return widths_; }
  [[nodiscard]] int layerCount() const { return static_cast<int>(layers_.size()); }
  [[nodiscard]] const LayerSlice& layer(int l) const { return layers_[static_cast<std::size_t>(l)]; }
  [[nodiscard]] std::int64_t parameterCount() const { return layers_.back().end(); }
  [[nodiscard]] std::int64_t inputs() const { return widths_.front(); }
  [[nodiscard]] std::int64_t classes() const { return widths_.back(); }
  [[nodiscard]] std::int64_t maxWidth() const;

 private:
  std::vector<std::int64_t> widths_;
  std::vector<LayerSlice> layers_;
};

// "784,256,128,10" or "784-256-128-10" -> {784, 256, 128, 10}; throws InvalidArgument.
std::vector<std::int64_t> parseWidths(std::string_view s);
std::string formatWidths(const std::vector<std::int64_t>& widths);

}  // namespace cclab::trainer
