// auto's choice (auto_rule.h).
#include "collectives/call/auto_rule.h"

#include <span>

namespace cclab {

plan::Algorithm autoAlgorithm(const CollectiveArgs& args, int nranks) {
  using plan::Algorithm;
  if (args.collective != plan::Collective::AllReduce) return Algorithm::Ring;
  const auto bytes = static_cast<std::size_t>(args.count) * sizeOf(args.type);
  if (bytes <= kAutoTinyBytes) return Algorithm::RecursiveDoubling;
  return (bytes <= kAutoSmallBytes && nranks > 2) ? Algorithm::HalvingDoubling : Algorithm::Ring;
}

plan::Algorithm autoAlgorithm(const CollectiveArgs& args, int nranks, Backend backend) {
  const std::span<const HostAutoSmallRow> table = backend == Backend::Host   ? std::span<const HostAutoSmallRow>(kHostAutoSmall)
                                                  : backend == Backend::Proc ? std::span<const HostAutoSmallRow>(kProcAutoSmall)
                                                                             : std::span<const HostAutoSmallRow>();
  if (!table.empty() && args.collective == plan::Collective::AllReduce) {
    const HostAutoSmallRow* row = nullptr;
    for (const HostAutoSmallRow& r : table)
      if (r.nranks <= nranks) row = &r;
    const bool measured = row != nullptr && nranks <= table.back().nranks;
    const auto bytes = static_cast<std::size_t>(args.count) * sizeOf(args.type);
    if (measured && bytes <= row->oneshotBytes) return plan::Algorithm::OneShot;
    if (measured && bytes <= row->twoshotBytes) return plan::Algorithm::TwoShot;
  }
  return autoAlgorithm(args, nranks);
}

}  // namespace cclab
