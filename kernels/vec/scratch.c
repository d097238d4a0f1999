/* scratch.c: a small pool of reusable aligned buffers (see scratch.h).
 *
 * Each buffer carries its capacity in a 64-byte header, so put() needs only
 * the pointer. At most KEEP buffers are kept; the rest are freed. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "scratch.h"

#define KEEP 16
#define HDR 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *kept[KEEP];
static int nkept;

static size_t cap_of(void *p)
{
    return *(size_t *)((char *)p - HDR);
}

void *fe_k_scratch_get(size_t bytes)
{
    int best = -1;
    void *p = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nkept; i++) {
        size_t c = cap_of(kept[i]);
        if (c >= bytes && (best < 0 || c < cap_of(kept[best])))
            best = i;
    }
    if (best >= 0) {
        p = kept[best];
        kept[best] = kept[--nkept];
    }
    pthread_mutex_unlock(&lock);
    if (p)
        return p;
    void *raw = NULL;
    bytes = (bytes + 63) & ~(size_t)63;
    if (posix_memalign(&raw, 64, bytes + HDR))
        return NULL;
    *(size_t *)raw = bytes;
    return (char *)raw + HDR;
}

void fe_k_scratch_put(void *p)
{
    void *drop = NULL;
    if (!p)
        return;
    pthread_mutex_lock(&lock);
    if (nkept < KEEP) {
        kept[nkept++] = p;
    } else {
        /* keep the larger buffers: replace the smallest if p is bigger */
        int small = 0;
        for (int i = 1; i < nkept; i++)
            if (cap_of(kept[i]) < cap_of(kept[small]))
                small = i;
        if (cap_of(kept[small]) < cap_of(p)) {
            drop = kept[small];
            kept[small] = p;
        } else {
            drop = p;
        }
    }
    pthread_mutex_unlock(&lock);
    if (drop)
        free((char *)drop - HDR);
}

void fe_k_scratch_trim(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nkept; i++)
        free((char *)kept[i] - HDR);
    nkept = 0;
    pthread_mutex_unlock(&lock);
}

__attribute__((destructor)) static void scratch_fini(void)
{
    fe_k_scratch_trim();
}
