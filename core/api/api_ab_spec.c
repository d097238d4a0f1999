/* api_ab_spec.c: the columns of an A/B suite: a policy spec
 * ("NAME", "NAME{K=V,K=V}", "HOW(SPEC,SPEC,...)") or a suite file's policy
 * object ({"policy", "params", "name"} or {"combine", "of", "name"}) loaded
 * into a policy, with messages naming the source and the JSON path; and
 * the small JSON checks the suite reader shares. */
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "api_ab.h"

int fe_ab_fail(fe_error *err, const char *src, const char *where, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fe_error_set(err, FE_EINPUT, "%s: %s: %s", src, where, msg);
}

/* Set "K=V,K=V" (text of len n) in p. */
static int set_params(fe_policy *p, const char *src, const char *where, const char *text, size_t n,
                      fe_error *err)
{
    char buf[1024];
    if (n >= sizeof buf)
        return fe_ab_fail(err, src, where, "%s: parameters too long", text);
    memcpy(buf, text, n);
    buf[n] = 0;
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq || eq == kv)
            return fe_ab_fail(err, src, where, "'%s' is not KEY=VALUE", kv);
        *eq = 0;
        if (fe_policy_set_param(p, kv, eq + 1, err) != FE_OK) {
            fe_error_prefix(err, "%s: %s: ", src, where);
            return err ? err->code : FE_EINPUT;
        }
    }
    return FE_OK;
}

/* HOW(A,B(C,D),E{k=v}): split the inside at top-level commas. */
static fe_policy *load_combination(fe_engine *e, const char *src, const char *where, const char *spec,
                                   const char *open, fe_error *err)
{
    char how[16], parts[16][512];
    int n = 0, depth = 0;
    size_t len = strlen(spec), start = (size_t)(open - spec) + 1;
    if ((size_t)(open - spec) >= sizeof how || spec[len - 1] != ')') {
        fe_ab_fail(err, src, where, "'%s': a combination is HOW(SPEC,SPEC,...)", spec);
        return NULL;
    }
    snprintf(how, sizeof how, "%.*s", (int)(open - spec), spec);
    for (size_t i = start; i < len; i++) {
        char c = spec[i];
        depth += (c == '(' || c == '{') - (c == ')' || c == '}');
        if ((c == ',' && depth == 0) || (i == len - 1)) {
            if (n == 16 || i - start >= sizeof parts[0] || i == start) {
                fe_ab_fail(err, src, where, "'%s': 1 to 16 non-empty policies in a combination", spec);
                return NULL;
            }
            snprintf(parts[n++], sizeof parts[0], "%.*s", (int)(i - start), spec + start);
            start = i + 1;
        }
    }
    fe_policy *ps[16] = {0}, *out = NULL;
    int ok = 1;
    for (int i = 0; i < n && ok; i++)
        ok = (ps[i] = fe_ab_load_spec(e, src, where, parts[i], err)) != NULL;
    if (ok && !(out = fe_engine_combine(e, how, ps, n, err)))
        fe_error_prefix(err, "%s: %s: ", src, where);
    for (int i = 0; i < n; i++)
        fe_policy_free(ps[i]);
    return out;
}

fe_policy *fe_ab_load_spec(fe_engine *e, const char *src, const char *where, const char *spec,
                            fe_error *err)
{
    const char *brace = strchr(spec, '{'), *paren = strchr(spec, '(');
    size_t len = strlen(spec);
    if (len == 0 || len >= 1024) {
        fe_ab_fail(err, src, where, "%s", "a policy is a name, a file, NAME{K=V,...} or HOW(A,B,...)");
        return NULL;
    }
    if (paren && (!brace || paren < brace))
        return load_combination(e, src, where, spec, paren, err);
    char name[1024];
    snprintf(name, sizeof name, "%.*s", brace ? (int)(brace - spec) : (int)len, spec);
    if (brace && spec[len - 1] != '}') {
        fe_ab_fail(err, src, where, "'%s': parameters are NAME{K=V,K=V}", spec);
        return NULL;
    }
    fe_policy *p = fe_engine_load_policy(e, name, err);
    if (!p) {
        fe_error_prefix(err, "%s: %s: ", src, where);
        return NULL;
    }
    if (brace && set_params(p, src, where, brace + 1, len - (size_t)(brace - spec) - 2, err) != FE_OK) {
        fe_policy_free(p);
        return NULL;
    }
    return p;
}

