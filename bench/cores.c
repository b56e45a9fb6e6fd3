/*
 * simdbloom-bench-cores [--rounds N] [CPU_A CPU_B]: how long one cache line takes to go from one
 * CPU to another and back (default: the first two CPUs this process may run on).
 *
 * Two threads, one pinned to each CPU, pass a counter in one 64-byte line: A writes an odd value
 * and waits for the next even one, B waits for the odd one and writes the next even one. Each
 * round trip moves the line to B and back to A, so half a round trip is what a write by one CPU
 * costs the other's next read of that line. Every structure that two processes or threads write
 * (a `--shared` filter's lines, its lock words and claims table; the concurrent mode's lines)
 * pays this on each line the other side wrote last: two CPUs that share a cache answer in tens of
 * nanoseconds, two on different dies or sockets in hundreds, and the figure bounds what a second
 * writer can add (docs/notes/dedup.md). Prints the median of 5 runs of N round trips (default
 * 100,000).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 5

typedef struct {
    _Alignas(64) long counter; /* the line passed between the two CPUs */
    int cpu_b;
    long rounds;
    int pinned_b; /* 1 once B runs on its CPU, -1 if it could not be pinned */
} shared_line;

static int pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0 ? 0 : -1;
}

/* B: answers each odd value with the next even one, rounds times a run, RUNS runs. */
static void *answer(void *arg)
{
    shared_line *s = arg;
    __atomic_store_n(&s->pinned_b, pin_to(s->cpu_b) == 0 ? 1 : -1, __ATOMIC_RELEASE);
    for (long i = 0; i < s->rounds * RUNS; i++) {
        while (__atomic_load_n(&s->counter, __ATOMIC_ACQUIRE) != 2 * i + 1)
            ;
        __atomic_store_n(&s->counter, 2 * i + 2, __ATOMIC_RELEASE);
    }
    return NULL;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The first two CPUs of this process's affinity: 0, or -1 if it may run on fewer. */
static int first_two(int *a, int *b)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    int found = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++)
        if (CPU_ISSET(cpu, &set))
            *(found++ ? b : a) = cpu;
    return found == 2 ? 0 : -1;
}

int main(int argc, char **argv)
{
    static shared_line s;
    s.rounds = 100000;
    int arg = 1;
    if (argc >= 3 && strcmp(argv[1], "--rounds") == 0) {
        s.rounds = atol(argv[2]);
        arg = 3;
    }
    int cpu_a = 0;
    if (s.rounds < 1 || s.rounds > 100000000 || (argc - arg != 0 && argc - arg != 2)) {
        fprintf(stderr, "usage: simdbloom-bench-cores [--rounds N (1 to 1e8)] [CPU_A CPU_B]\n");
        return 2;
    }
    if (argc - arg == 2) {
        cpu_a = atoi(argv[arg]);
        s.cpu_b = atoi(argv[arg + 1]);
        if (cpu_a == s.cpu_b) { /* (each would spin until the scheduler let the other run) */
            fprintf(stderr, "simdbloom-bench-cores: two different CPUs, please\n");
            return 2;
        }
    } else if (first_two(&cpu_a, &s.cpu_b) != 0) {
        fprintf(stderr, "simdbloom-bench-cores: this process may run on fewer than two CPUs\n");
        return 1;
    }
    if (pin_to(cpu_a) != 0) {
        fprintf(stderr, "simdbloom-bench-cores: cannot run on CPU %d\n", cpu_a);
        return 1;
    }
    pthread_t b;
    if (pthread_create(&b, NULL, answer, &s) != 0) {
        fprintf(stderr, "simdbloom-bench-cores: cannot start a thread\n");
        return 1;
    }
    int pinned;
    while ((pinned = __atomic_load_n(&s.pinned_b, __ATOMIC_ACQUIRE)) == 0)
        ;
    if (pinned < 0) { /* B never answers: the counter stays odd; leave without waiting for it */
        fprintf(stderr, "simdbloom-bench-cores: cannot run on CPU %d\n", s.cpu_b);
        return 1;
    }
    double ns[RUNS];
    long i = 0;
    for (int run = 0; run < RUNS; run++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long end = i + s.rounds; i < end; i++) {
            __atomic_store_n(&s.counter, 2 * i + 1, __ATOMIC_RELEASE);
            while (__atomic_load_n(&s.counter, __ATOMIC_ACQUIRE) != 2 * i + 2)
                ;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ns[run] = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
                  (double)s.rounds;
    }
    pthread_join(b, NULL);
    qsort(ns, RUNS, sizeof ns[0], compare);
    printf("CPUs %d and %d: a cache line's round trip %.1f ns (median of %d runs of %ld; "
           "fastest %.1f, slowest %.1f), one way about %.0f ns\n",
           cpu_a, s.cpu_b, ns[RUNS / 2], RUNS, s.rounds, ns[0], ns[RUNS - 1], ns[RUNS / 2] / 2);
    return 0;
}
