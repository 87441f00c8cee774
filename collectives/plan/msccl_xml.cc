// MSCCL's XML algorithm format (msccl-tools / MSCCLang output, read by MSCCL's runtime) in
// (algorithm_file.h; the writer: msccl_xml_export.cc; the mapping: docs/algorithms-as-files.md).
//
//   <algo name coll ngpus nchunksperloop nchannels proto inplace outofplace [root ranks_per_node nphases]>
//     [<phasedep chan phase afterchan afterphase/>...]          cclab's extension: Plan::deps
//     <gpu id i_chunks o_chunks s_chunks>
//       <tb id send recv chan>
//         <step s type srcbuf srcoff dstbuf dstoff cnt depid deps hasdep [phase]/>
//
// Step types read: s (send src), r (receive into dst), rrc (dst = src op received), rcs (receive into
// dst and send it on), rrcs (rrc, then send dst on), cpy (dst = src), nop (a dependency only), and
// cclab's ra (reduceAll: dst = every rank's message reduced in rank order), and re (dst = dst op src,
// local) where it reduces a message received into scratch (file_program.h folds the two into one
// receive-and-reduce). Refused with their reason: any other re, and rrs (a reduction forwarded without
// being stored): a plan has no op for either. Offsets and counts are in chunks: a rank's buffer of the collective's count has
// nchunksperloop chunks (allgather and reduce-scatter: nchunksperloop / ngpus per block).
#include <pugixml.hpp>

#include <map>
#include <string>

#include "collectives/core/errors.h"
#include "collectives/plan/file_program.h"

