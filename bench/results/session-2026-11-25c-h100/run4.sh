#!/usr/bin/env bash
# Device call 4: where the hand-off's frame loses what the reserve saved:
# the last arrival stamped before the baton is looked at, the baton's
# wait stamped, every frame's stamps printed (MC_STAMPS_ALL).  Profiles
# at 32^3.
set -u
. "$(dirname "$0")/common.sh" r4
MC_STAMPS_ALL=1 mc_profiles 32
mc_summary
pack
