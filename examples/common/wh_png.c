/* SPDX-License-Identifier: MIT */
/* PNG (RFC 2083) with zlib stream (RFC 1950) of stored deflate blocks
 * (RFC 1951, BTYPE 00): each block holds up to 65535 bytes verbatim. */
#include "wh_png.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t crc_table[256];

static void crc_init(void) {
    for (uint32_t n = 0; n < 256; ++n) {
        uint32_t c = n;
        for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; ++i) crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return crc;
}

static void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* length, type, data, CRC over type and data */
static int chunk(FILE *f, const char *type, const uint8_t *data, uint32_t len) {
    uint8_t head[8], tail[4];
    put32(head, len);
    memcpy(head + 4, type, 4);
    uint32_t crc = crc_update(0xFFFFFFFFu, head + 4, 4);
    crc = crc_update(crc, data, len) ^ 0xFFFFFFFFu;
    put32(tail, crc);
    return fwrite(head, 1, 8, f) == 8 && (len == 0 || fwrite(data, 1, len, f) == len) && fwrite(tail, 1, 4, f) == 4
               ? 0
               : -1;
}

int wh_png_write_rgb(const char *path, const uint8_t *rgb, uint32_t width, uint32_t height) {
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    crc_init();
    size_t row = (size_t)width * 3 + 1; /* filter byte + pixels */
    size_t raw_len = row * height;
    size_t blocks = raw_len / 65535 + 1;
    size_t z_len = 2 + raw_len + 5 * blocks + 4;
    uint8_t *z = (uint8_t *)malloc(z_len);
    uint8_t *raw = (uint8_t *)malloc(raw_len ? raw_len : 1);
    if (!z || !raw) {
        free(z);
        free(raw);
        return -1;
    }
    for (uint32_t y = 0; y < height; ++y) {
        raw[y * row] = 0; /* filter: none */
        memcpy(raw + y * row + 1, rgb + (size_t)y * width * 3, (size_t)width * 3);
    }
    size_t o = 0;
    z[o++] = 0x78;
    z[o++] = 0x01;         /* zlib header, no compression */
    uint32_t a = 1, b = 0; /* Adler-32 */
    size_t done = 0;
    do {
        size_t n = raw_len - done > 65535 ? 65535 : raw_len - done;
        z[o++] = done + n == raw_len ? 1 : 0; /* BFINAL, BTYPE = 00 */
        z[o++] = (uint8_t)n;
        z[o++] = (uint8_t)(n >> 8);
        z[o++] = (uint8_t)~n;
        z[o++] = (uint8_t)(~n >> 8);
        memcpy(z + o, raw + done, n);
        for (size_t i = 0; i < n; ++i) {
            a = (a + raw[done + i]) % 65521u;
            b = (b + a) % 65521u;
        }
        o += n;
        done += n;
    } while (done < raw_len);
    put32(z + o, (b << 16) | a);
    o += 4;
    uint8_t ihdr[13];
    put32(ihdr, width);
    put32(ihdr + 4, height);
    ihdr[8] = 8;
    ihdr[9] = 2;
    ihdr[10] = 0;
    ihdr[11] = 0;
    ihdr[12] = 0; /* 8-bit RGB */
    FILE *f = fopen(path, "wb");
    int rc = -1;
    if (f && fwrite(sig, 1, 8, f) == 8 && !chunk(f, "IHDR", ihdr, 13) && !chunk(f, "IDAT", z, (uint32_t)o) &&
        !chunk(f, "IEND", NULL, 0))
        rc = 0;
    if (f && fclose(f)) rc = -1;
    free(z);
    free(raw);
    return rc;
}
