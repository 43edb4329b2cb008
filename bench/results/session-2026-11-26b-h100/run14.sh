#!/usr/bin/env bash
# Device call 14: r12's test_arena_gpu failed in its new forecast-ring test
# (the twin's spans differ); the test alone, every round printed.
set -u
. "$(dirname "$0")/common.sh" r14
step posts_small 60 "$A/test_arena_gpu" --posts --small --verbose
head -30 "$O/posts_small.log" | grep -v "CHECK failed"
grep -c "CHECK failed" "$O/posts_small.log"
cat "$O/steps.txt"
pack
