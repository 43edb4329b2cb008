/* SPDX-License-Identifier: MIT */
/* A minimal PNG writer for pictures of results (meshes, simulation states,
 * fragmentation plots): 8-bit RGB, no compression (stored deflate blocks),
 * no dependency.  Files are larger than zlib's, and any viewer reads them. */
#ifndef WH_PNG_H
#define WH_PNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* rgb: height rows of width*3 bytes.  Returns 0 on success, -1 on I/O error. */
int wh_png_write_rgb(const char *path, const uint8_t *rgb, uint32_t width, uint32_t height);

#ifdef __cplusplus
}
#endif

#endif
