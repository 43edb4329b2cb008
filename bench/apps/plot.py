#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Pictures for the SMMO applications' results, with the standard library only
(zlib for PNG): a bar chart of ms per iteration (log scale) per application and
variant from the apps CSV files, and PPM -> PNG conversion of the apps' pictures.

  plot.py chart OUT.png FILE.csv [FILE.csv ...]   (later files override earlier rows)
  plot.py png IN.ppm OUT.png [SCALE_DOWN]
"""
import math
import struct
import sys
import zlib

GLYPHS = {  # 5x7 bitmap font, rows top to bottom
    'A': ".###. #...# #...# ##### #...# #...# #...#", 'B': "####. #...# #...# ####. #...# #...# ####.",
    'C': ".###. #...# #.... #.... #.... #...# .###.", 'D': "####. #...# #...# #...# #...# #...# ####.",
    'E': "##### #.... #.... ####. #.... #.... #####", 'F': "##### #.... #.... ####. #.... #.... #....",
    'G': ".###. #...# #.... #.### #...# #...# .###.", 'H': "#...# #...# #...# ##### #...# #...# #...#",
    'I': ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.", 'L': "#.... #.... #.... #.... #.... #.... #####",
    'M': "#...# ##.## #.#.# #.#.# #...# #...# #...#", 'N': "#...# ##..# #.#.# #..## #...# #...# #...#",
    'O': ".###. #...# #...# #...# #...# #...# .###.", 'P': "####. #...# #...# ####. #.... #.... #....",
    'R': "####. #...# #...# ####. #.#.. #..#. #...#", 'S': ".#### #.... #.... .###. ....# ....# ####.",
    'T': "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..", 'U': "#...# #...# #...# #...# #...# #...# .###.",
    'W': "#...# #...# #...# #.#.# #.#.# ##.## #...#", 'X': "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    'V': "#...# #...# #...# #...# #...# .#.#. ..#..", 'Y': "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
    '0': ".###. #...# #..## #.#.# ##..# #...# .###.", '1': "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    '2': ".###. #...# ....# ...#. ..#.. .#... #####", '3': "####. ....# ....# .###. ....# ....# ####.",
    '4': "...#. ..##. .#.#. #..#. ##### ...#. ...#.", '5': "##### #.... ####. ....# ....# #...# .###.",
    '6': ".###. #.... #.... ####. #...# #...# .###.", '7': "##### ....# ...#. ..#.. .#... .#... .#...",
    '8': ".###. #...# #...# .###. #...# #...# .###.", '9': ".###. #...# #...# .#### ....# ....# .###.",
    '.': "..... ..... ..... ..... ..... .##.. .##..", '/': "....# ....# ...#. ..#.. .#... #.... #....",
    '-': "..... ..... ..... .###. ..... ..... .....", ' ': "..... ..... ..... ..... ..... ..... .....",
    '(': "...#. ..#.. .#... .#... .#... ..#.. ...#.", ')': ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    ',': "..... ..... ..... ..... .##.. ..#.. .#...", ':': "..... .##.. .##.. ..... .##.. .##.. .....",
}


class Canvas:
    def __init__(self, w, h, bg=(255, 255, 255)):
        self.w, self.h = w, h
        self.px = bytearray(bytes(bg) * (w * h))

    def rect(self, x0, y0, x1, y1, c):
        for y in range(max(0, y0), min(self.h, y1)):
            row = y * self.w
            for x in range(max(0, x0), min(self.w, x1)):
                self.px[(row + x) * 3:(row + x) * 3 + 3] = bytes(c)

    def text(self, x, y, s, c=(0, 0, 0), scale=2):
        for ch in s.upper():
            rows = GLYPHS.get(ch, GLYPHS[' ']).split()
            for r, bits in enumerate(rows):
                for k, b in enumerate(bits):
                    if b == '#':
                        self.rect(x + k * scale, y + r * scale, x + (k + 1) * scale, y + (r + 1) * scale, c)
            x += 6 * scale
        return x

    def png(self, path):
        write_png(path, self.w, self.h, self.px)


def write_png(path, w, h, rgb):
    raw = b''.join(b'\x00' + bytes(rgb[y * w * 3:(y + 1) * w * 3]) for y in range(h))

    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xFFFFFFFF)
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) +
                chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))


def ppm_to_png(src, dst, down=1):
    data = open(src, 'rb').read()
    parts, pos = [], 0
    while len(parts) < 4:             # P6, width, height, maxval
        while data[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        parts.append(data[pos:end])
        pos = end
    pos += 1
    w, h = int(parts[1]), int(parts[2])
    px = data[pos:pos + w * h * 3]
    if down > 1:                      # keep the brightest pixel of each block (dots stay visible)
        nw, nh = w // down, h // down
        out = bytearray(nw * nh * 3)
        for y in range(nh):
            for x in range(nw):
                best = (0, 0, 0)
                for dy in range(down):
                    o = ((y * down + dy) * w + x * down) * 3
                    for dx in range(down):
                        p = px[o + dx * 3:o + dx * 3 + 3]
                        if sum(p) > sum(best):
                            best = tuple(p)
                out[(y * nw + x) * 3:(y * nw + x) * 3 + 3] = bytes(best)
        px, w, h = out, nw, nh
    write_png(dst, w, h, px)


def chart(out, files):
    rows = {}
    order = []
    env = ''
    for f in files:
        for line in open(f).read().splitlines()[1:]:
            c = line.split(',')
            if len(c) < 7:
                continue
            key = (c[0], c[1])
            if c[0] not in order:
                order.append(c[0])
            rows[key] = float(c[5])
            env = c[7] if len(c) > 7 else env
    variants = [('warpheap', (40, 150, 90)), ('static', (140, 140, 140)), ('malloc', (200, 60, 50))]
    lo, hi = -2.0, 3.0                # 0.01 .. 1000 ms
    left, width, bar, gap = 300, 560, 16, 22
    h = 110 + len(order) * (3 * bar + gap) + 40
    cv = Canvas(left + width + 190, h)
    cv.text(16, 14, 'MS PER ITERATION (LOG SCALE), ' + env.upper(), scale=2)
    x = 16
    for name, col in variants:
        cv.rect(x, 44, x + 16, 58, col)
        x = cv.text(x + 22, 45, name, scale=2) + 24
    y0 = 80
    for d in range(int(lo), int(hi) + 1):
        gx = left + int((d - lo) / (hi - lo) * width)
        cv.rect(gx, y0 - 6, gx + 1, h - 30, (215, 215, 215))
        cv.text(gx - 14, h - 24, ('%g' % (10.0 ** d)), (90, 90, 90), scale=2)
    y = y0
    for app in order:
        cv.text(16, y + bar, app + (' (PER STEP)' if app == 'structure' else ''), scale=2)
        for name, col in variants:
            v = rows.get((app, name))
            if v is not None and v > 0:
                w = int((min(max(math.log10(v), lo), hi) - lo) / (hi - lo) * width)
                cv.rect(left, y, left + max(w, 2), y + bar - 2, col)
                cv.text(left + max(w, 2) + 6, y + 1, '%.3g' % v, scale=2)
            y += bar
        y += gap
    cv.png(out)


if __name__ == '__main__':
    if len(sys.argv) >= 4 and sys.argv[1] == 'chart':
        chart(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) >= 4 and sys.argv[1] == 'png':
        ppm_to_png(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    else:
        sys.exit(__doc__)
