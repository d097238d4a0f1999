/* compare.h: numeric comparison of a plan run against the unfused
 * reference, output by output.
 *
 * Tolerance: an element passes when |got - ref| <= atol + rtol * |ref|, with
 * rtol set by the least precise float dtype on any path into the output
 * (f32 1e-4, f16 1e-2, bf16 5e-2: storage rounding of intermediates,
 * reassociated sums and vectorised math) and atol = rtol * rms(ref), so
 * that elements far below the output's scale (the tails of a softmax,
 * cancellations) are judged against the scale. NaN equals NaN, infinities
 * must match in sign, integer and bool outputs must match exactly.
 *
 * Another device's results (the GPU's: its own exp, erf and summation
 * orders) may also have an absolute floor under atol (FE_CMP_DEVICE_ATOL,
 * torch.testing's default for floats): an output that cancels to rounding
 * noise (the sum of a normalised row) is noise on both devices, and two
 * noises agree only to their size.
 */
#ifndef FE_COMPARE_H
#define FE_COMPARE_H

#include <stdint.h>

#include "error.h"
#include "exec.h"

typedef struct fe_cmp_item {
    int32_t tensor;
    double max_abs;            /* max |got - ref| over finite pairs */
    double max_rel;            /* max |got - ref| / (|ref| + rms(ref)); passes when <= rtol */
    double rtol, atol;
    int64_t bad;               /* elements outside tolerance (NaN/inf mismatches included) */
    int64_t worst;             /* index of the worst element */
    double worst_ref, worst_got;
    int ok;
} fe_cmp_item;

typedef struct fe_cmp {
    int n;
    fe_cmp_item *items;        /* one per graph output, owned */
    int ok;                    /* every output within tolerance */
} fe_cmp;

/* Compare two results of the same graph. Returns FE_OK (whether or not the
 * values agree: see cmp->ok), or FE_EINPUT / FE_ENOMEM. Free with
 * fe_cmp_free. */
int fe_exec_compare(const fe_graph *g, const fe_exec_result *ref, const fe_exec_result *got,
                    fe_cmp *cmp, fe_error *err);
void fe_cmp_free(fe_cmp *cmp);
/* The same with one relative tolerance rtol for every output (rtol < 0:
 * each output's default above). */
int fe_exec_compare_rtol(const fe_graph *g, const fe_exec_result *ref, const fe_exec_result *got,
                         double rtol, fe_cmp *cmp, fe_error *err);

#define FE_CMP_DEVICE_ATOL 1e-5
/* The same with atol at least atol_floor (0: none). */
int fe_exec_compare_floor(const fe_graph *g, const fe_exec_result *ref, const fe_exec_result *got,
                          double rtol, double atol_floor, fe_cmp *cmp, fe_error *err);

/* The relative tolerance for tensor t (see above). */
double fe_cmp_rtol(const fe_graph *g, int32_t t);

/* The relative tolerance for tensor t against another implementation's
 * values (run --execute --expect, PyTorch's outputs): at least 1e-3, since
 * another library sums in another order and uses other approximations of
 * exp, erf and tanh; fe_cmp_rtol where that is looser (f16, bf16 paths). */
double fe_cmp_rtol_expect(const fe_graph *g, int32_t t);

/* Compare two buffers of n elements of dtype dt with tolerance rtol
 * (atol derived as above) into item. */
void fe_cmp_buffers(const void *ref, const void *got, int dt, int64_t n, double rtol,
                    fe_cmp_item *item);

#endif
