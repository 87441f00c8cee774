// MSCCL's XML algorithm format out (algorithm_file.h; the reader and the format: msccl_xml.cc; the
// mapping: docs/algorithms-as-files.md). One threadblock per (channel, send peer, receive peer), as MSCCL
// requires; every op after the first of its channel depends on the op before it, so the file keeps the
// plan's order exactly; phases, Plan::deps, root, ranks per node and phase count travel as cclab's
// extension attributes.
#include <pugixml.hpp>

#include <map>
#include <sstream>
#include <string>
#include <tuple>

#include "collectives/plan/file_program.h"

namespace cclab::plan {

namespace {

std::string mscclName(Collective c) {
  switch (c) {
    case Collective::AllReduce: return "allreduce";
    case Collective::AllGather: return "allgather";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::Broadcast: return "broadcast";
    case Collective::Reduce: return "reduce";
  }
  return "?";
}

}  // namespace

std::string exportMscclXml(const AlgorithmFile& file) {
  const Plan& u = file.unit;
  pugi::xml_document doc;
  pugi::xml_node algo = doc.append_child("algo");
  const bool blocked = u.collective == Collective::AllGather || u.collective == Collective::ReduceScatter;
  algo.append_attribute("name") = file.name.c_str();
  algo.append_attribute("proto") = "Simple";
  algo.append_attribute("nchannels") = u.nchannels;
  algo.append_attribute("nchunksperloop") = static_cast<long long>(blocked ? u.count * u.nranks : u.count);
  algo.append_attribute("ngpus") = u.nranks;
  algo.append_attribute("coll") = mscclName(u.collective).c_str();
  algo.append_attribute("inplace") = 1;
  algo.append_attribute("outofplace") = 1;
  algo.append_attribute("root") = u.root;
  algo.append_attribute("ranks_per_node") = u.ranksPerNode;
  algo.append_attribute("nphases") = u.nphases;
  for (const PhaseDep& d : u.deps) {
    pugi::xml_node n = algo.append_child("phasedep");
    n.append_attribute("chan") = d.channel;
    n.append_attribute("phase") = d.phase;
    n.append_attribute("afterchan") = d.afterChannel;
    n.append_attribute("afterphase") = d.afterPhase;
  }
  const BufferCounts chunks = bufferCounts(u.collective, u.nranks, u.count);
  for (int r = 0; r < u.nranks; ++r) {
    pugi::xml_node g = algo.append_child("gpu");
    g.append_attribute("id") = r;
    g.append_attribute("i_chunks") = static_cast<long long>(chunks.input);
    g.append_attribute("o_chunks") = static_cast<long long>(chunks.output);
    g.append_attribute("s_chunks") = static_cast<long long>(u.scratchCount);
    // One threadblock per (channel, send peer, receive peer) as MSCCL requires; each op after the first
    // of its channel depends on the op before it, so the file keeps the plan's order exactly.
    struct Tb {
      int channel, send, recv;
      std::vector<std::pair<const Op*, std::pair<int, int>>> steps;  // op, (dep tb, dep step)
    };
    std::vector<Tb> tbs;
    std::map<std::tuple<int, int, int>, std::size_t> index;
    std::vector<std::pair<int, int>> placed;  // op i of the rank -> (tb, step)
    const auto& ops = u.ranks[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const int send = op.kind == OpKind::Send ? op.peer : -1;
      const int recv = op.kind == OpKind::Recv || op.kind == OpKind::RecvReduce ? op.peer : -1;
      const auto key = std::make_tuple(int{op.channel}, send, recv);
      auto [it, fresh] = index.try_emplace(key, tbs.size());
      if (fresh) tbs.push_back({op.channel, send, recv, {}});
      Tb& tb = tbs[it->second];
      std::pair<int, int> dep{-1, -1};
      if (i > 0 && ops[i - 1].channel == op.channel && placed[i - 1].first != static_cast<int>(it->second)) dep = placed[i - 1];
      placed.emplace_back(static_cast<int>(it->second), static_cast<int>(tb.steps.size()));
      tb.steps.push_back({&op, dep});
    }
    std::vector<std::vector<bool>> depended(tbs.size());
    for (std::size_t t = 0; t < tbs.size(); ++t) depended[t].assign(tbs[t].steps.size(), false);
    for (const auto& tb : tbs)
      for (const auto& [op, dep] : tb.steps)
        if (dep.first >= 0) depended[static_cast<std::size_t>(dep.first)][static_cast<std::size_t>(dep.second)] = true;
    for (std::size_t t = 0; t < tbs.size(); ++t) {
      pugi::xml_node x = g.append_child("tb");
      x.append_attribute("id") = static_cast<int>(t);
      x.append_attribute("send") = tbs[t].send;
      x.append_attribute("recv") = tbs[t].recv;
      x.append_attribute("chan") = tbs[t].channel;
      for (std::size_t s = 0; s < tbs[t].steps.size(); ++s) {
        const Op& op = *tbs[t].steps[s].first;
        const auto dep = tbs[t].steps[s].second;
        const char* type = op.kind == OpKind::Send ? "s" : op.kind == OpKind::Recv ? "r" : op.kind == OpKind::RecvReduce ? "rrc"
                         : op.kind == OpKind::Copy ? "cpy" : "ra";
        const Range src = op.reads() ? op.src : op.dst;  // MSCCL writes both; the unused one repeats the used one
        const Range dst = op.writes() ? op.dst : op.src;
        pugi::xml_node st = x.append_child("step");
        st.append_attribute("s") = static_cast<int>(s);
        st.append_attribute("type") = type;
        st.append_attribute("srcbuf") = files::bufferName(src.buf);
        st.append_attribute("srcoff") = static_cast<long long>(src.offset);
        st.append_attribute("dstbuf") = files::bufferName(dst.buf);
        st.append_attribute("dstoff") = static_cast<long long>(dst.offset);
        st.append_attribute("cnt") = static_cast<long long>(op.count());
        st.append_attribute("depid") = dep.first;
        st.append_attribute("deps") = dep.second;
        st.append_attribute("hasdep") = depended[t][s] ? 1 : 0;
        st.append_attribute("phase") = op.phase;
      }
    }
  }
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_default | pugi::format_no_declaration);
  return out.str();
}

}  // namespace cclab::plan
