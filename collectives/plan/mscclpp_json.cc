// MSCCL++'s JSON execution plans (MSCCLPPLang's output, read by MSCCL++'s executor) in
// (algorithm_file.h; the writer: mscclpp_json_export.cc; the mapping: docs/algorithms-as-files.md).
//
//   {"name", "collective", "protocol", "inplace",
//    "gpus": [{"id", "input_chunks", "output_chunks", "scratch_chunks",
//              "channels": [{"type", "connected_to": [peer...]}],          the GPU's channels, ids per type
//              "remote_buffers": [{"rank", "type", "access_channel_types"}],
//              "threadblocks": [{"id", "channels": [{"channel_type", "channel_ids"}],
//                                "remote_buffer_refs": [{"access_channel_type", "remote_buffer_ids"}],
//                                "ops": [{"name", "src_buff", "dst_buff", "channel_ids", "channel_type"}]}]}],
//    "cclab": {...}}                                                          cclab's extension (below)
//
// MSCCL++ is one-sided: a put writes a peer's buffer, a signal tells the peer, its wait sees it. A plan
// is two-sided, so: a put is a send; the puts a GPU made on a channel before its k-th signal are
// received, in order, where the peer waits for the k-th time on that channel. copy is a copy; reduce
// (dst = the sum of src_buff's chunks) is folded into the receives that filled its scratch chunks
// (file_program.h); nop, flush and signal alone move nothing. Other ops (get, packets, switch
// channels, ...) are refused with their name. Chunk indices and sizes are in chunks as in MSCCL XML.
//
#include <nlohmann/json.hpp>

#include <map>
#include <tuple>

#include "collectives/core/errors.h"
#include "collectives/core/strict_json.h"
#include "collectives/plan/file_program.h"

