/* profile.c: profile files: reading (with InfiniCore's plain form), lookups
 * by exact and compat key, and writing (fuseeng profile). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "groupkey.h"
#include "infile.h"
#include "jsonw.h"
#include "ops.h"
#include "outfile.h"
#include "profile.h"
#include "strtab.h"

typedef struct table {
    fe_strtab *keys;     /* key -> dense id */
    double *ms;          /* id -> time */
    int32_t *text;       /* id -> meta.shapes text id in texts, or -1 */
    int32_t cap;
} table;

struct fe_profile {
    table t[2];          /* single, fused */
    fe_strtab *texts;
};

fe_profile *fe_profile_new(fe_error *err)
{
    fe_profile *p = calloc(1, sizeof *p);
    if (p) {
        p->t[0].keys = fe_strtab_new();
        p->t[1].keys = fe_strtab_new();
        p->texts = fe_strtab_new();
    }
    if (!p || !p->t[0].keys || !p->t[1].keys || !p->texts) {
        fe_profile_free(p);
        fe_error_set(err, FE_ENOMEM, "out of memory creating a profile");
        return NULL;
    }
    return p;
}

void fe_profile_free(fe_profile *p)
{
    if (!p)
        return;
    for (int i = 0; i < 2; i++) {
        fe_strtab_free(p->t[i].keys);
        free(p->t[i].ms);
        free(p->t[i].text);
    }
    fe_strtab_free(p->texts);
    free(p);
}

int fe_profile_add(fe_profile *p, int fused, const char *key, double ms, const char *text)
{
    table *t = &p->t[fused ? 1 : 0];
    int32_t id = fe_strtab_intern(t->keys, key, strlen(key));
    if (id < 0)
        return FE_ENOMEM;
    if (id >= t->cap) {
        int32_t cap = t->cap ? 2 * t->cap : 64;
        while (cap <= id)
            cap *= 2;
        double *ms2 = realloc(t->ms, (size_t)cap * sizeof *ms2);
        if (!ms2)
            return FE_ENOMEM;
        t->ms = ms2;
        int32_t *tx = realloc(t->text, (size_t)cap * sizeof *tx);
        if (!tx)
            return FE_ENOMEM;
        t->text = tx;
        t->cap = cap;
    }
    t->ms[id] = ms;
    t->text[id] = text ? fe_strtab_intern(p->texts, text, strlen(text)) : -1;
    return FE_OK;
}

int32_t fe_profile_count(const fe_profile *p, int fused)
{
    return fe_strtab_count(p->t[fused ? 1 : 0].keys);
}

static int get(const fe_profile *p, int fused, const char *key, double *ms)
{
    const table *t = &p->t[fused ? 1 : 0];
    int32_t id = fe_strtab_find(t->keys, key, strlen(key));
    if (id < 0)
        return 0;
    *ms = t->ms[id];
    return 1;
}

fe_profile *fe_profile_read(const char *path, fe_error *err)
{
    json_error_t je;
    size_t len;
    char *text = fe_infile_read(path, "the profile", FE_INFILE_MAX, &len, err);
    if (!text)
        return NULL;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!root) {
        fe_error_set(err, FE_EINPUT, "%s:%d:%d: %s", path, je.line, je.column, je.text);
        return NULL;
    }
    fe_profile *p = NULL;
    static const char *const sections[2] = {"single", "fused"};
    if (!json_is_object(root)) {
        fe_error_set(err, FE_EINPUT, "%s: a profile is a JSON object with \"single\" and \"fused\"",
                     path);
        goto out;
    }
    if (!json_object_get(root, "single") && !json_object_get(root, "fused")) {
        fe_error_set(err, FE_EINPUT, "%s: a profile needs \"single\" and/or \"fused\" times (ms)", path);
        goto out;
    }
    if (!(p = fe_profile_new(err)))
        goto out;
    json_t *shapes = json_object_get(json_object_get(root, "meta"), "shapes");
    for (int s = 0; s < 2; s++) {
        json_t *obj = json_object_get(root, sections[s]);
        const char *k;
        json_t *v;
        if (!obj)
            continue;
        if (!json_is_object(obj)) {
            fe_error_set(err, FE_EINPUT, "%s: \"%s\" must be an object of key: milliseconds", path,
                         sections[s]);
            goto fail;
        }
        json_object_foreach(obj, k, v) {
            double ms = json_is_number(v) ? json_number_value(v) : -1;
            if (!json_is_number(v) || !(ms >= 0)) {
                fe_error_set(err, FE_EINPUT, "%s: %s[\"%s\"] must be a time in ms (a number >= 0)",
                             path, sections[s], k);
                goto fail;
            }
            const char *text = json_string_value(json_object_get(shapes, k));
            if (fe_profile_add(p, s, k, ms, text) != FE_OK) {
                fe_error_set(err, FE_ENOMEM, "out of memory reading %s", path);
                goto fail;
            }
        }
    }
    goto out;
