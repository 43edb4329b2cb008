/* SPDX-License-Identifier: MIT */
/* The NCCL transport's bootstrap from a launcher's variables (soa/nccl.h):
 * each missing or bad variable is an error that names it, before NCCL is
 * asked for anything, so it runs without a GPU.  Built where CMake finds
 * NCCL. */
#include "warpheap/soa/nccl.h"
#include "wh_test.h"

#include <stdlib.h>
#include <string.h>

/* The status and message of wh_soa_transport_nccl_env with these variables
 * (NULL: unset). */
static wh_status env_try(const char *rank, const char *size, const char *file) {
    const char *names[3] = {"RANK", "WORLD_SIZE", "WH_NCCL_ID_FILE"}, *values[3] = {rank, size, file};
    for (int i = 0; i < 3; ++i) {
        if (values[i])
            setenv(names[i], values[i], 1);
        else
            unsetenv(names[i]);
    }
    wh_soa_transport *t = NULL;
    wh_status st = wh_soa_transport_nccl_env(&t);
    CHECK(t == NULL);
    printf("  RANK=%s WORLD_SIZE=%s WH_NCCL_ID_FILE=%s: %s\n", rank ? rank : "-", size ? size : "-", file ? file : "-",
           wh_last_error());
    return st;
}

int main(int argc, char **argv) {
    wh_test_no_options(argc, argv, "The NCCL transport's bootstrap from a launcher's variables (no GPU needed).");
    unsetenv("LOCAL_RANK");
    CHECK(env_try(NULL, "2", "/tmp/id") == WH_ERR_INVALID_ARGUMENT && strstr(wh_last_error(), "RANK is not set"));
    CHECK(env_try("0", NULL, "/tmp/id") == WH_ERR_INVALID_ARGUMENT && strstr(wh_last_error(), "WORLD_SIZE"));
    CHECK(env_try("x1", "2", "/tmp/id") == WH_ERR_INVALID_ARGUMENT && strstr(wh_last_error(), "RANK=x1"));
    CHECK(env_try("0", "2", NULL) == WH_ERR_INVALID_ARGUMENT && strstr(wh_last_error(), "WH_NCCL_ID_FILE"));
    CHECK(env_try("2", "2", "/tmp/id") == WH_ERR_INVALID_ARGUMENT && strstr(wh_last_error(), "rank 2 of 2"));
    setenv("LOCAL_RANK", "-1", 1);
    CHECK(env_try("0", "2", "/tmp/id") == WH_ERR_INVALID_ARGUMENT && strstr(wh_last_error(), "LOCAL_RANK=-1"));
    unsetenv("LOCAL_RANK");
    wh_soa_nccl_config c = {0, 0, 0, "/tmp/id", 0};
    wh_soa_transport *t = NULL;
    CHECK(wh_soa_transport_nccl(&c, &t) == WH_ERR_INVALID_ARGUMENT && t == NULL);
    CHECK(wh_soa_transport_nccl_all(0, NULL, &t) == WH_ERR_INVALID_ARGUMENT);
    return wh_test_finish("test_nccl_env");
}
