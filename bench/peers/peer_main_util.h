// Small pieces both peers' main() share: one-line errors and the per-rank buffers.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace cclab::bench {

inline int peerFail(const char* tool, int status, std::string message) {
  for (char& c : message)
    if (c == '\n') c = ' ';
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", tool, message.c_str());
  return status;
}

// One rank's buffers, allocated once at the largest size and written once (value-initialised), so
// no page is touched for the first time inside a timed loop.
struct PeerRankBuffers {
  std::vector<std::byte> send;
  std::vector<std::byte> recv;
  std::vector<std::byte> expected;  // empty without -c

  PeerRankBuffers(std::size_t bytes, bool check) : send(bytes), recv(bytes), expected(check ? bytes : 0) {}
};

}  // namespace cclab::bench