fail:
    fe_profile_free(p);
    p = NULL;
out:
    json_decref(root);
    return p;
}

void fe_profile_lookup_group(const fe_profile *p, const fe_graph *g, const int32_t *nodes, int n,
                             fe_profile_lookup *out)
{
    char key[17];
    memset(out, 0, sizeof *out);
    out->missing = -1;
    out->have_separate = 1;
    for (int i = 0; i < n; i++) {
        double ms;
        if ((fe_group_exact_key(g, &nodes[i], 1, key) == FE_OK && get(p, 0, key, &ms)) ||
            get(p, 0, fe_node_op_name(fe_graph_node(g, nodes[i])), &ms)) {
            out->separate_ms += ms;
        } else if (out->have_separate) {
            out->have_separate = 0;
            out->missing = nodes[i];
        }
    }
    if (fe_group_exact_key(g, nodes, n, key) == FE_OK && get(p, 1, key, &out->fused_ms)) {
        out->have_fused = out->fused_exact = 1;
        return;
    }
    char small[512];
    size_t need = fe_group_compat_key(g, nodes, n, small, sizeof small);
    char *compat = need < sizeof small ? small : malloc(need + 1);
    if (!compat)
        return;
    if (compat != small)
        fe_group_compat_key(g, nodes, n, compat, need + 1);
    out->have_fused = get(p, 1, compat, &out->fused_ms);
    if (compat != small)
        free(compat);
}

int fe_profile_write(const fe_profile *p, const char *path, const char *machine, fe_error *err)
{
    fe_outfile o;
    int rc = fe_outfile_open(&o, path, "the profile", err);
    if (rc != FE_OK)
        return rc;
    FILE *f = o.f;
    fe_jw w;
    static const char *const sections[2] = {"single", "fused"};
    fe_jw_init(&w, f, 1);
    fe_jw_obj(&w);
    for (int s = 0; s < 2; s++) {
        const table *t = &p->t[s];
        fe_jw_key(&w, sections[s]);
        fe_jw_obj(&w);
        for (int32_t id = 0; id < fe_strtab_count(t->keys); id++) {
            fe_jw_key(&w, fe_strtab_str(t->keys, id));
            fe_jw_num(&w, t->ms[id]);
        }
        fe_jw_end(&w);
    }
    fe_jw_key(&w, "meta");
    fe_jw_obj(&w);
    fe_jw_key(&w, "machine");
    fe_jw_str(&w, machine ? machine : "host");
    fe_jw_key(&w, "unit");
    fe_jw_str(&w, "ms");
    fe_jw_key(&w, "shapes");
    fe_jw_obj(&w);
    for (int s = 0; s < 2; s++) {
        const table *t = &p->t[s];
        for (int32_t id = 0; id < fe_strtab_count(t->keys); id++) {
            const char *key = fe_strtab_str(t->keys, id);
            if (t->text[id] < 0)
                continue;
            /* One "shapes" object serves both tables: a key in both (a file
             * can have it) gets the single one's text once, or the file
             * would not read back (duplicate keys are refused). */
            int32_t other = s ? fe_strtab_find(p->t[0].keys, key, strlen(key)) : -1;
            if (other >= 0 && p->t[0].text[other] >= 0)
                continue;
            fe_jw_key(&w, key);
            fe_jw_str(&w, fe_strtab_str(p->texts, t->text[id]));
        }
    }
    fe_jw_end(&w);
    fe_jw_end(&w);
    fe_jw_end(&w);
    return fe_outfile_commit(&o, err);
}
