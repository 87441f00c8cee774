#include "table_parse.h"

#include <sstream>
#include <stdexcept>

#include "tool_run.h"

namespace cclab::bench::testing {
namespace {

ParsedMeasurement measurement(std::istringstream& in) {
  ParsedMeasurement m;
  std::string wrong;
  in >> m.timeUs >> m.algBw >> m.busBw >> wrong;
  if (wrong != "N/A") m.wrong = std::stoll(wrong);
  return m;
}

}  // namespace

ParsedTable parseTable(const std::string& text) {
  ParsedTable t;
  const std::string kOob = "# Out of bounds values : ";
  const std::string kAvg = "# Avg bus bandwidth    : ";
  for (const std::string& line : linesOf(text)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.rfind(kOob, 0) == 0) t.outOfBounds = std::stoi(line.substr(kOob.size()));
      else if (line.rfind(kAvg, 0) == 0) t.avgBusBw = std::stod(line.substr(kAvg.size()));
      else if (t.rows.empty()) t.headerLines.push_back(line);
      continue;
    }
    std::istringstream in(line);
    ParsedRow r;
    in >> r.size >> r.count >> r.type >> r.redop >> r.root;
    r.oop = measurement(in);
    r.ip = measurement(in);
    std::string extra;
    if (in.fail() || (in >> extra)) throw std::runtime_error("not a table row: '" + line + "'");
    t.rows.push_back(r);
  }
  return t;
}

}  // namespace cclab::bench::testing
