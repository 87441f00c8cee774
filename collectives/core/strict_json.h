// JSON read strictly: nlohmann's parser keeps the last of two equal keys of an object without a word,
// so a hand-edited file with a key twice would silently take one of them. Every tool's input file
// (topologies, measured results, baselines, MSCCL++ plans) is read through this instead.
#pragma once

#include <istream>
#include <string_view>

#include <nlohmann/json.hpp>

namespace cclab {

// nlohmann::json::parse, plus: throws nlohmann::json::other_error naming the key when an object holds a
// key twice (the parser's own errors as before).
[[nodiscard]] nlohmann::json parseStrictJson(std::istream& in);
[[nodiscard]] nlohmann::json parseStrictJson(std::string_view text);

}  // namespace cclab
