/* choice.h: the registry of kernel choices a plan group can ask for (the
 * ids stored in fe_group.kernel; 0 = auto). A choice names a way to run a
 * group, as Inductor's MultiTemplateBuffer keeps several choices per op
 * (seed 001): the executor tries the requested one and, when it cannot take
 * the group, says so and runs the members one by one.
 */
#ifndef FE_CHOICE_H
#define FE_CHOICE_H

enum {
    FE_K_CHOICE_AUTO = 0,       /* pick the best applicable choice */
    FE_K_CHOICE_FUSED = 1,      /* fused tile executor ("fused_rows") */
    FE_K_CHOICE_MATMUL_BLOCKED = 2, /* packed blocked GEMM, takes prologue + epilogue */
    FE_K_CHOICE_MATMUL_BLAS = 3,    /* OpenBLAS sgemm; epilogue as a separate pass */
    FE_K_CHOICE_PER_OP = 4,     /* every member with its reference kernel */
    FE_K_CHOICE_ONEDNN = 5,     /* oneDNN conv/matmul, the epilogue as post-ops */
    FE_K_NCHOICES
};

typedef struct fe_k_choice {
    int id;
    const char *name;
    int takes_epilogue;         /* fuses an elementwise chain after the anchor op */
    int gemm;                   /* a GEMM: runs groups around one matmul or conv2d only */
    const char *desc;
} fe_k_choice;

/* The entry for id, or NULL if out of range. Static storage. */
const fe_k_choice *fe_k_choice_get(int id);
/* The name of id, or "auto" (choice 0's) for an id out of range. Static
 * storage. */
const char *fe_k_choice_name(int id);
/* Id of a name ("matmul_blas"), or -1. */
int fe_k_choice_find(const char *name);
/* Every name in id order, ", "-separated ("auto, fused_rows, ...") for
 * messages; static storage, built from the table on first use. */
const char *fe_k_choice_names(void);

#endif
