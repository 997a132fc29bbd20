#!/usr/bin/env bash
# Why each failed test failed, in a few lines, from ctest's log: printed at
# the very end of a failed suite, where a CI summary that keeps only the
# tail of the output still shows it (the full outputs are printed earlier,
# as each test ends).
#   scripts/ctest_digest.sh <build dir>
# Per failed test: its gtest failures (each "file:line: Failure" with the
# 24 lines after it), or the end of its output when it has none (a crash, a
# timeout); at most 60 lines per test.
set -euo pipefail
log="${1:?usage: ctest_digest.sh <build dir>}/Testing/Temporary/LastTest.log"
[ -f "$log" ] || { echo "ctest_digest: no $log"; exit 0; }
echo "== why the failed tests failed (from $log)"
awk '
  function flush(   i, n, shown) {
    if (!failed) return
    print "-- " name
    n = 0
    for (i = 1; i <= count && n < 60; i++) {
      if (keep[i]) { print "   " lines[i]; n++ }
    }
    if (n == 0) {
      for (i = (count > 20 ? count - 19 : 1); i <= count; i++) {
        print "   " lines[i]
      }
    }
  }
  /^[0-9]+\/[0-9]+ Testing: / {
    flush(); name = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, "", name)
    count = 0; failed = 0; inside = 0; after = 0; split("", lines)
    split("", keep); next
  }
  /^Output:$/ { inside = 1; rule = 1; next }
  inside && rule && /^-+$/ { rule = 0; next }
  /^<end of output>$/ { inside = 0; next }
  /^Test Failed\.$/ || /^Test Timeout\.$/ || /^Test (SegFault|Exception)/ {
    failed = 1; next
  }
  inside {
    rule = 0
    lines[++count] = substr($0, 1, 300)
    if ($0 ~ /: Failure$/ || $0 ~ /^\[  FAILED  \]/) after = 25
    if (after > 0) { keep[count] = 1; after-- }
  }
  END { flush() }
' "$log"
