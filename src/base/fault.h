/*
 * Fault points: the steps of a protocol that must survive a kill (a windowed file's rotation, the
 * lock waits of a shared file), where a test can have the process killed (SIGKILL) the k-th time
 * it passes one, instead of hoping that a timed kill lands there (as SQLite's tests fail each
 * I/O in turn). Unarmed, a point costs one relaxed load. Nothing here is installed.
 */
#ifndef SIMDBLOOM_FAULT_H
#define SIMDBLOOM_FAULT_H

typedef enum {
    SBLOOM_FAULT_ROTATION, /* a windowed filter's rotation: after each generation it cleared */
    SBLOOM_FAULT_LOCKED,   /* a lock word shared with other processes: just taken */
    SBLOOM_FAULT_POINTS
} sbloom_fault_site;

/* Kills the process (SIGKILL) when `site` is armed and this is the pass it was armed for. */
void sbloom_fault_point(sbloom_fault_site site);

/* Test hook (hidden: only programs linked with the static library reach it). Arms `site` by its
 * name ("rotation", "locked"): pass number k from now (0: the next) kills the process; k < 0
 * disarms every site. Returns 0, or -1 for a name no site has. */
int sbloom_test_fault_arm(const char *site, long k);

#endif
