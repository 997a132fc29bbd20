#!/usr/bin/env bash
# scripts/ctest_digest.sh on a real ctest log: a throwaway project with more
# tests than the slowest-list shows (enough, with long names, that sorting
# them fills more than a pipe's buffer), one gtest-style failure and
# one crash.
# The digest must exit 0 and name why each failed test failed.
#   tests/scripts/ctest_digest_test.sh <source root>
set -euo pipefail
root="${1:?usage: ctest_digest_test.sh <source root>}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
{
  echo 'cmake_minimum_required(VERSION 3.20)'
  echo 'project(digest NONE)'
  echo 'enable_testing()'
  long="$(printf 'AVeryLongTestNameThatTakesRoom%.0s' 1 2 3 4)"
  for i in $(seq 1 800); do
    echo "add_test(NAME Passes${i}_$long COMMAND true)"
  done
  echo 'add_test(NAME Fails COMMAND sh -c "echo noise; echo a_test.cc:7: Failure; echo Expected: 3; printf \"x\\033[2Jy\\n\"; echo [  FAILED  ] T.Fails; exit 1")'
  echo 'add_test(NAME Crashes COMMAND sh -c "echo last words; kill -SEGV \$\$")'
} >"$work/CMakeLists.txt"
cmake -S "$work" -B "$work/build" >/dev/null
ctest --test-dir "$work/build" -j 2 >/dev/null 2>&1 || true
out="$(bash "$root/scripts/ctest_digest.sh" "$work/build" 12)" || {
  echo "FAIL: ctest_digest.sh exited $?"; echo "$out"; exit 1; }
fail() { echo "FAIL: $1"; echo "--- digest:"; echo "$out"; exit 1; }
[ "$(grep -c ' s  ' <<<"$out")" -eq 12 ] || fail "not 12 slowest tests"
grep -q '^== why the failed tests failed$' <<<"$out" || fail "no why section"
grep -q '^-- Fails$' <<<"$out" || fail "Fails not named"
grep -q '^   a_test.cc:7: Failure$' <<<"$out" || fail "the failure line missing"
grep -q '^   Expected: 3$' <<<"$out" || fail "the line after it missing"
grep -q '^   x?\[2Jy$' <<<"$out" || fail "a control character not made '?'"
grep -q '^   noise$' <<<"$out" && fail "a line before the failure kept"
grep -q '^-- Crashes$' <<<"$out" || fail "Crashes not named"
grep -q '^   last words$' <<<"$out" || fail "the crash's output missing"
grep -q '^-- Passes' <<<"$out" && fail "a passing test listed as failed"
echo "PASS"
