// What the start-of-job agreement of cclab-train compares of the data (under mpirun every rank loads
// its own copy): ranks that would train on different data are refused before they run, whatever the
// paths they were given. Only a cheap summary travels; the data itself is loaded afterwards, by the
// readers (idx_file.h), which keep every check of their own.
#pragma once

#include <string>
#include <utility>

#include "trainer/data/data_source.h"

namespace cclab::trainer {

// The field the agreement adds for `source`, as (name, value):
//  - fashion-mnist: ("--data-dir", a 64-bit hash of every byte of the four IDX .gz files, in a fixed
//    order, with their total size). The bytes, not the path: two copies of the same files agree, and
//    files that differ anywhere (a pixel, a label) do not; the headers alone would miss a pixel. It
//    costs one sequential read of the files (Fashion-MNIST's 30.9 MB: 14-24 ms measured with a warm
//    page cache on a loaded 2-core machine), which also warms the page cache for the load. A file that
//    the readers' opener refuses (collectives/core/input_file.h: missing, not a regular file, a FIFO
//    (never waited on), past kMaxDataFileBytes) or that is unreadable gives its name and why instead,
//    so ranks that see different things disagree, and ranks that all see the same problem get the
//    readers' own refusal later.
//  - synthetic: ("--synthetic-samples", the sample count); the seed is --seed, already agreed.
[[nodiscard]] std::pair<std::string, std::string> dataAgreementField(const DataSource& source);

}  // namespace cclab::trainer