namespace cclab::plan {

namespace {

using nlohmann::json;

std::int64_t intOf(const json& j, const char* key, std::int64_t lo, std::int64_t hi, const std::string& where, std::int64_t dflt = -1,
                   bool required = true) {
  if (!j.is_object() || !j.contains(key)) {
    if (!required) return dflt;
    throw InvalidArgument(where + ": missing \"" + key + "\"");
  }
  const json& v = j.at(key);
  if (!v.is_number_integer()) throw InvalidArgument(where + ": \"" + key + "\" must be an integer");
  const auto x = v.get<std::int64_t>();
  if (x < lo || x > hi)
    throw InvalidArgument(where + ": \"" + key + "\" must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + std::to_string(x));
  return x;
}

std::string stringOf(const json& j, const char* key, const std::string& where, const std::string& dflt = "", bool required = true) {
  if (!j.is_object() || !j.contains(key)) {
    if (!required) return dflt;
    throw InvalidArgument(where + ": missing \"" + key + "\"");
  }
  if (!j.at(key).is_string()) throw InvalidArgument(where + ": \"" + key + "\" must be a string");
  return j.at(key).get<std::string>();
}

const json& arrayOf(const json& j, const char* key, const std::string& where) {
  static const json empty = json::array();
  if (!j.is_object() || !j.contains(key)) return empty;
  if (!j.at(key).is_array()) throw InvalidArgument(where + ": \"" + key + "\" must be an array");
  return j.at(key);
}

// One op of the file, its channels resolved to peers.
struct FileOp {
  std::string name;
  std::vector<Range> src;              // local chunks
  std::vector<std::pair<int, Range>> dst;  // put: (peer, chunks there); copy, reduce: (-1, local chunks)
  std::vector<std::tuple<int, std::string, int>> channels;  // (peer, type, ordinal among this GPU's channels of that type to that peer)
  int phase = -1;
  bool reduceAll = false;
  std::string where;
};

}  // namespace

AlgorithmFile importMscclppJson(std::string_view text) {
  json doc;
  try {
    doc = parseStrictJson(text);  // a key twice in one object refused, not the last one taken
  } catch (const json::exception& e) {
    throw InvalidArgument(std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) throw InvalidArgument("an MSCCL++ execution plan is a JSON object");
  files::Program p;
  p.name = stringOf(doc, "name", "plan", "unnamed", false);
  // MSCCL++'s own plans spell the key "colletive"; either spelling is read, and a plan with neither is
  // told the right one.
  if (!doc.contains("collective") && !doc.contains("colletive")) throw InvalidArgument("plan: missing \"collective\"");
  const std::string coll = doc.contains("collective") ? stringOf(doc, "collective", "plan") : stringOf(doc, "colletive", "plan");
  p.collective = files::collectiveNamed(coll, "plan");
  const json& gpus = arrayOf(doc, "gpus", "plan");
  if (gpus.empty() || gpus.size() > static_cast<std::size_t>(kMaxFileRanks))
    throw InvalidArgument("\"gpus\" must list 1.." + std::to_string(kMaxFileRanks) + " GPUs");
  p.nranks = static_cast<int>(gpus.size());
  const json cclab = doc.contains("cclab") && doc.at("cclab").is_object() ? doc.at("cclab") : json::object();
  p.root = static_cast<int>(intOf(cclab, "root", 0, p.nranks - 1, "cclab", 0, false));
  p.ranksPerNode = static_cast<int>(intOf(cclab, "ranks_per_node", 0, p.nranks, "cclab", 0, false));
  p.nphases = static_cast<int>(intOf(cclab, "nphases", 1, 1 << 30, "cclab", 1, false));
  const bool extended = doc.contains("cclab");
  p.inPlaceOnly = doc.contains("inplace") && doc.at("inplace").is_boolean() && doc.at("inplace").get<bool>();
  const bool blocked = p.collective == Collective::AllGather || p.collective == Collective::ReduceScatter;

  // Pass 1: every GPU's ops, channels resolved to (peer, type, ordinal).
  std::vector<std::vector<std::vector<FileOp>>> ops(static_cast<std::size_t>(p.nranks));  // [rank][tb][op]
  std::vector<bool> seen(static_cast<std::size_t>(p.nranks), false);
  std::int64_t steps = 0, declaredScratch = 0;
  bool firstGpu = true;
  for (const json& g : gpus) {
    const int r = static_cast<int>(intOf(g, "id", 0, p.nranks - 1, "gpu"));
    const std::string gw = "gpu " + std::to_string(r);
    if (seen[static_cast<std::size_t>(r)]) throw InvalidArgument(gw + " appears twice");
    seen[static_cast<std::size_t>(r)] = true;
    const std::int64_t in = intOf(g, "input_chunks", 0, kMaxFileChunks, gw);
    const std::int64_t out = intOf(g, "output_chunks", 0, kMaxFileChunks, gw);
    const std::int64_t scratch = intOf(g, "scratch_chunks", 0, kMaxFileChunks, gw, 0, false);
    declaredScratch = std::max(declaredScratch, scratch);
    const std::int64_t unit = p.collective == Collective::ReduceScatter ? out : in;
    if (firstGpu) p.unitCount = unit;
    firstGpu = false;
    if (unit != p.unitCount) throw InvalidArgument(gw + ": its chunk counts differ from the other GPUs'");
    if (blocked && std::max(in, out) != unit * p.nranks && !(p.inPlaceOnly && p.collective == Collective::AllGather && in == unit))
      throw InvalidArgument(gw + ": an allgather or reduce-scatter has " + std::to_string(p.nranks) + " times more chunks in one buffer");
    // The GPU's channels per type: id -> peer, and each one's ordinal among its channels to that peer.
    std::map<std::string, std::vector<std::pair<int, int>>> chans;
    for (const json& c : arrayOf(g, "channels", gw)) {
      const std::string type = stringOf(c, "type", gw + " channel");
      auto& list = chans[type];
      for (const json& peer : arrayOf(c, "connected_to", gw + " channel")) {
        if (!peer.is_number_integer() || peer.get<std::int64_t>() < 0 || peer.get<std::int64_t>() >= p.nranks || peer.get<std::int64_t>() == r)
          throw InvalidArgument(gw + ": a channel connects to " + peer.dump() + ", not another GPU");
        const int q = peer.get<int>();
        int ordinal = 0;
        for (const auto& [other, o] : list) ordinal += other == q ? 1 : 0;
        list.emplace_back(q, ordinal);
      }
    }
    std::vector<std::pair<int, Buf>> remotes;
    for (const json& b : arrayOf(g, "remote_buffers", gw))
      remotes.emplace_back(static_cast<int>(intOf(b, "rank", 0, p.nranks - 1, gw + " remote buffer")),
                           files::bufferNamed(stringOf(b, "type", gw + " remote buffer"), gw + " remote buffer"));
    auto& tbOps = ops[static_cast<std::size_t>(r)];
    for (const json& t : arrayOf(g, "threadblocks", gw)) {
      const std::string tw = gw + " threadblock " + std::to_string(intOf(t, "id", 0, kMaxFileSteps, gw + " threadblock"));
      // The threadblock's channel and remote-buffer indices map to the GPU's, per type.
      std::map<std::string, std::vector<std::int64_t>> tbChans, tbRemotes;
      for (const json& c : arrayOf(t, "channels", tw))
        for (const json& id : arrayOf(c, "channel_ids", tw)) tbChans[stringOf(c, "channel_type", tw)].push_back(id.is_number_integer() ? id.get<std::int64_t>() : -1);
      for (const json& c : arrayOf(t, "remote_buffer_refs", tw))
        for (const json& id : arrayOf(c, "remote_buffer_ids", tw)) tbRemotes[stringOf(c, "access_channel_type", tw)].push_back(id.is_number_integer() ? id.get<std::int64_t>() : -1);
      auto& list = tbOps.emplace_back();
      for (const json& o : arrayOf(t, "ops", tw)) {
        if (++steps > kMaxFileSteps) throw InvalidArgument("more than " + std::to_string(kMaxFileSteps) + " ops");
        FileOp op;
        op.where = tw + " op " + std::to_string(list.size());
        op.name = stringOf(o, "name", op.where);
        op.phase = static_cast<int>(intOf(o, "phase", 0, 1 << 30, op.where, -1, false));
        op.reduceAll = o.contains("cclab_reduce_all") && o.at("cclab_reduce_all").is_boolean() && o.at("cclab_reduce_all").get<bool>();
        const std::string type = stringOf(o, "channel_type", op.where, "memory", false);
        auto chunk = [&](const json& b, Buf buf) {
          return Range{buf, intOf(b, "index", 0, kMaxFileChunks, op.where), intOf(b, "size", 0, kMaxFileChunks, op.where)};
        };
        for (const json& b : arrayOf(o, "src_buff", op.where)) op.src.push_back(chunk(b, files::bufferNamed(stringOf(b, "type", op.where), op.where)));
        for (const json& b : arrayOf(o, "dst_buff", op.where)) {
          if (b.contains("buffer_id")) {
            const std::int64_t given = intOf(b, "buffer_id", 0, kMaxFileSteps, op.where);
            std::int64_t id = given;
            const auto& refs = tbRemotes[type];
            if (!refs.empty()) {
              // An index into the threadblock's remote_buffer_refs, which name the GPU's remote buffers.
              if (given >= static_cast<std::int64_t>(refs.size()))
                throw InvalidArgument(op.where + ": buffer_id " + std::to_string(given) + " is not an index of its threadblock's " +
                                      std::to_string(refs.size()) + " " + type + " remote_buffer_refs");
              id = refs[static_cast<std::size_t>(given)];
            }
            if (id < 0 || id >= static_cast<std::int64_t>(remotes.size()))
              throw InvalidArgument(op.where + ": remote buffer " + std::to_string(id) + (id == given ? "" : " (buffer_id " + std::to_string(given) + ")") +
                                    " is not one of its GPU's " + std::to_string(remotes.size()) + " remote_buffers");
            const auto [peer, buf] = remotes[static_cast<std::size_t>(id)];
            op.dst.emplace_back(peer, chunk(b, buf));
          } else {
            op.dst.emplace_back(-1, chunk(b, files::bufferNamed(stringOf(b, "type", op.where), op.where)));
          }
        }
        for (const json& c : arrayOf(o, "channel_ids", op.where)) {
          std::int64_t id = c.is_number_integer() ? c.get<std::int64_t>() : -1;
          const auto& local = tbChans[type];
          if (!local.empty()) id = id >= 0 && id < static_cast<std::int64_t>(local.size()) ? local[static_cast<std::size_t>(id)] : -1;
          const auto& gpuChans = chans[type];
          if (id < 0 || id >= static_cast<std::int64_t>(gpuChans.size()))
            throw InvalidArgument(op.where + ": channel " + c.dump() + " is not one of its GPU's " + type + " channels");
          op.channels.emplace_back(gpuChans[static_cast<std::size_t>(id)].first, type, gpuChans[static_cast<std::size_t>(id)].second);
        }
        list.push_back(std::move(op));
      }
    }
  }
  for (int r = 0; r < p.nranks; ++r)
    if (!seen[static_cast<std::size_t>(r)]) throw InvalidArgument("no gpu with id " + std::to_string(r));
  p.scratchChunks = declaredScratch;
  const BufferCounts chunks = bufferCounts(p.collective, p.nranks, p.unitCount);
  const std::int64_t sizes[3] = {p.inPlaceOnly && !blocked ? chunks.output : chunks.input, chunks.output, declaredScratch};
  auto inside = [&](const Range& rg, const std::string& where) {
    if (rg.end() > sizes[static_cast<int>(rg.buf)])
      throw InvalidArgument(where + ": chunks [" + std::to_string(rg.offset) + ", +" + std::to_string(rg.count) + ") lie outside its " +
                            std::to_string(sizes[static_cast<int>(rg.buf)]) + "-chunk buffer");
    return rg;
  };

  // Pass 2: what each signal makes visible: the puts on its channel since the previous one.
  using Conn = std::tuple<int, int, std::string, int>;  // (from, to, type, ordinal)
  std::map<Conn, std::vector<std::vector<std::pair<Range, int>>>> batches;  // k-th signal -> (chunks at the peer, phase)
  std::map<Conn, std::vector<std::pair<Range, int>>> open;
  for (int r = 0; r < p.nranks; ++r)
    for (const auto& tb : ops[static_cast<std::size_t>(r)])
      for (const FileOp& op : tb) {
        if (op.name == "put") {
          if (op.src.size() != 1 || op.dst.size() != 1 || op.channels.size() != 1 || op.dst[0].first < 0)
            throw InvalidArgument(op.where + ": a put moves one src_buff to one remote dst_buff over one channel");
          const auto& [peer, type, ordinal] = op.channels[0];
          if (peer != op.dst[0].first) throw InvalidArgument(op.where + ": a put's channel and remote buffer are on different GPUs");
          if (op.src[0].count != op.dst[0].second.count) throw InvalidArgument(op.where + ": a put's src and dst sizes differ");
          open[{r, peer, type, ordinal}].emplace_back(op.dst[0].second, op.phase);
        } else if (op.name == "signal" || op.name == "relaxed_signal") {
          for (const auto& [peer, type, ordinal] : op.channels) {
            auto& o = open[{r, peer, type, ordinal}];
            batches[{r, peer, type, ordinal}].push_back(std::move(o));
            o.clear();
          }
        }
      }
  for (const auto& [conn, puts] : open)
    if (!puts.empty()) throw InvalidArgument("gpu " + std::to_string(std::get<0>(conn)) + " puts to gpu " + std::to_string(std::get<1>(conn)) +
                                             " without a signal after it; nothing would make it visible");

  // Pass 3: the steps.
  std::map<Conn, std::size_t> waited;
  p.gpus.resize(static_cast<std::size_t>(p.nranks));
  for (int r = 0; r < p.nranks; ++r)
    for (const auto& tbOps : ops[static_cast<std::size_t>(r)]) {
      files::Threadblock& tb = p.gpus[static_cast<std::size_t>(r)].emplace_back();
      tb.channel = extended ? static_cast<int>(p.gpus[static_cast<std::size_t>(r)].size()) - 1 : 0;
      if (tb.channel >= kMaxChannels) throw InvalidArgument("more than " + std::to_string(kMaxChannels) + " threadblocks on gpu " + std::to_string(r));
      auto add = [&](files::Step s, const FileOp& op) {
        s.where = op.where;
        s.phase = op.phase;
        tb.steps.push_back(std::move(s));
      };
      for (const FileOp& op : tbOps) {
        files::Step s;
        if (op.name == "put") {
          s.ops.push_back({OpKind::Send, op.dst[0].first, 0, inside(op.src[0], op.where), {}});
          add(std::move(s), op);
        } else if (op.name == "wait" || op.name == "relaxed_wait") {
          for (const auto& [peer, type, ordinal] : op.channels) {
            const Conn c{peer, r, type, ordinal};
            const std::size_t k = waited[c]++;
            const auto it = batches.find(c);
            if (it == batches.end() || k >= it->second.size())
              throw InvalidArgument(op.where + ": waits for signal " + std::to_string(k + 1) + " from gpu " + std::to_string(peer) + ", which never comes");
            for (const auto& [chunk, phase] : it->second[k]) {
              files::Step recv;
              recv.ops.push_back({OpKind::Recv, peer, 0, {}, inside(chunk, op.where)});
              add(std::move(recv), op);
            }
          }
        } else if (op.name == "copy") {
          if (op.src.size() != 1 || op.dst.size() != 1 || op.dst[0].first >= 0 || op.src[0].count != op.dst[0].second.count)
            throw InvalidArgument(op.where + ": a copy moves one local src_buff to one local dst_buff of the same size");
          s.ops.push_back({OpKind::Copy, -1, 0, inside(op.src[0], op.where), inside(op.dst[0].second, op.where)});
          add(std::move(s), op);
        } else if (op.name == "reduce") {
          if (op.src.size() < 2 || op.dst.size() != 1 || op.dst[0].first >= 0)
            throw InvalidArgument(op.where + ": a reduce combines two or more local src_buff into one local dst_buff");
          const Range dst = inside(op.dst[0].second, op.where);
          for (const Range& x : op.src)
            if (inside(x, op.where).count != dst.count) throw InvalidArgument(op.where + ": a reduce's chunks differ in size");
          if (op.reduceAll) {
            s.reduceAll = true;
            s.reduceOperand = op.src[0];
            s.reduceDst = dst;
            s.reduceSlots.assign(op.src.begin() + 1, op.src.end());
            add(std::move(s), op);
          } else {  // dst = src0 op src1 op ...: src1.. were received; one local reduce each
            Range operand = op.src[0];
            for (std::size_t i = 1; i < op.src.size(); ++i) {
              files::Step x;
              x.localReduce = true;
              x.reduceSrc = op.src[i];
              x.reduceDst = dst;
              x.reduceOperand = operand;
              add(std::move(x), op);
              operand = dst;
            }
          }
        } else if (op.name == "signal" || op.name == "relaxed_signal" || op.name == "nop" || op.name == "flush" || op.name == "barrier") {
        } else {
          throw InvalidArgument(op.where + ": op '" + op.name + "' has no cclab form (cclab reads put, signal, wait, copy, reduce, nop, flush)");
        }
      }
    }
  if (cclab.contains("scratch_chunks")) p.scratchChunks = intOf(cclab, "scratch_chunks", 0, declaredScratch, "cclab");
  for (const json& d : arrayOf(cclab, "deps", "cclab"))
    p.deps.push_back({static_cast<int>(intOf(d, "chan", 0, kMaxChannels - 1, "cclab dep")), static_cast<int>(intOf(d, "phase", 0, 1 << 30, "cclab dep")),
                      static_cast<int>(intOf(d, "afterchan", 0, kMaxChannels - 1, "cclab dep")),
                      static_cast<int>(intOf(d, "afterphase", 0, 1 << 30, "cclab dep"))});
  return files::toAlgorithmFile(std::move(p));
}

}  // namespace cclab::plan
