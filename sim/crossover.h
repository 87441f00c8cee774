// Crossovers: the message size at which one algorithm stops beating another (e.g. the tree beats the
// ring for small allreduces, where its log(p) latency terms win, and loses for large ones, where the
// ring's bandwidth term wins).
#pragma once

#include <functional>
#include <optional>

#include "sim/predictor.h"
#include "sim/units.h"

namespace cclab::sim {

// The largest size searched: 16 GiB per rank. An allreduce of that size on an 80 GB GPU already needs
// 48 GiB for input, output and scratch, so no crossover a real run could meet lies above it; a pair
// of algorithms whose order has not flipped by then is reported as having none.
inline constexpr Bytes kCrossoverMaxBytes = Bytes{16} << 30;

struct CrossoverSearch {
  Bytes minBytes = 8;                    // the smallest size looked at (nccl-tests' -b default)
  Bytes maxBytes = kCrossoverMaxBytes;
  Bytes granularity = 1;                 // the answer is a multiple of this (the element size)
};

// The smallest size s (a multiple of search.granularity) in [minBytes, maxBytes] at which `a` is no
// longer faster than `b` (ta(s) >= tb(s)), where `a` is faster at minBytes; nullopt when `a` is never
// faster or never stops being. Sizes are scanned in powers of two from minBytes; inside the first
// interval where the order flips, an integer bisection on multiples of the granularity finds the
// exact size (at most log2(maxBytes / granularity) = 34 halvings for bytes), assuming the order flips
// once inside that interval (true of any two α-β-γ forms a·k + b·n, which cross at most once; with
// protocols each time is the lower of two such forms, so the orders may flip more than once over the
// whole range, and the answer is the first flip the scan meets).
std::optional<Bytes> crossover(const std::function<Micros(Bytes)>& ta, const std::function<Micros(Bytes)>& tb,
                               const CrossoverSearch& search = {});

// Allreduce crossover of algorithm `a` against `b` on the predictor's topology, with the analytic model
// (a bisection needs many predictions). Sizes are searched in multiples of nranks x elemSize: sizes
// that split into nranks equal chunks, where the closed forms are exact (analytic.h); in between,
// their rounding of chunks makes the order of two algorithms flip back and forth by a few bytes.
std::optional<Bytes> allReduceCrossover(const Predictor& predictor, SimAlgorithm a, SimAlgorithm b);

}  // namespace cclab::sim
