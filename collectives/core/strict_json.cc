// Duplicate keys refused (strict_json.h), through the parser's callback: one set of keys per open object.
#include "collectives/core/strict_json.h"

#include <set>
#include <utility>
#include <string>
#include <vector>

namespace cclab {

namespace {

// Calls nlohmann's parser on `input` (a stream or a string) with a callback that keeps the keys of
// every open object.
template <class Input>
nlohmann::json parseRefusingDuplicates(Input&& input) {
  using nlohmann::json;
  constexpr int kDuplicateKeyError = 599;  // our id among nlohmann's other_error ids (5xx)
  std::vector<std::set<std::string>> open;
  const json::parser_callback_t onEvent = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: open.emplace_back(); break;
      case json::parse_event_t::object_end:
        if (!open.empty()) open.pop_back();
        break;
      case json::parse_event_t::key:
        if (!open.empty() && !open.back().insert(parsed.get<std::string>()).second)
          throw json::other_error::create(kDuplicateKeyError, "the key \"" + parsed.get<std::string>() + "\" appears twice in one object",
                                          static_cast<const json*>(nullptr));
        break;
      default: break;
    }
    return true;
  };
  return json::parse(std::forward<Input>(input), onEvent);
}

}  // namespace

nlohmann::json parseStrictJson(std::istream& in) { return parseRefusingDuplicates(in); }
nlohmann::json parseStrictJson(std::string_view text) { return parseRefusingDuplicates(text); }

}  // namespace cclab
