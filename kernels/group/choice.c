/* choice.c: the kernel choice registry (see choice.h): the one place that
 * spells the choices' names. Plan files, policies (fuseeng.core's
 * kernel_choices) and messages look them up here. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "choice.h"

static const fe_k_choice choices[FE_K_NCHOICES] = {
    {FE_K_CHOICE_AUTO, "auto", 1, 0,
     "best applicable: fused_rows for elementwise/reduction groups, matmul_blocked or "
     "onednn (measured per shape) for matmul/conv groups, per_op otherwise"},
    {FE_K_CHOICE_FUSED, "fused_rows", 1, 0,
     "fused tile executor: elementwise/broadcast ops and row reductions compiled into one "
     "program, run tile by tile with intermediates in cache"},
    {FE_K_CHOICE_MATMUL_BLOCKED, "matmul_blocked", 1, 1,
     "packed blocked GEMM (6x16 AVX2 micro-kernel) for matmul/conv2d; elementwise prologue "
     "while packing A, epilogue on each output block in cache"},
    {FE_K_CHOICE_MATMUL_BLAS, "matmul_blas", 0, 1,
     "OpenBLAS sgemm for matmul; cannot take epilogues: prologue and epilogue run as "
     "separate fused passes"},
    {FE_K_CHOICE_PER_OP, "per_op", 0, 0,
     "each member op with its reference kernel, intermediates materialised"},
    {FE_K_CHOICE_ONEDNN, "onednn", 1, 1,
     "oneDNN convolution or matmul (f32) with the epilogue as its post-ops (eltwise, binary, "
     "batch_norm as a per-channel multiply-add); takes no prologue"},
};

const fe_k_choice *fe_k_choice_get(int id)
{
    return id >= 0 && id < FE_K_NCHOICES ? &choices[id] : NULL;
}

const char *fe_k_choice_name(int id)
{
    return choices[id >= 0 && id < FE_K_NCHOICES ? id : FE_K_CHOICE_AUTO].name;
}

int fe_k_choice_find(const char *name)
{
    for (int i = 0; i < FE_K_NCHOICES; i++)
        if (!strcmp(choices[i].name, name))
            return i;
    return -1;
}

static char names[256];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void build_names(void)
{
    size_t at = 0;
    for (int i = 0; i < FE_K_NCHOICES && at < sizeof names; i++)
        at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "",
                               choices[i].name);
}

const char *fe_k_choice_names(void)
{
    pthread_once(&names_once, build_names);
    return names;
}
