#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The churn workload of wh_heap_bench (steady.cu) as a picture: operations
per second, and internal (equation 2) and external (equation 3)
fragmentation, per round.  Usage: churn_plot.py heap_churn.csv OUT.png
(matplotlib)."""
import csv
import re
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt

lines = [l for l in open(sys.argv[1]) if not l.startswith('#')]
header = next(l for l in open(sys.argv[1]) if l.startswith('#'))[1:].strip()
rows = list(csv.DictReader(lines))
r = [int(x['round']) for x in rows]
fig, (a, b) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
a.plot(r[1:], [float(x['ops_per_s']) for x in rows[1:]], '.-', label='frees + allocations / s')
a.set_ylabel('operations / s')
a.set_ylim(bottom=0)
a.grid(alpha=0.3)
a2 = a.twinx()
a2.plot(r, [float(x['replace']) for x in rows], ':', color='gray', label='fraction replaced')
a2.set_ylabel('fraction replaced', color='gray')
a2.set_ylim(0, 1.05)
b.plot(r, [float(x['internal_frag']) for x in rows], '.-', label='internal (equation 2)')
b.plot(r, [float(x['external_frag']) for x in rows], '.-', label='external (equation 3)')
b.plot(r, [float(x['requested_bytes']) / int(x['used_bytes']) if int(x['used_bytes']) else 0 for x in rows], '--',
       label='requested / used bytes')
b.set_xlabel('round (0: the fill)')
b.set_ylabel('fraction')
b.set_ylim(0, 1.05)
b.grid(alpha=0.3)
b.legend(loc='center right')
meta = dict(re.findall(r'(\w+)=(.*?)(?= \w+=|$)', header))
fig.suptitle('DEFAULT heap churn, %s, commit %s' % (meta.get('gpu', '?'), meta.get('commit', '?')))
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=100)
