#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Markdown tables from heap_bench.csv (wh_heap_bench): the goal tables and
the paper's workloads.  Usage: report.py heap_bench.csv
report.py --secure heap_bench.csv secure.csv: DEFAULT against DEFAULT with
WH_HEAP_SECURE (wh_heap_bench --secure), one table.
report.py --compare DIR: DEFAULT of a baseline build (DIR/baseline_*.csv)
against this build (DIR/heap_bench.csv, DIR/heap_rounds.csv), one table."""
import csv, os, sys


def load(path):
    rows = [r for r in csv.reader(l for l in open(path) if not l.startswith('#'))]
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def find(R, **kv):
    return next((r for r in R if all(r[k] == str(v) for k, v in kv.items())), None)


if sys.argv[1] == '--compare':
    d = sys.argv[2]
    builds = [('baseline', load(os.path.join(d, 'baseline_heap_bench.csv')),
               load(os.path.join(d, 'baseline_heap_rounds.csv'))),
              ('this build', load(os.path.join(d, 'heap_bench.csv')), load(os.path.join(d, 'heap_rounds.csv')))]
    print('# DEFAULT before and after: the baseline build against this one, same run\n')
    print('Rounds: the mean over the rounds of the fill/free workload (first round in brackets). '
          'x BUMP: the one-allocation kernel\'s time over BUMP\'s in the same binary.\n')
    print('| measure | ' + ' | '.join(b[0] for b in builds) + ' |')
    print('|---|' + '---|' * len(builds))
    def row(name, cells): print('| %s | %s |' % (name, ' | '.join(cells)))
    def cell(r, key, fmt):
        return fmt % float(r[key]) if r else '-'
    row('registers, wh_malloc + wh_free', [cell(find(B, test='regs', allocator='default', mode=''), 'allocs_per_s', '%.0f')
                                           for _, B, _ in builds])
    row('local bytes a thread', [cell(find(B, test='local', allocator='default', mode=''), 'allocs_per_s', '%.0f')
                                 for _, B, _ in builds])
    for s in (16, 256, 4096):
        cells = []
        for _, B, _ in builds:
            r, b = find(B, test='one', allocator='default', size=s), find(B, test='one', allocator='bump', size=s)
            cells.append('%.4g ms (%.2fx BUMP)' % (float(r['ms']), float(r['ms']) / float(b['ms'])) if r and b else '-')
        row('one allocation a thread, 1M threads, %d B' % s, cells)
        row('its free kernel, %d B' % s, [cell(find(B, test='one_free', allocator='default', size=s), 'ms', '%.4g ms')
                                          for _, B, _ in builds])
    sizes = sorted({int(r['size']) for _, _, X in builds for r in X}, key=lambda v: (v == 0, v))
    for s in sizes:
        for key, what in (('allocs_per_s', 'allocations / s'), ('frees_per_s', 'frees / s')):
            cells = []
            for _, _, X in builds:
                v = [float(r[key]) for r in X if int(r['size']) == s]
                cells.append('%.3g (%.3g)' % (sum(v) / len(v), v[0]) if v else '-')
            row('rounds, %s, %s' % ('%d B' % s if s else 'mixed', what), cells)
    row('utilisation at the first failure, mixed 16 B - 4 KiB',
        [cell(find(B, test='util', allocator='default', mode='mixed'), 'allocs_per_s', '%.4f') for _, B, _ in builds])
    sys.exit(0)


if sys.argv[1] == '--secure':
    base, sec = load(sys.argv[2]), load(sys.argv[3])
    def one(R, test, size):
        return next((r for r in R if r['test'] == test and r['allocator'] == 'default' and int(r['size']) == size), None)
    print('# Hardened mode (WH_HEAP_SECURE) against the default, DEFAULT heap, same binary and run\n')
    print('| workload | size | default | WH_HEAP_SECURE | secure / default |')
    print('|---|---|---|---|---|')
    for test, what, key in (('one', 'one allocation per thread, 1M threads (ms)', 'ms'),
                            ('one_free', 'its free kernel (ms)', 'ms'),
                            ('fill90', 'fill 90% of 9.4 GB (allocations / s)', 'allocs_per_s')):
        for size in (16, 256, 4096):
            a, b = one(base, test, size), one(sec, test, size)
            if not a or not b:
                continue
            x, y = float(a[key]), float(b[key])
            print('| %s | %d B | %.4g | %.4g | %.2f |' % (what, size, x, y, y / x if x else 0))
    sys.exit(0)

R = load(sys.argv[1])
def get(test, alloc, mode=None, size=None, param=None):
    for r in R:
        if r['test'] == test and r['allocator'] == alloc and (mode is None or r['mode'] == mode) \
           and (size is None or int(r['size']) == size) and (param is None or int(r['param']) == param):
            return r
    return None
allocs = []
for r in R:
    if r['allocator'] not in allocs and r['test'] not in ('regs', 'local'): allocs.append(r['allocator'])
out = []
def p(s=''): out.append(s)

p('\n## One allocation per thread, 1M threads (ms, allocation kernel; x = speed-up over CUDA malloc)\n')
p('| allocator | 16 B | 256 B | 4 KiB | free 16 B | free 256 B | free 4 KiB |')
p('|---|---|---|---|---|---|---|')
for a in allocs:
    cells = []
    for s in (16, 256, 4096):
        r, c = get('one', a, size=s), get('one', 'cuda-malloc', size=s)
        if not r: cells.append('-'); continue
        ms = float(r['ms']); x = float(c['ms']) / ms if c and ms > 0 else 0
        f = int(r['failed'])
        cells.append('%.4g%s%s' % (ms, ' (%.0fx)' % x if a != 'cuda-malloc' and x else '', ' [%d failed]' % f if f else ''))
    for s in (16, 256, 4096):
        r = get('one_free', a, size=s)
        cells.append('%.4g' % float(r['ms']) if r else '-')
    p('| %s | %s |' % (a, ' | '.join(cells)))

if any(r['test'] == 'onewarm' for r in R):
    p('\n## One allocation per thread, 1M threads, over BUMP: a fresh heap and a warm one\n')
    p('The allocation kernel\'s time over BUMP\'s, same workload and size.  Fresh (`one`): the heap as created, '
      'so the kernel also waits for the first bump segment of each class\'s ways; warm (`onewarm`): a small '
      'kernel has started every way\'s first segment.\n')
    p('| allocator | fresh 16 B | fresh 256 B | fresh 4 KiB | warm 16 B | warm 256 B | warm 4 KiB |')
    p('|---|---|---|---|---|---|---|')
    for a in allocs:
        if a in ('bump', 'cuda-malloc'): continue
        cells = []
        for test in ('one', 'onewarm'):
            for s in (16, 256, 4096):
                r, b = get(test, a, size=s), get(test, 'bump', size=s)
                cells.append('%.2fx' % (float(r['ms']) / float(b['ms'])) if r and b and float(b['ms']) > 0 else '-')
        p('| %s | %s |' % (a, ' | '.join(cells)))

p('\n## Fill 90% of a 9.4 GB heap with one size (allocations / s)\n')
p('| allocator | 16 B | 256 B | 4 KiB |')
p('|---|---|---|---|')
for a in allocs:
    cells = []
    for s in (16, 256, 4096):
        r = get('fill90', a, size=s)
        cells.append('%.3g%s' % (float(r['allocs_per_s']), ' [%s failed]' % r['failed'] if r and int(r['failed']) else '') if r else '-')
    if any(c != '-' for c in cells): p('| %s | %s |' % (a, ' | '.join(cells)))

for mode, title in (('warp', 'one allocating thread per warp'), ('thread', 'every thread allocating')):
    sizes = sorted({int(r['size']) for r in R if r['test'] == 'ad' and r['mode'] == mode})
    if not sizes: continue                     # a run without the paper's workloads (--tests)
    p('\n## Alloc-Dealloc, %s (ms per kernel)\n' % title)
    p('| allocator | ' + ' | '.join('%d B' % s for s in sizes) + ' |')
    p('|---|' + '---|' * len(sizes))
    for a in allocs:
        cells = []
        for s in sizes:
            r = get('ad', a, mode, s)
            cells.append(('%.4g' % float(r['ms']) + (' [%s failed]' % r['failed'] if int(r['failed']) else '')) if r else '-')
        p('| %s | %s |' % (a, ' | '.join(cells)))

if any(r['test'] in ('acd', 'prob', 'linux') for r in R):
    p('\n## Alloc-Cycle-Dealloc, Probability, Linux scalability (ms)\n')
    p('| allocator | ACD 16 B x10 | ACD 16 B x100 | ACD 4 KiB x10 | Probability 16 B | Linux n=16 (ms / n) | Linux n=128 (ms / n) |')
    p('|---|---|---|---|---|---|---|')
    for a in allocs:
        c = []
        for (t, s, prm) in (('acd', 16, 10), ('acd', 16, 100), ('acd', 4096, 10), ('prob', 16, 10)):
            r = get(t, a, size=s, param=prm)
            c.append(('%.4g' % float(r['ms']) + (' [%s failed]' % r['failed'] if int(r['failed']) else '')) if r else '-')
        for n in (16, 128):
            r = get('linux', a, param=n)
            c.append('%.4g' % (float(r['ms']) / n) if r else '-')
        p('| %s | %s |' % (a, ' | '.join(c)))
print('\n'.join(out))