/* A JSON scalar as parameter text. */
int fe_ab_scalar_text(const json_t *v, char *buf, size_t size)
{
    if (json_is_string(v))
        snprintf(buf, size, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, size, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, size, "%.17g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, size, "%s", json_is_true(v) ? "true" : "false");
    else
        return -1;
    return 0;
}

int fe_ab_only_keys(const json_t *o, const char *const *keys, const char *src, const char *where,
                     fe_error *err)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        int known = 0;
        for (int i = 0; keys[i]; i++)
            known |= strcmp(k, keys[i]) == 0;
        if (!known) {
            char w[256];
            snprintf(w, sizeof w, "%s%s%s", where, where[0] ? "." : "", k);
            char allowed[256] = "";
            for (int i = 0; keys[i]; i++)
                snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s",
                         i ? ", " : "", keys[i]);
            return fe_ab_fail(err, src, w, "unknown key (known: %s)", allowed);
        }
    }
    return FE_OK;
}

/* A policy entry: a spec string, {"policy", "params", "name"} or
 * {"combine", "of", "name"}. The name, if given, goes to *name. */
fe_policy *fe_ab_load_entry(fe_engine *e, const char *src, const char *where, const json_t *v,
                             char *name, size_t nsize, fe_error *err)
{
    if (json_is_string(v))
        return fe_ab_load_spec(e, src, where, json_string_value(v), err);
    if (!json_is_object(v)) {
        fe_ab_fail(err, src, where, "%s", "a policy is a string or an object {\"policy\": ...} or "
             "{\"combine\": HOW, \"of\": [...]}");
        return NULL;
    }
    static const char *const pkeys[] = {"policy", "params", "name", NULL};
    static const char *const ckeys[] = {"combine", "of", "name", NULL};
    const json_t *how = json_object_get(v, "combine"), *nm = json_object_get(v, "name");
    char w[256];
    if (nm && !json_is_string(nm)) {
        snprintf(w, sizeof w, "%s.name", where);
        fe_ab_fail(err, src, w, "%s", "the column name is a string");
        return NULL;
    }
    if (nm && name)
        snprintf(name, nsize, "%s", json_string_value(nm));
    if (how) {
        const json_t *of = json_object_get(v, "of");
        if (fe_ab_only_keys(v, ckeys, src, where, err) != FE_OK)
            return NULL;
        if (!json_is_string(how) || !json_is_array(of) || json_array_size(of) < 1 ||
            json_array_size(of) > 16) {
            fe_ab_fail(err, src, where, "%s", "a combination is {\"combine\": \"all|any|chain|vote\", "
                 "\"of\": [1 to 16 policies]}");
            return NULL;
        }
        fe_policy *ps[16] = {0}, *out = NULL;
        size_t n = json_array_size(of);
        int ok = 1;
        for (size_t i = 0; i < n && ok; i++) {
            snprintf(w, sizeof w, "%s.of[%zu]", where, i);
            ok = (ps[i] = fe_ab_load_entry(e, src, w, json_array_get(of, i), NULL, 0, err)) != NULL;
        }
        if (ok && !(out = fe_engine_combine(e, json_string_value(how), ps, (int)n, err)))
            fe_error_prefix(err, "%s: %s.combine: ", src, where);
        for (size_t i = 0; i < n; i++)
            fe_policy_free(ps[i]);
        return out;
    }
    const json_t *pol = json_object_get(v, "policy"), *params = json_object_get(v, "params");
    if (fe_ab_only_keys(v, pkeys, src, where, err) != FE_OK)
        return NULL;
    if (!json_is_string(pol)) {
        snprintf(w, sizeof w, "%s.policy", where);
        fe_ab_fail(err, src, w, "%s", "missing or not a string: the policy's name or file");
        return NULL;
    }
    snprintf(w, sizeof w, "%s.policy", where);
    fe_policy *p = fe_ab_load_spec(e, src, w, json_string_value(pol), err);
    if (!p || !params)
        return p;
    if (!json_is_object(params)) {
        snprintf(w, sizeof w, "%s.params", where);
        fe_ab_fail(err, src, w, "%s", "an object {\"name\": value}");
        fe_policy_free(p);
        return NULL;
    }
    const char *k;
    json_t *pv;
    json_object_foreach((json_t *)params, k, pv) {
        char text[256];
        snprintf(w, sizeof w, "%s.params.%s", where, k);
        if (fe_ab_scalar_text(pv, text, sizeof text) != 0) {
            fe_ab_fail(err, src, w, "%s", "a parameter is a number, a string or a boolean");
            fe_policy_free(p);
            return NULL;
        }
        if (fe_policy_set_param(p, k, text, err) != FE_OK) {
            fe_error_prefix(err, "%s: %s: ", src, w);
            fe_policy_free(p);
            return NULL;
        }
    }
    return p;
}

