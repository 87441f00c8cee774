// The op rules every executor, the interpreter and the CUDA lowering dispatch through
// (collectives/plan/op_dispatch.h), seen by a consumer that records each call: which receives a slice
// asks for, in which order the moves come, when ReduceAll folds aside, and that nothing moves while
// a write, send or receive must wait.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/plan/op_dispatch.h"

namespace cclab::plan {
namespace {

// Operands are small numbers, logged by name: "in"/"out" this rank's input/output, "acc" the
// accumulator, "vQ" the slice received from rank Q (0: none).
enum : int { kNone = 0, kIn = 100, kOut, kAcc, kFrom = 10 };
std::string name(int x) {
  std::ostringstream n;
  if (x >= kIn) n << (x == kIn ? "in" : x == kOut ? "out" : "acc");
  else if (x >= kFrom) n << 'v' << x - kFrom;
  return n.str();
}

struct Recorder {
  using Ptr = int;
  using In = int;
  std::vector<std::string> log;
  bool canWrite = true, canSend = true, overlapping = false;
  std::vector<int> missing;  // peers whose slice is not there
  Ptr at(const Range& r, std::int64_t) const { return r.buf == Buf::Input ? kIn : kOut; }
  bool writable(Ptr) const { return canWrite; }
  bool send(const Op&, In src) {
    log.push_back("send " + name(src));
    return canSend;
  }
  bool receive(const Op&, int peer, Ptr into, int index, In& v) {
    std::ostringstream line;
    line << "ask " << peer << "#" << index << (into == kNone ? "" : " into ") << name(into);
    log.push_back(line.str());
    v = kFrom + peer;
    return std::find(missing.begin(), missing.end(), peer) == missing.end();
  }
  void release(const Op&, int peer) { log.push_back("release " + std::to_string(peer)); }
  void copy(Ptr d, In s) { log.push_back(name(d) + "=" + name(s)); }
  void reduce(Ptr d, In a, In b) { log.push_back(name(d) + "=" + name(a) + "+" + name(b)); }
  [[nodiscard]] bool overlaps(Ptr, In) const { return overlapping; }
  static bool same(Ptr d, In s) { return d == s; }
  static Ptr accumulator(Ptr, In) { return kAcc; }
};

Op reduceAll(Buf src) { return Op{OpKind::ReduceAll, -1, 0, {src, 0, 4}, {Buf::Output, 0, 4}}; }

std::vector<std::string> run(Recorder& r, const Op& op, int rank, int nranks, bool expect = true) {
  std::vector<int> values;
  EXPECT_EQ(dispatchSlice(r, op, rank, nranks, 0, values), expect);
  return r.log;
}

TEST(OpDispatch, ReduceAllAsksEveryPeerThenFoldsInRankOrderThenReleases) {
  Recorder r;
  const std::vector<std::string> want = {"ask 0#0",    "ask 1#1",   "ask 3#2",   "out=v0+v1", "out=out+in",
                                         "out=out+v3", "release 0", "release 1", "release 3"};
  EXPECT_EQ(run(r, reduceAll(Buf::Input), 2, 4), want);
}

TEST(OpDispatch, ReduceAllFoldsAsideOnlyWhenItWouldOverwriteItsOwnOperandFirst) {
  Recorder r;
  r.overlapping = true;  // dst overlaps src: rank 1 reads its own after the first step
  EXPECT_EQ(run(r, reduceAll(Buf::Input), 1, 3),
            (std::vector<std::string>{"ask 0#0", "ask 2#1", "acc=v0+in", "acc=acc+v2", "out=acc", "release 0", "release 2"}));
  Recorder r0;
  r0.overlapping = true;  // rank 0 in place: its own value is read by the first step only
  EXPECT_EQ(run(r0, reduceAll(Buf::Output), 0, 2), (std::vector<std::string>{"ask 1#0", "out=out+v1", "release 1"}));
}

TEST(OpDispatch, NothingMovesWhileASliceIsMissingOrTheWriteMustWait) {
  Recorder r;
  r.missing = {0};
  EXPECT_EQ(run(r, reduceAll(Buf::Input), 1, 3, false), (std::vector<std::string>{"ask 0#0", "ask 2#1"}));
  Recorder w;
  w.canWrite = false;  // an unread send overlaps dst
  EXPECT_TRUE(run(w, Op{OpKind::Recv, 1, 0, {}, {Buf::Output, 0, 4}}, 0, 2, false).empty());
  Recorder s;
  s.canSend = false;  // a send that cannot go yet: no write check (it writes nothing)
  EXPECT_EQ(run(s, Op{OpKind::Send, 1, 0, {Buf::Input, 0, 4}, {}}, 0, 2, false), (std::vector<std::string>{"send in"}));
}

TEST(OpDispatch, RecvLandsInItsDestinationAndRecvReduceFoldsLocalFirst) {
  Recorder r;
  EXPECT_EQ(run(r, Op{OpKind::Recv, 1, 0, {}, {Buf::Output, 0, 4}}, 0, 2),
            (std::vector<std::string>{"ask 1#0 into out", "out=v1", "release 1"}));
  Recorder rr;
  EXPECT_EQ(run(rr, Op{OpKind::RecvReduce, 1, 0, {Buf::Input, 0, 4}, {Buf::Output, 0, 4}}, 0, 2),
            (std::vector<std::string>{"ask 1#0", "out=in+v1", "release 1"}));
  Recorder c;
  EXPECT_EQ(run(c, Op{OpKind::Copy, -1, 0, {Buf::Input, 0, 4}, {Buf::Output, 0, 4}}, 0, 2),
            (std::vector<std::string>{"out=in"}));
}

}  // namespace
}  // namespace cclab::plan
