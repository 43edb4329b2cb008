#!/usr/bin/env bash
# Device call 9: the head (fd2c1af: r8's code plus the chain entry points' input
# check and comments) -- run8.sh's steps, as r9.
exec bash "$(dirname "$0")/run8.sh" r9
