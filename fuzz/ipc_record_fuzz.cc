// libFuzzer target: the CUDA IPC record decoder (collectives/gpu_proc/ipc_exchange.h), which reads the bytes
// every peer process of a node sends in the handle exchange. Any bytes must either be refused with
// InvalidArgument or decode to a record that encodes back to exactly the same bytes (the format is
// canonical: fixed widths, no trailing bytes), and decoding that again gives the same record.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/gpu_proc/ipc_exchange.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  cclab::cuda::ProcessRecord r;
  try {
    r = cclab::cuda::decode(bytes);
  } catch (const cclab::InvalidArgument&) {
    return 0;  // refused with a message: the contract
  }
  const std::vector<std::byte> again = cclab::cuda::encode(r);
  if (again.size() != size || !std::equal(again.begin(), again.end(), bytes.begin())) std::abort();
  if (!(cclab::cuda::decode(again) == r)) std::abort();
  return 0;
}
