/* One binding-runtime record used from four threads at once (what Java, C# and Go do with one
 * Context): the record's lock must make the calls wait their turn, so none is refused with
 * TL_E_BUSY and none is wrong.  One thread runs long products, so the others sleep on the lock
 * as well as take it free.  Twice: first the record's owner (the thread that took it first, to
 * which it is biased) waits while the others revoke its bias; then the owner itself runs the
 * long products, so the bias is revoked while the owner is inside a call it entered biased.
 * Every other short call is Go's direct one (tlb_direct_binary), which never waits: it does the
 * add when the record is free, or nothing, and the ordinary call follows.
 * Built and run under ThreadSanitizer by the test command; also a plain ctest test. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <stdio.h>
#include <tensorlife/tl.h>

#include "tlb.h"
#include "usage.h"

enum { N = 256, LONG_CALLS = 30, SHORT_CALLS = 3000, SHORT_THREADS = 3 };

static uint64_t record, big, small;
static atomic_int owner_started; /* the second time: the short calls wait for the owner's first product */

static void *long_calls(void *failures) {
    for (int i = 0; i < LONG_CALLS; ++i) {
        if (i == 0) atomic_store(&owner_started, 1);
        const uint64_t y = tlb_matmul(record, big, big);
        float corner;
        if (!y || tlb_read_f32(record, y, &corner, 1) != TL_E_INVALID_ARGUMENT /* too small */ ||
            tlb_free(record, y) != TL_OK)
            ++*(long *)failures;
    }
    return NULL;
}

static void *short_calls(void *failures) {
    while (!atomic_load(&owner_started)) sched_yield();
    nanosleep(&(struct timespec){0, 200 * 1000}, NULL); /* the owner is then inside a call (calls are back to back) */
    for (int i = 0; i < SHORT_CALLS; ++i) {
        tlb_direct_call direct = {record, small, small, 0, TLB_DIRECT_add, 0};
        if (i % 2) tlb_direct_binary(&direct); /* every other add as Go makes it: direct, if free */
        const uint64_t y = direct.done ? direct.out : tlb_add(record, small, small);
        float v[4] = {0};
        if (!y || tlb_read_f32(record, y, v, 4) != TL_OK || v[3] != 2.0f || tlb_free(record, y) != TL_OK)
            ++*(long *)failures;
    }
    return NULL;
}

int main(int argc, char **argv) {
    no_arguments(argc, argv,
                 "usage: shared_record\nOne binding record from four threads: every call waits its turn, none is "
                 "refused or wrong.\n");
    long total = 0;
    for (int owner_runs_products = 0; owner_runs_products < 2; ++owner_runs_products) {
        record = tlb_context_new();
        int64_t sb[2] = {N, N}, ss[1] = {4};
        big = tlb_fill(record, TL_F32, sb, 2, 1, 0), small = tlb_fill(record, TL_F32, ss, 1, 1, 0);
        if (!record || !big || !small) return 1;
        pthread_t threads[1 + SHORT_THREADS];
        long failures[1 + SHORT_THREADS] = {0};
        atomic_store(&owner_started, !owner_runs_products);
        if (!owner_runs_products) pthread_create(&threads[0], NULL, long_calls, &failures[0]);
        for (int i = 1; i <= SHORT_THREADS; ++i) pthread_create(&threads[i], NULL, short_calls, &failures[i]);
        if (owner_runs_products) long_calls(&failures[0]);
        for (int i = owner_runs_products; i <= SHORT_THREADS; ++i) pthread_join(threads[i], NULL);
        for (int i = 0; i <= SHORT_THREADS; ++i) total += failures[i];
        if (total) {
            fprintf(stderr, "%ld calls refused or wrong; the last failure: %s\n", total, tlb_message(record));
            return 1;
        }
        tlb_context_release(record);
    }
    printf("shared record, twice: %d products and %d small adds from four threads, each waited its turn\n"
           "1 passed, 0 failed\n",
           LONG_CALLS, SHORT_THREADS * SHORT_CALLS);
    return 0;
}
