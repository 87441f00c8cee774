// Leave-one-size-out cross-validation of calibrate(): for each size measured, the topology is fitted to
// every other size and then predicts that one. The errors are those of a calibrated model on a size it
// was not fitted to, which the fit's own residuals (calibrate.h) understate: with as many parameters
// as a few sizes, a fit can pass through every point it sees.
#pragma once

#include <string>
#include <vector>

#include "sim/calibrate.h"

namespace cclab::sim {

// Sizes (in the fit set) that are held out one at a time; fewer than 3 distinct sizes: none (nothing
// would be left to fit the parameters to).
std::vector<Bytes> crossValidationSizes(const std::vector<Measurement>& fitSet);

// Why leave-one-size-out cannot run on this fit set with `nparams` fitted parameters ("" when it can):
// fewer than 3 distinct sizes, or a fold whose remaining sizes have fewer distinct points than
// parameters (checkDetermined would refuse its fit). calibrate prints it and writes it to -J.
std::string crossValidationSkipped(const std::vector<Measurement>& fitSet, std::size_t nparams);

// One PointError per point of the fit set: its prediction by the topology fitted without its size;
// none when crossValidationSkipped says why.
std::vector<PointError> leaveOneSizeOut(const TopologySpec& initial, const std::vector<Measurement>& fitSet,
                                        const CalibrationOptions& options);

}  // namespace cclab::sim
