/*
 * The concurrency layer's lookups without locks (src/modes/locked.h, a seqlock), checked on a
 * form made up here, whose writer steps in at chosen moments: a lookup reads the versions of its
 * keys' stripes and of the spare lines, looks the keys up, and reads them again. A key whose
 * stripe was written meanwhile (or was being written) is looked up again under its locks; a write
 * to the spare lines, which every stripe shares, sends every key of the group there. A key read
 * while nothing moved keeps its answer and takes no lock.
 *
 * The stress tests of test_concurrent.c meet these races by chance; here each is made to happen.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/modes/locked.h"
#include "check.h"
#include "simdbloom.h"

enum { KEYS = 20, LINES = 64 };

/* What the writer does while a group is read without locks. */
typedef enum {
    NOTHING,
    STRIPE_WRITTEN,       /* a write to one key's stripe began and ended */
    STRIPE_BEING_WRITTEN, /* one key's stripe was odd before the read (a writer at work) */
    SPARE_WRITTEN,        /* a write to the spare lines began and ended */
    SPARE_BEING_WRITTEN   /* the spare's version was odd before the read */
} writer_step;

typedef struct {
    sbloom_lock_table table; /* versioned: a lock word, then its version */
    writer_step step;
    uint64_t victim;    /* the key whose stripe the writer touches */
    unsigned locked;    /* keys answered under their locks */
    unsigned read_torn; /* the lookup without locks answers 0 for every key: a torn read */
} fake_form;

static uint64_t place(const void *ctx, uint64_t hash)
{
    (void)ctx;
    return hash % LINES;
}

static uint32_t *stripe(const void *ctx, uint64_t at)
{
    const fake_form *form = ctx;
    return form->table.words + 2 * (at % form->table.count);
}

static void prefetch(const void *ctx, uint64_t at, int prefetchw)
{
    (void)ctx, (void)at, (void)prefetchw;
}

static int reaches_spare(const void *ctx, uint64_t hash)
{
    (void)ctx, (void)hash;
    return 0;
}

/* every key of these tests is present: under its locks it is found */
static int one(const void *ctx, uint64_t hash)
{
    (void)hash;
    ((fake_form *)ctx)->locked++;
    return 1;
}

static void look_up(const void *ctx, const uint64_t *hashes, size_t m, uint8_t *found)
{
    fake_form *form = (fake_form *)ctx;
    for (size_t i = 0; i < m; i++)
        found[i] = !form->read_torn && hashes[i] < KEYS;
    uint32_t *victim = stripe(form, place(form, form->victim)) + 1;
    if (form->step == STRIPE_WRITTEN)
        *victim += 2;
    else if (form->step == SPARE_WRITTEN)
        form->table.spare_version += 2;
}

static sbloom_locked form_of(fake_form *form, unsigned *misses)
{
    return (sbloom_locked){.self = &form->table.self,
                           .spare = &form->table.spare,
                           .ctx = form,
                           .place = place,
                           .stripe = stripe,
                           .prefetch = prefetch,
                           .reaches_spare = reaches_spare,
                           .one = one,
                           .spare_version = &form->table.spare_version,
                           .look_up = look_up,
                           .misses = misses};
}

/* The form with the writer's step (key 4's stripe or the spare lines odd before the read where
 * the step says a writer is at work), over 16 stripes; and the keys 0 .. KEYS - 1 in hashes. */
static void form_init(fake_form *form, writer_step step, unsigned read_torn, uint64_t *hashes)
{
    *form = (fake_form){.step = step, .victim = 4, .read_torn = read_torn};
    sbloom_lock_table_init(&form->table);
    CHECK(sbloom_lock_table_alloc(&form->table, 16, 1) == SBLOOM_OK);
    if (step == STRIPE_BEING_WRITTEN)
        stripe(form, place(form, form->victim))[1] = 1;
    if (step == SPARE_BEING_WRITTEN)
        form->table.spare_version = 3;
    for (size_t i = 0; i < KEYS; i++)
        hashes[i] = i;
}

/* The keys 0 .. KEYS - 1 (each its own line, key 4 alone on the victim's stripe), looked up
 * once with the writer's step; the positions to look up again, in retry. */
static size_t checked_once(writer_step step, uint16_t *retry)
{
    fake_form form;
    uint64_t hashes[KEYS];
    form_init(&form, step, 0, hashes);
    unsigned misses = 0;
    sbloom_locked l = form_of(&form, &misses);
    uint8_t found[KEYS];
    size_t n = sbloom_checked_look_up(&l, hashes, KEYS, found, retry);
    sbloom_lock_table_release(&form.table);
    return n;
}

static void which_keys_are_looked_up_again(void)
{
    uint16_t retry[KEYS];
    CHECK(checked_once(NOTHING, retry) == 0);
    size_t n = checked_once(STRIPE_WRITTEN, retry);
    CHECK(n == 1 && retry[0] == 4);
    n = checked_once(STRIPE_BEING_WRITTEN, retry);
    CHECK(n == 1 && retry[0] == 4);
    for (writer_step step = SPARE_WRITTEN; step <= SPARE_BEING_WRITTEN; step++) {
        n = checked_once(step, retry);
        CHECK(n == KEYS);
        for (size_t i = 0; i < n && i < KEYS; i++)
            CHECK(retry[i] == i);
    }
}

/* A whole batch (sbloom_checked_run) whose read without locks is torn (every key read absent):
 * the keys the writer's step makes unsure are answered under their locks (found), the others keep
 * the torn answer (the form's writers never tear a read whose versions held: here they do, to
 * show which answers stand). */
static void torn_reads_are_answered_under_the_locks(const sbloom_t *f)
{
    static const struct {
        writer_step step;
        unsigned locked;
    } cases[] = {{NOTHING, 0},
                 {STRIPE_WRITTEN, 1},
                 {STRIPE_BEING_WRITTEN, 1},
                 {SPARE_WRITTEN, KEYS},
                 {SPARE_BEING_WRITTEN, KEYS}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        fake_form form;
        uint64_t hashes[KEYS];
        form_init(&form, cases[c].step, 1, hashes);
        unsigned misses = 0;
        sbloom_locked l = form_of(&form, &misses);
        uint8_t found[KEYS];
        memset(found, 0xee, sizeof found);
        uint64_t count = sbloom_checked_run(f, &l, SBLOOM_OP_CONTAINS, hashes, KEYS, found);
        CHECK(form.locked == cases[c].locked);
        CHECK(count == cases[c].locked);
        for (size_t i = 0; i < KEYS; i++)
            CHECK(found[i] == (cases[c].locked == KEYS || (cases[c].locked && i == 4)));
        CHECK(sbloom_lock_table_held(&form.table) == 0);
        sbloom_lock_table_release(&form.table);
    }
}

int main(void)
{
    which_keys_are_looked_up_again();
    sbloom_t *f = NULL; /* (the batch's filter: where a lock kept would be said) */
    CHECK(sbloom_create(&f, 1000, 0.01) == SBLOOM_OK);
    if (f)
        torn_reads_are_answered_under_the_locks(f);
    sbloom_free(f);
    return check_report();
}
