/* SPDX-License-Identifier: MIT */
/* Status codes, their messages, the per-thread failure detail, the version. */
#include "warpheap/warpheap.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const messages[WH_STATUS_COUNT] = {
    [WH_OK] = "success",
    [WH_ERR_INVALID_ARGUMENT] = "invalid argument",
    [WH_ERR_OUT_OF_MEMORY] = "out of memory",
    [WH_ERR_TOO_SMALL] = "region too small for the structure",
    [WH_ERR_TOO_LARGE] = "size beyond what the structure can address",
    [WH_ERR_DOUBLE_FREE] = "double free",
    [WH_ERR_FOREIGN_POINTER] = "pointer not allocated by this object",
    [WH_ERR_RETRY_LIMIT] = "retry limit reached under contention",
    [WH_ERR_CORRUPT] = "consistency check failed",
    [WH_ERR_CUDA] = "CUDA runtime error",
    [WH_ERR_NO_DEVICE] = "no CUDA device (or built without CUDA)",
    [WH_ERR_UNSUPPORTED] = "not supported by this build or backend",
    [WH_ERR_IN_USE] = "destroyed with live allocations",
};

const char *wh_strerror(wh_status status) {
    if ((unsigned)status >= WH_STATUS_COUNT) return "unknown warpheap status";
    return messages[status];
}

static _Thread_local char last_error[256];

const char *wh_last_error(void) { return last_error; }

void wh__clear_error(void) { last_error[0] = '\0'; }

wh_status wh__fail(wh_status status, const char *fmt, ...) {
    int n = snprintf(last_error, sizeof last_error, "%s: ", wh_strerror(status));
    if (fmt && n > 0 && (size_t)n < sizeof last_error) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(last_error + n, sizeof last_error - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return status;
}

int wh_version(void) { return WH_VERSION; }

#define WH_STR2(x) #x
#define WH_STR(x)  WH_STR2(x)
const char *wh_version_string(void) {
    return WH_STR(WH_VERSION_MAJOR) "." WH_STR(WH_VERSION_MINOR) "." WH_STR(WH_VERSION_PATCH);
}
