#!/usr/bin/env bash
# expect_gpu_test.sh TEST_BINARY: where no device is usable, a GPU test binary must FAIL under
# CCLAB_EXPECT_GPU=1 with the reason, and skip (exit 0) without it. Where a device is usable there is
# nothing to check here (exit 77: ctest reports the test as skipped).
set -uo pipefail
bin=$1
plain=$("$bin" --gtest_brief=0 2>&1)
plain_rc=$?
if ! grep -q "SKIPPED" <<<"$plain"; then
  echo "a device is usable (no test skipped): nothing to check"
  exit 77
fi
[ $plain_rc -eq 0 ] || { echo "FAIL: without CCLAB_EXPECT_GPU the skipped run exited $plain_rc"; exit 1; }
expect=$(CCLAB_EXPECT_GPU=1 "$bin" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
  echo "FAIL: CCLAB_EXPECT_GPU=1 without a device exited 0 (skips still pass)"
  exit 1
fi
if ! grep -q "expected (CCLAB_EXPECT_GPU=1) but unavailable: " <<<"$expect"; then
  echo "FAIL: the failure does not name its reason:"
  echo "$expect" | tail -5
  exit 1
fi
if grep -q "SKIPPED \]" <<<"$expect"; then
  echo "FAIL: tests still skipped under CCLAB_EXPECT_GPU=1"
  exit 1
fi
echo "ok: $(grep -c 'FAILED  \]' <<<"$expect") failures naming the reason, exit $rc"
