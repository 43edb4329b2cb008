#!/usr/bin/env bash
# Device call 3 (issue 3): r2 again after the fix (r2: frame 0 of a per-frame
# commit read the restage flag before it was set, and the images were
# corrupted) -- run2.sh's steps, as r3.
exec bash "$(dirname "$0")/run2.sh" r3
