/* Fault points (fault.h): a countdown per site, armed by a test. */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "fault.h"

static const char *const site_names[SBLOOM_FAULT_POINTS] = {"rotation", "locked"};
static atomic_long countdown[SBLOOM_FAULT_POINTS]; /* passes left before the kill, or -1 */
static atomic_int armed;

void sbloom_fault_point(sbloom_fault_site site)
{
    if (!atomic_load_explicit(&armed, memory_order_relaxed))
        return;
    long left = atomic_load(&countdown[site]);
    if (left < 0)
        return;
    if (atomic_fetch_sub(&countdown[site], 1) == 0)
        raise(SIGKILL);
}

int sbloom_test_fault_arm(const char *site, long k)
{
    int found = -1;
    for (int i = 0; i < SBLOOM_FAULT_POINTS; i++) {
        atomic_store(&countdown[i], -1);
        if (site && strcmp(site, site_names[i]) == 0)
            found = i;
    }
    atomic_store(&armed, 0);
    if (k < 0)
        return 0;
    if (found < 0)
        return -1;
    atomic_store(&countdown[found], k);
    atomic_store(&armed, 1);
    return 0;
}
