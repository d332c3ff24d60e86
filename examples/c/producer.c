/*
 * Push integers or strings into a shared queue file through the C API.
 *
 *   producer [-w SECS] [-u] PATH int|int32|int16|str ITEM...
 *
 * Creates the queue file (1024 slots) when it is missing. Each ITEM is a
 * decimal integer for the integer types, or the argument's bytes for str
 * (flagged UTF-8 with -u). Without -w a full queue is an error (exit 1);
 * with -w each push waits up to SECS seconds for room (exit 2 on timeout).
 *
 * Build against the static library (cargo build --release):
 *   cc -Iinclude examples/c/producer.c target/release/libdata_queue_shared.a \
 *      -lpthread -ldl -lm -o producer
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data_queue_shared.h"

static int variant_of(const char *name)
{
    if (strcmp(name, "int") == 0) return DQS_INT64;
    if (strcmp(name, "int32") == 0) return DQS_INT32;
    if (strcmp(name, "int16") == 0) return DQS_INT16;
    if (strcmp(name, "str") == 0) return DQS_STR;
    return 0;
}

int main(int argc, char **argv)
{
    double wait = -1; /* negative: do not wait */
    int utf8 = 0, opt;
    unsigned long long zmin = 0; /* -z MIN: compress strings of MIN bytes or more */
    while ((opt = getopt(argc, argv, "w:uz:")) != -1) {
        if (opt == 'w') wait = strtod(optarg, NULL);
        else if (opt == 'u') utf8 = 1;
        else if (opt == 'z') zmin = strtoull(optarg, NULL, 10);
        else return 64;
    }
    if (argc - optind < 2 || !variant_of(argv[optind + 1])) {
        fprintf(stderr, "usage: producer [-w SECS] [-u] [-z MIN] PATH int|int32|int16|str ITEM...\n");
        return 64;
    }
    uint32_t variant = (uint32_t)variant_of(argv[optind + 1]);

    DqsError err;
    /* capacity 1024, default arena, mode 0600 for a new file */
    DqsQueue *q = dqs_open_path(argv[optind], variant, 1024, 0, 0600, &err);
    if (!q) {
        fprintf(stderr, "producer: %s\n", err.msg);
        return 1;
    }

    /* Compressed items are stored as zstd frames; every reader decodes them. */
    if (zmin && dqs_str_set_compress(q, zmin, 3, &err) < 0) {
        fprintf(stderr, "producer: %s\n", err.msg);
        dqs_close(q);
        return 1;
    }

    int rc = 0;
    for (int i = optind + 2; i < argc && rc == 0; i++) {
        const char *item = argv[i];
        /* One deadline per item; a signal (DQS_INTERRUPTED) retries with it. */
        DqsDeadline d = dqs_deadline(wait < 0 ? 0 : wait);
        int st;
        do {
            if (variant == DQS_STR) {
                st = wait < 0
                    ? dqs_str_push(q, (const uint8_t *)item, strlen(item), utf8, 0, &err)
                    : dqs_str_push_wait(q, (const uint8_t *)item, strlen(item), utf8, 0, &d, &err);
            } else {
                char *end;
                errno = 0;
                long long v = strtoll(item, &end, 10);
                if (errno || *end || end == item) {
                    fprintf(stderr, "producer: not an integer: %s\n", item);
                    rc = 64;
                    break;
                }
                st = wait < 0 ? dqs_int_push(q, v) : dqs_int_push_wait(q, v, &d);
            }
        } while (st == DQS_INTERRUPTED);
        if (rc) break;
        if (st == DQS_ERROR) {
            fprintf(stderr, "producer: %s\n", err.msg);
            rc = 1;
        } else if (st == DQS_NONE) {
            fprintf(stderr, "producer: %s at item %s\n",
                    wait < 0 ? "queue full" : "timed out", item);
            rc = wait < 0 ? 1 : 2;
        }
    }
    dqs_close(q);
    return rc;
}
