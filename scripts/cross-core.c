/*
 * How long a cache line takes to go from one core to the other and back
 * (scripts/bench-lib.sh's cross_core_ns, which builds this with the
 * host's cc).  A traced hart and its encoding thread hand every record
 * over through such lines, so the two-thread rows of the benchmarks move
 * with it while one-thread rows do not: on the 2-core virtual machine
 * this project is measured on it has been seen at about 500 ns.
 *
 * Two threads, pinned to CPUs 0 and 1, take turns at one counter; the
 * figure is the median of 7 runs of 200,000 round trips, in ns.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUND_TRIPS 200000
#define RUNS        7

static _Alignas(64) atomic_long turn;

static void pin(pthread_t thread, int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(thread, sizeof(set), &set);
}

/* The second CPU's side: answer each odd value with the next even one */
static void *answer(void *arg)
{
    (void)arg;
    pin(pthread_self(), 1);
    for (long i = 1; i <= (long)ROUND_TRIPS * RUNS; i++) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i - 1) {
            /* spin: the line is the other core's until it answers */
        }
        atomic_store_explicit(&turn, 2 * i, memory_order_release);
    }
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int main(void)
{
    double ns[RUNS];
    pthread_t thread;
    long i = 0;

    pin(pthread_self(), 0);
    if (pthread_create(&thread, NULL, answer, NULL)) {
        perror("pthread_create");
        return 1;
    }
    for (int r = 0; r < RUNS; r++) {
        struct timespec t0, t1;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long end = i + ROUND_TRIPS; i < end; i++) {
            atomic_store_explicit(&turn, 2 * i + 1, memory_order_release);
            while (atomic_load_explicit(&turn, memory_order_acquire) !=
                   2 * i + 2) {
                /* spin */
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ns[r] = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
                ROUND_TRIPS;
    }
    pthread_join(thread, NULL);
    qsort(ns, RUNS, sizeof(ns[0]), by_value);
    printf("%.0f\n", ns[RUNS / 2]);
    return 0;
}
