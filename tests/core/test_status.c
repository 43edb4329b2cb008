/* SPDX-License-Identifier: MIT */
/* Status codes, messages, failure details and the version. */
#include "warpheap/warpheap.h"
#include "wh_test.h"

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "Status codes, messages, failure details and the version.");
    for (int s = 0; s < WH_STATUS_COUNT; ++s) {
        const char *m = wh_strerror((wh_status)s);
        CHECK(m != NULL && m[0] != '\0');
        for (int t = 0; t < s; ++t) CHECK(strcmp(m, wh_strerror((wh_status)t)) != 0);
    }
    CHECK(strcmp(wh_strerror((wh_status)9999), "unknown warpheap status") == 0);
    CHECK(strcmp(wh_strerror((wh_status)-1), "unknown warpheap status") == 0);

    CHECK(wh_version() == WH_VERSION);
    CHECK(WH_VERSION == WH_VERSION_MAJOR * 10000 + WH_VERSION_MINOR * 100 + WH_VERSION_PATCH);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", WH_VERSION_MAJOR, WH_VERSION_MINOR, WH_VERSION_PATCH);
    CHECK(strcmp(wh_version_string(), expect) == 0);

    CHECK(wh__fail(WH_ERR_OUT_OF_MEMORY, "need %d bytes", 42) == WH_ERR_OUT_OF_MEMORY);
    CHECK(strcmp(wh_last_error(), "out of memory: need 42 bytes") == 0);
    /* a long detail is cut, not overflowed */
    char big[1024];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    wh__fail(WH_ERR_CORRUPT, "%s", big);
    CHECK(strlen(wh_last_error()) < 256);
#if !WH_HAVE_CUDA
    CHECK(!wh_cuda_available());
#endif
    return wh_test_finish("test_status");
}