namespace cclab::plan {

namespace {

using files::parseInteger;

std::string attr(const pugi::xml_node& n, const char* key, const std::string& where) {
  const pugi::xml_attribute a = n.attribute(key);
  if (!a) throw InvalidArgument(where + ": missing attribute '" + key + "'");
  return a.value();
}

std::int64_t intAttr(const pugi::xml_node& n, const char* key, std::int64_t lo, std::int64_t hi, const std::string& where) {
  return parseInteger(attr(n, key, where), lo, hi, where + " " + key);
}

std::int64_t intAttrOr(const pugi::xml_node& n, const char* key, std::int64_t dflt, std::int64_t lo, std::int64_t hi,
                       const std::string& where) {
  return n.attribute(key) ? intAttr(n, key, lo, hi, where) : dflt;
}

}  // namespace

AlgorithmFile importMscclXml(std::string_view text) {
  pugi::xml_document doc;
  const pugi::xml_parse_result ok = doc.load_buffer(text.data(), text.size());
  if (!ok) throw InvalidArgument(std::string("not well-formed XML: ") + ok.description() + " at byte " + std::to_string(ok.offset));
  const pugi::xml_node algo = doc.child("algo");
  if (!algo) throw InvalidArgument("no <algo> element (an MSCCL algorithm file has one at the top)");
  // pugixml reads a fragment of several top-level elements; a file is one algorithm, never the first of many.
  int elements = 0;
  for (const pugi::xml_node& n : doc.children()) elements += n.type() == pugi::node_element ? 1 : 0;
  if (elements > 1) throw InvalidArgument("more than one top-level element: an MSCCL algorithm file holds one <algo>");
  files::Program p;
  p.name = algo.attribute("name").as_string("unnamed");
  p.collective = files::collectiveNamed(attr(algo, "coll", "<algo>"), "<algo> coll");
  p.nranks = static_cast<int>(intAttr(algo, "ngpus", 1, kMaxFileRanks, "<algo>"));
  const std::int64_t perLoop = intAttr(algo, "nchunksperloop", 1, kMaxFileChunks, "<algo>");
  const bool blocked = p.collective == Collective::AllGather || p.collective == Collective::ReduceScatter;
  if (blocked && perLoop % p.nranks != 0)
    throw InvalidArgument("<algo> nchunksperloop " + std::to_string(perLoop) + " is not a multiple of ngpus " + std::to_string(p.nranks));
  p.unitCount = blocked ? perLoop / p.nranks : perLoop;
  const std::int64_t nchannels = intAttrOr(algo, "nchannels", 1, 1, kMaxChannels, "<algo>");
  p.root = static_cast<int>(intAttrOr(algo, "root", 0, 0, p.nranks - 1, "<algo>"));
  p.ranksPerNode = static_cast<int>(intAttrOr(algo, "ranks_per_node", 0, 0, p.nranks, "<algo>"));
  p.nphases = static_cast<int>(intAttrOr(algo, "nphases", 1, 1, 1 << 30, "<algo>"));
  const bool outOfPlace = intAttrOr(algo, "outofplace", 1, 0, 1, "<algo>") == 1;
  p.inPlaceOnly = !outOfPlace;
  if (p.inPlaceOnly && blocked)
    throw InvalidArgument("<algo> is in place only (outofplace=\"0\"); cclab maps that for allreduce, broadcast and reduce only");
  for (const pugi::xml_node d : algo.children("phasedep")) {
    const std::string w = "<phasedep>";
    p.deps.push_back({static_cast<int>(intAttr(d, "chan", 0, nchannels - 1, w)), static_cast<int>(intAttr(d, "phase", 0, 1 << 30, w)),
                      static_cast<int>(intAttr(d, "afterchan", 0, nchannels - 1, w)),
                      static_cast<int>(intAttr(d, "afterphase", 0, 1 << 30, w))});
  }
  p.gpus.resize(static_cast<std::size_t>(p.nranks));
  std::vector<bool> seen(static_cast<std::size_t>(p.nranks), false);
  const BufferCounts chunks = bufferCounts(p.collective, p.nranks, p.unitCount);
  std::int64_t steps = 0;
  for (const pugi::xml_node g : algo.children("gpu")) {
    const int r = static_cast<int>(intAttr(g, "id", 0, p.nranks - 1, "<gpu>"));
    const std::string gw = "gpu " + std::to_string(r);
    if (seen[static_cast<std::size_t>(r)]) throw InvalidArgument(gw + " appears twice");
    seen[static_cast<std::size_t>(r)] = true;
    p.scratchChunks = std::max(p.scratchChunks, intAttrOr(g, "s_chunks", 0, 0, kMaxFileChunks, gw));
    const std::int64_t sizes[3] = {p.inPlaceOnly ? chunks.output : chunks.input, chunks.output, p.scratchChunks};
    auto& tbs = p.gpus[static_cast<std::size_t>(r)];
    std::map<std::int64_t, std::size_t> tbIndex;  // file tb id -> position
    for (const pugi::xml_node t : g.children("tb")) {
      const std::int64_t id = intAttr(t, "id", 0, kMaxFileSteps, gw + " <tb>");
      if (tbIndex.count(id)) throw InvalidArgument(gw + " tb " + std::to_string(id) + " appears twice");
      tbIndex[id] = tbs.size();
      tbs.emplace_back();
    }
    std::size_t k = 0;
    for (const pugi::xml_node t : g.children("tb")) {
      files::Threadblock& tb = tbs[k++];
      const std::string tw = gw + " tb " + attr(t, "id", gw);
      const int sendPeer = static_cast<int>(intAttrOr(t, "send", -1, -1, p.nranks - 1, tw));
      const int recvPeer = static_cast<int>(intAttrOr(t, "recv", -1, -1, p.nranks - 1, tw));
      if (sendPeer == r || recvPeer == r) throw InvalidArgument(tw + " sends to or receives from its own gpu");
      tb.channel = static_cast<int>(intAttrOr(t, "chan", 0, 0, nchannels - 1, tw));
      std::int64_t expected = 0;
      for (const pugi::xml_node s : t.children("step")) {
        if (++steps > kMaxFileSteps) throw InvalidArgument("more than " + std::to_string(kMaxFileSteps) + " steps");
        files::Step step;
        step.where = tw + " step " + std::to_string(expected);
        const std::int64_t index = intAttr(s, "s", 0, kMaxFileSteps, step.where);
        if (index != expected) throw InvalidArgument(step.where + ": steps must be numbered 0, 1, ... in order, got s=" + std::to_string(index));
        ++expected;
        const std::string type = attr(s, "type", step.where);
        const std::int64_t cnt = intAttrOr(s, "cnt", type == "nop" ? 0 : -1, 0, kMaxFileChunks, step.where);
        if (cnt < 0) throw InvalidArgument(step.where + ": missing attribute 'cnt'");
        auto range = [&](const char* buf, const char* off) {
          const Range rg{files::bufferNamed(attr(s, buf, step.where), step.where), intAttr(s, off, 0, kMaxFileChunks, step.where), cnt};
          const std::int64_t size = sizes[static_cast<int>(rg.buf)];
          if (rg.end() > size)
            throw InvalidArgument(step.where + ": " + buf + " range [" + std::to_string(rg.offset) + ", +" + std::to_string(cnt) +
                                  ") lies outside its buffer of " + std::to_string(size) + " chunks");
          return rg;
        };
        auto needPeer = [&](int peer, const char* what) {
          if (peer < 0) throw InvalidArgument(step.where + ": type " + type + " " + what + " but its tb has no " + what + " peer");
          return peer;
        };
        const int depTb = static_cast<int>(intAttrOr(s, "depid", -1, -1, kMaxFileSteps, step.where));
        const int depStep = static_cast<int>(intAttrOr(s, "deps", -1, -1, kMaxFileSteps, step.where));
        if (depTb >= 0) {
          const auto it = tbIndex.find(depTb);
          if (it == tbIndex.end() || depStep < 0)
            throw InvalidArgument(step.where + ": depends on tb " + std::to_string(depTb) + " step " + std::to_string(depStep) +
                                  ", which does not exist");
          step.depTb = static_cast<int>(it->second);
          step.depStep = depStep;
          const pugi::xml_node dtb = [&] {
            for (const pugi::xml_node x : g.children("tb"))
              if (x.attribute("id").as_llong(-1) == depTb) return x;
            return pugi::xml_node();
          }();
          std::int64_t n = 0;
          for ([[maybe_unused]] const pugi::xml_node x : dtb.children("step")) ++n;
          if (depStep >= n)
            throw InvalidArgument(step.where + ": depends on tb " + std::to_string(depTb) + " step " + std::to_string(depStep) +
                                  ", which does not exist");
        }
        step.phase = static_cast<int>(intAttrOr(s, "phase", -1, 0, 1 << 30, step.where));
        if (type == "s") {
          step.ops.push_back({OpKind::Send, needPeer(sendPeer, "sends"), 0, range("srcbuf", "srcoff"), {}});
        } else if (type == "r") {
          step.ops.push_back({OpKind::Recv, needPeer(recvPeer, "receives"), 0, {}, range("dstbuf", "dstoff")});
        } else if (type == "rrc") {
          step.ops.push_back({OpKind::RecvReduce, needPeer(recvPeer, "receives"), 0, range("srcbuf", "srcoff"), range("dstbuf", "dstoff")});
        } else if (type == "rcs") {
          const Range dst = range("dstbuf", "dstoff");
          step.ops.push_back({OpKind::Recv, needPeer(recvPeer, "receives"), 0, {}, dst});
          step.ops.push_back({OpKind::Send, needPeer(sendPeer, "sends"), 0, dst, {}});
        } else if (type == "rrcs") {
          const Range dst = range("dstbuf", "dstoff");
          step.ops.push_back({OpKind::RecvReduce, needPeer(recvPeer, "receives"), 0, range("srcbuf", "srcoff"), dst});
          step.ops.push_back({OpKind::Send, needPeer(sendPeer, "sends"), 0, dst, {}});
        } else if (type == "cpy") {
          step.ops.push_back({OpKind::Copy, -1, 0, range("srcbuf", "srcoff"), range("dstbuf", "dstoff")});
        } else if (type == "ra") {
          step.ops.push_back({OpKind::ReduceAll, -1, 0, range("srcbuf", "srcoff"), range("dstbuf", "dstoff")});
        } else if (type == "nop") {
        } else if (type == "re") {  // dst = dst op src, folded into the receive that filled src (file_program.h)
          step.localReduce = true;
          step.reduceSrc = range("srcbuf", "srcoff");
          step.reduceDst = range("dstbuf", "dstoff");
          step.reduceOperand = step.reduceDst;
        } else if (type == "rrs") {
          throw InvalidArgument(step.where + ": type rrs (a reduction sent on without being stored) has no cclab op; use rrcs");
        } else {
          throw InvalidArgument(step.where + ": unknown step type '" + type + "'");
        }
        tb.steps.push_back(std::move(step));
      }
    }
  }
  for (int r = 0; r < p.nranks; ++r)
    if (!seen[static_cast<std::size_t>(r)]) throw InvalidArgument("no <gpu id=\"" + std::to_string(r) + "\">");
  if (p.inPlaceOnly)  // the data lives in the input buffer, which is also the output
    for (auto& tbs : p.gpus)
      for (auto& tb : tbs)
        for (auto& s : tb.steps)
          for (const Op& op : s.ops)
            if ((op.reads() && op.src.buf == Buf::Output) || (op.writes() && op.dst.buf == Buf::Output))
              throw InvalidArgument(s.where + ": an in-place-only file (outofplace=\"0\") names the output buffer");
  return files::toAlgorithmFile(std::move(p));
}

}  // namespace cclab::plan
