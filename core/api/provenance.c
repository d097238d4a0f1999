/* provenance.c: where a report came from (provenance.h). The commit is
 * compiled in by the Makefile (FE_COMMIT, "unknown" outside a git tree). */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda.h"
#include "fuseeng.h"
#include "fuseeng_cli.h"
#include "progress.h"
#include "provenance.h"

#ifndef FE_COMMIT
#define FE_COMMIT "unknown"
#endif

const char *fe_build_commit(void)
{
    return FE_COMMIT;
}

/* The first "model name" of /proc/cpuinfo, else the machine type. */
static void cpu_model(char *buf, size_t size)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    snprintf(buf, size, "unknown CPU");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) || !colon)
            continue;
        colon += 1 + (colon[1] == ' ');
        colon[strcspn(colon, "\n")] = 0;
        snprintf(buf, size, "%s", colon);
        break;
    }
    if (f)
        fclose(f);
}

void fe_prov_now(fe_prov *p, int gpu)
{
    memset(p, 0, sizeof *p);
    snprintf(p->version, sizeof p->version, "%s", fe_version());
    snprintf(p->commit, sizeof p->commit, "%s", FE_COMMIT);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(p->date, sizeof p->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cpu_model(p->cpu, sizeof p->cpu);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    p->cores = n > 0 ? (int)n : 1;
    const fe_cuda_dev *d = gpu ? fe_cuda_device() : NULL;
    if (d && d->name[0])
        snprintf(p->gpu, sizeof p->gpu, "%s", d->name);
}

void fe_prov_file_sha256(const char *path, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE], buf[1 << 16];
    unsigned len = 0;
    FILE *f = fopen(path, "rb");
    EVP_MD_CTX *c = f ? EVP_MD_CTX_new() : NULL;
    int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, f)) > 0)
        ok = EVP_DigestUpdate(c, buf, n);
    ok = ok && !ferror(f) && EVP_DigestFinal_ex(c, md, &len) && len == 32;
    EVP_MD_CTX_free(c);
    if (f)
        fclose(f);
    if (!ok) {
        snprintf(hex, 65, "unknown");
        return;
    }
    for (unsigned i = 0; i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

void fe_prov_json(const fe_prov *p, fe_jw *w)
{
    fe_jw_key(w, "fuseeng");
    fe_jw_str(w, p->version);
    fe_jw_key(w, "commit");
    fe_jw_str(w, p->commit);
    fe_jw_key(w, "command");
    fe_jw_str(w, p->command);
    fe_jw_key(w, "date");
    fe_jw_str(w, p->date);
    fe_jw_key(w, "cpu");
    fe_jw_str(w, p->cpu);
    fe_jw_key(w, "cores");
    fe_jw_int(w, p->cores);
    fe_jw_key(w, "gpu");
    if (p->gpu[0])
        fe_jw_str(w, p->gpu);
    else
        fe_jw_null(w);
}

void fe_prov_line(const fe_prov *p, char *buf, size_t size)
{
    snprintf(buf, size, "fuseeng %s (commit %s), %s, %s (%d core%s)%s%s", p->version, p->commit,
             p->date, p->cpu, p->cores, p->cores == 1 ? "" : "s", p->gpu[0] ? ", GPU " : "",
             p->gpu);
}

void fe_progress_set_quiet(int quiet)
{
    fe_progress_quiet(quiet);
}

void fe_progress_catch_ctrl_c(void)
{
    fe_progress_catch_interrupt();
}
