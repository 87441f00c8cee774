// MSCCL++'s JSON execution plans out (algorithm_file.h; the reader and the format: mscclpp_json.cc; the
// mapping: docs/algorithms-as-files.md). One threadblock per plan channel and one memory channel per
// (channel, peer): a send is a put into where the peer receives it and a signal; a receive is a wait; a
// receive-and-reduce is a put into a scratch chunk range of the receiver (after the plan's own scratch),
// a wait and a reduce; a reduceAll the same from every peer, marked "cclab_reduce_all". "cclab" holds
// what MSCCL++ has no field for, and every op its "phase".
#include <nlohmann/json.hpp>

#include <limits>
#include <map>
#include <tuple>

#include "collectives/core/errors.h"
#include "collectives/plan/file_program.h"

namespace cclab::plan {

using nlohmann::json;

std::string exportMscclppJson(const AlgorithmFile& file) {
  const Plan& u = file.unit;
  const int P = u.nranks;
  // Where every message lands at its receiver: a Recv's own range, else a fresh scratch chunk range.
  std::vector<std::int64_t> scratchEnd(static_cast<std::size_t>(P), u.scratchCount);
  std::map<std::tuple<int, int, int>, std::vector<Range>> landing;  // (channel, from, to) -> ranges, in order
  std::vector<std::vector<std::vector<Range>>> slots(static_cast<std::size_t>(P));  // [rank][op] -> slots (reduceAll: rank order)
  for (int r = 0; r < P; ++r) {
    const auto& list = u.ranks[static_cast<std::size_t>(r)];
    slots[static_cast<std::size_t>(r)].resize(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Op& op = list[i];
      auto fresh = [&] {
        const Range s{Buf::Scratch, scratchEnd[static_cast<std::size_t>(r)], op.count()};
        scratchEnd[static_cast<std::size_t>(r)] += op.count();
        return s;
      };
      if (op.kind == OpKind::Recv) landing[{op.channel, op.peer, r}].push_back(op.dst);
      if (op.kind == OpKind::RecvReduce) {
        slots[static_cast<std::size_t>(r)][i].push_back(fresh());
        landing[{op.channel, op.peer, r}].push_back(slots[static_cast<std::size_t>(r)][i].back());
      }
      if (op.kind == OpKind::ReduceAll)
        for (int q = 0; q < P; ++q)
          if (q != r) {
            slots[static_cast<std::size_t>(r)][i].push_back(fresh());
            landing[{op.channel, q, r}].push_back(slots[static_cast<std::size_t>(r)][i].back());
          }
    }
  }
  auto chunk = [](const Range& r) { return json{{"type", files::bufferName(r.buf)}, {"index", r.offset}, {"size", r.count}}; };
  json gpus = json::array();
  std::map<std::tuple<int, int, int>, std::size_t> sent;
  for (int r = 0; r < P; ++r) {
    const auto& list = u.ranks[static_cast<std::size_t>(r)];
    // One memory channel per (plan channel, peer) this rank talks to, and one remote buffer per (peer, buffer).
    std::map<std::pair<int, int>, int> chanId;
    std::vector<int> connected;
    std::map<std::pair<int, Buf>, int> remoteId;
    json remotes = json::array();
    auto channelTo = [&](int channel, int peer) {
      auto [it, fresh] = chanId.try_emplace({channel, peer}, static_cast<int>(connected.size()));
      if (fresh) connected.push_back(peer);
      return it->second;
    };
    for (const Op& op : list) {
      if (op.peer >= 0) channelTo(op.channel, op.peer);
      if (op.kind == OpKind::ReduceAll)
        for (int q = 0; q < P; ++q)
          if (q != r) channelTo(op.channel, q);
    }
    // A channel exists on both ends: add the peers that talk to this rank on a channel it does not use.
    for (int q = 0; q < P; ++q)
      for (const Op& op : u.ranks[static_cast<std::size_t>(q)])
        if (op.peer == r || (op.kind == OpKind::ReduceAll && q != r)) channelTo(op.channel, q);
    // Ids in (channel, peer) order, so both ends count their channels to each other alike.
    {
      std::vector<std::pair<int, int>> keys;
      for (const auto& [k, v] : chanId) keys.push_back(k);
      connected.clear();
      for (std::size_t i = 0; i < keys.size(); ++i) {
        chanId[keys[i]] = static_cast<int>(i);
        connected.push_back(keys[i].second);
      }
    }
    std::vector<json> tbOps(static_cast<std::size_t>(u.nchannels), json::array());
    std::vector<std::vector<int>> tbChans(static_cast<std::size_t>(u.nchannels));
    std::vector<std::vector<int>> tbRemotes(static_cast<std::size_t>(u.nchannels));
    auto local = [](std::vector<int>& ids, int id) {
      for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] == id) return static_cast<int>(i);
      ids.push_back(id);
      return static_cast<int>(ids.size()) - 1;
    };
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Op& op = list[i];
      const auto c = static_cast<std::size_t>(op.channel);
      json& out = tbOps[c];
      auto waitOn = [&](int peer) {
        out.push_back({{"name", "wait"}, {"channel_ids", {local(tbChans[c], chanId.at({op.channel, peer}))}}, {"channel_type", "memory"}, {"phase", op.phase}});
      };
      switch (op.kind) {
        case OpKind::Send: {
          const auto key = std::make_tuple(int{op.channel}, r, op.peer);
          const auto& lands = landing[key];
          const std::size_t k = sent[key]++;
          if (k >= lands.size()) throw InvalidArgument("plan: rank " + std::to_string(r) + " sends to " + std::to_string(op.peer) + " more than it receives");
          const Range at = lands[k];
          auto [it, fresh] = remoteId.try_emplace({op.peer, at.buf}, static_cast<int>(remotes.size()));
          if (fresh) remotes.push_back({{"rank", op.peer}, {"type", files::bufferName(at.buf)}, {"access_channel_types", {"memory"}}});
          const int ch = local(tbChans[c], chanId.at({op.channel, op.peer}));
          out.push_back({{"name", "put"}, {"src_buff", {chunk(op.src)}},
                         {"dst_buff", {{{"buffer_id", local(tbRemotes[c], it->second)}, {"index", at.offset}, {"size", at.count}}}},
                         {"channel_ids", {ch}}, {"channel_type", "memory"}, {"phase", op.phase}});
          out.push_back({{"name", "signal"}, {"channel_ids", {ch}}, {"channel_type", "memory"}, {"phase", op.phase}});
          break;
        }
        case OpKind::Recv: waitOn(op.peer); break;
        case OpKind::RecvReduce:
          waitOn(op.peer);
          out.push_back({{"name", "reduce"}, {"src_buff", {chunk(op.src), chunk(slots[static_cast<std::size_t>(r)][i][0])}},
                         {"dst_buff", {chunk(op.dst)}}, {"phase", op.phase}});
          break;
        case OpKind::ReduceAll: {
          json srcs = json::array({chunk(op.src)});
          for (int q = 0, k = 0; q < P; ++q)
            if (q != r) {
              waitOn(q);
              srcs.push_back(chunk(slots[static_cast<std::size_t>(r)][i][static_cast<std::size_t>(k++)]));
            }
          out.push_back({{"name", "reduce"}, {"src_buff", srcs}, {"dst_buff", {chunk(op.dst)}}, {"cclab_reduce_all", true}, {"phase", op.phase}});
          break;
        }
        case OpKind::Copy:
          out.push_back({{"name", "copy"}, {"src_buff", {chunk(op.src)}}, {"dst_buff", {chunk(op.dst)}}, {"phase", op.phase}});
          break;
      }
    }
    json tbs = json::array();
    for (int c = 0; c < u.nchannels; ++c)
      tbs.push_back({{"id", c},
                     {"ops", tbOps[static_cast<std::size_t>(c)]},
                     {"channels", {{{"channel_type", "memory"}, {"channel_ids", tbChans[static_cast<std::size_t>(c)]}}}},
                     {"remote_buffer_refs", {{{"access_channel_type", "memory"}, {"remote_buffer_ids", tbRemotes[static_cast<std::size_t>(c)]}}}}});
    const BufferCounts n = bufferCounts(u.collective, P, u.count);
    gpus.push_back({{"id", r},
                    {"input_chunks", n.input},
                    {"output_chunks", n.output},
                    {"scratch_chunks", scratchEnd[static_cast<std::size_t>(r)]},
                    {"threadblocks", tbs},
                    {"channels", {{{"type", "memory"}, {"connected_to", connected}}}},
                    {"remote_buffers", remotes}});
  }
  std::int64_t maxScratch = u.scratchCount;
  for (std::int64_t s : scratchEnd) maxScratch = std::max(maxScratch, s);
  for (auto& g : gpus) g["scratch_chunks"] = maxScratch;  // one size for every GPU, as the plan has
  json deps = json::array();
  for (const PhaseDep& d : u.deps) deps.push_back({{"chan", d.channel}, {"phase", d.phase}, {"afterchan", d.afterChannel}, {"afterphase", d.afterPhase}});
  const char* coll = u.collective == Collective::AllReduce ? "allreduce" : u.collective == Collective::AllGather ? "allgather"
                   : u.collective == Collective::ReduceScatter ? "reducescatter" : u.collective == Collective::Broadcast ? "broadcast" : "reduce";
  json doc = {{"name", file.name},
              {"collective", coll},
              {"protocol", "Simple"},
              {"inplace", false},
              {"gpus", gpus},
              {"num_threads_per_block", 1024},
              {"use_double_scratch_buffer", false},
              {"min_message_size", 0},
              {"max_message_size", std::numeric_limits<std::uint64_t>::max()},
              {"cclab", {{"root", u.root}, {"ranks_per_node", u.ranksPerNode}, {"nphases", u.nphases}, {"scratch_chunks", u.scratchCount}, {"deps", deps}}}};
  return doc.dump(1) + "\n";
}

}  // namespace cclab::plan
