#!/usr/bin/env bash
# A digest of the last ctest run, from its log, for the very end of the
# suite's output, where a CI summary that keeps only the tail still shows
# it (the full outputs are printed earlier, as each test ends):
#   - the slowest tests, with their times;
#   - per failed test, why: its gtest failures (each "file:line: Failure"
#     with the 24 lines after it), or the end of its output when it has
#     none (a crash, a timeout); at most 60 lines per test, control
#     characters shown as '?'.
#   scripts/ctest_digest.sh <build dir> [slowest count, default 12]
# (No `head` in a pipeline here: under pipefail, head closing the pipe early
# makes sort die of SIGPIPE and set -e end the script before the digest.)
set -euo pipefail
log="${1:?usage: ctest_digest.sh <build dir> [count]}/Testing/Temporary/LastTest.log"
count="${2:-12}"
[ -f "$log" ] || { echo "ctest_digest: no $log"; exit 0; }
echo "== the $count slowest tests (from $log)"
awk '
  /^[0-9]+\/[0-9]+ Testing: / { name = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, "", name) }
  /^Test time = / { t = $0; sub(/^Test time = */, "", t); sub(/ sec.*/, "", t)
                    printf "%10.1f s  %s\n", t, substr(name, 1, 120) }
' "$log" | sort -rn | sed -n "1,${count}p"
awk '
  function flush(   i, n) {
    if (!failed) return
    if (!header++) print "== why the failed tests failed"
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
    line = substr($0, 1, 300)
    gsub(/[\001-\010\013-\037\177]/, "?", line)  # No terminal controls.
    lines[++count] = line
    if ($0 ~ /: Failure$/ || $0 ~ /^\[  FAILED  \]/) after = 25
    if (after > 0) { keep[count] = 1; after-- }
  }
  END { flush() }
' "$log"
