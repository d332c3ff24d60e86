/*
 * Pop items from a shared queue file through the C API and print one line
 * per item: integers in decimal, strings as "utf8 HEX" or "bytes HEX" (the
 * UTF-8 flag, then the bytes in hex).
 *
 *   consumer [-w SECS] PATH int|int32|int16|str COUNT
 *
 * Creates the queue file (1024 slots) when it is missing. Without -w an
 * empty queue ends the run early (exit 1); with -w each pop waits up to
 * SECS seconds for an item (exit 2 on timeout).
 *
 * Build against the static library (cargo build --release):
 *   cc -Iinclude examples/c/consumer.c target/release/libdata_queue_shared.a \
 *      -lpthread -ldl -lm -o consumer
 */
#include <inttypes.h>
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
    int opt;
    while ((opt = getopt(argc, argv, "w:")) != -1) {
        if (opt == 'w') wait = strtod(optarg, NULL);
        else return 64;
    }
    if (argc - optind != 3 || !variant_of(argv[optind + 1])) {
        fprintf(stderr, "usage: consumer [-w SECS] PATH int|int32|int16|str COUNT\n");
        return 64;
    }
    uint32_t variant = (uint32_t)variant_of(argv[optind + 1]);
    long count = strtol(argv[optind + 2], NULL, 10);

    DqsError err;
    DqsQueue *q = dqs_open_path(argv[optind], variant, 1024, 0, 0600, &err);
    if (!q) {
        fprintf(stderr, "consumer: %s\n", err.msg);
        return 1;
    }

    int rc = 0;
    for (long got = 0; got < count; got++) {
        DqsDeadline d = dqs_deadline(wait < 0 ? 0 : wait);
        int64_t v = 0;
        DqsStrItem s; /* points into the handle's buffer until the next Str call */
        int st;
        do {
            if (variant == DQS_STR)
                st = wait < 0 ? dqs_str_pop(q, 0, 0, &s) : dqs_str_pop_wait(q, 0, &d, &s);
            else
                st = wait < 0 ? dqs_int_pop(q, &v) : dqs_int_pop_wait(q, &v, &d);
        } while (st == DQS_INTERRUPTED);
        if (st == DQS_ERROR) {
            /* a compressed item that could not be decoded (it is gone) */
            dqs_str_error(q, &err);
            fprintf(stderr, "consumer: %s after %ld items\n", err.msg, got);
            rc = 3;
            break;
        }
        if (st != DQS_DONE) {
            fprintf(stderr, "consumer: %s after %ld items\n",
                    wait < 0 ? "queue empty" : "timed out", got);
            rc = wait < 0 ? 1 : 2;
            break;
        }
        if (variant == DQS_STR) {
            fputs(s.utf8 ? "utf8 " : "bytes ", stdout);
            for (size_t i = 0; i < s.len; i++)
                printf("%02x", s.ptr[i]);
            putchar('\n');
        } else {
            printf("%" PRId64 "\n", v);
        }
    }
    fflush(stdout);
    dqs_close(q);
    return rc;
}
