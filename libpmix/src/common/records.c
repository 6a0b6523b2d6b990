/*
 * records.c: construct/destruct/create/free for the request records that
 * carry their own info arrays: lookup data (pmix_pdata_t), applications
 * (pmix_app_t), queries (pmix_query_t) and registered attributes
 * (pmix_regattr_t).
 *
 * Each owns its strings, its argv-style arrays and its info array; destruct
 * frees all of them and leaves the record constructed.
 */
#include <stdlib.h>
#include <string.h>

#include "px_common.h"

/* ---- lookup data ---- */

void PMIx_Pdata_construct(pmix_pdata_t *p)
{
    px_elems_construct(p, 1, PMIX_PDATA);
}

void PMIx_Pdata_destruct(pmix_pdata_t *p)
{
    if (p != NULL) {
        PMIx_Value_destruct(&p->value);
        PMIx_Pdata_construct(p);
    }
}

pmix_pdata_t *PMIx_Pdata_create(size_t n)
{
    return px_elems_alloc(n, PMIX_PDATA);
}

void PMIx_Pdata_release(pmix_pdata_t *p)
{
    px_elems_free(p, 1, PMIX_PDATA);
}

void PMIx_Pdata_free(pmix_pdata_t *p, size_t n)
{
    px_elems_free(p, n, PMIX_PDATA);
}

void PMIx_Pdata_load(pmix_pdata_t *dest, const pmix_proc_t *p, const char *key, const void *data,
                     pmix_data_type_t type)
{
    if (dest == NULL) {
        return;
    }
    PMIx_Pdata_construct(dest);
    if (p != NULL) {
        PMIx_Xfer_procid(&dest->proc, p);
    }
    PMIx_Load_key(dest->key, key);
    (void)PMIx_Value_load(&dest->value, data, type);
}

void PMIx_Pdata_xfer(pmix_pdata_t *dest, const pmix_pdata_t *src)
{
    if (dest == NULL || src == NULL) {
        return;
    }
    PMIx_Pdata_construct(dest);
    (void)px_elems_copy(dest, src, 1, PMIX_PDATA);
}

/* ---- applications ---- */

void PMIx_App_construct(pmix_app_t *p)
{
    if (p != NULL) {
        memset(p, 0, sizeof(*p));
    }
}

void PMIx_App_destruct(pmix_app_t *p)
{
    if (p == NULL) {
        return;
    }
    free(p->cmd);
    PMIx_Argv_free(p->argv);
    PMIx_Argv_free(p->env);
    free(p->cwd);
    PMIx_Info_free(p->info, p->ninfo);
    PMIx_App_construct(p);
}

pmix_app_t *PMIx_App_create(size_t n)
{
    return px_elems_alloc(n, PMIX_APP);
}

void PMIx_App_info_create(pmix_app_t *p, size_t n)
{
    if (p == NULL) {
        return;
    }
    PMIx_Info_free(p->info, p->ninfo);
    p->info = PMIx_Info_create(n);
    p->ninfo = p->info != NULL ? n : 0;
}

void PMIx_App_release(pmix_app_t *p)
{
    px_elems_free(p, 1, PMIX_APP);
}

void PMIx_App_free(pmix_app_t *p, size_t n)
{
    px_elems_free(p, n, PMIX_APP);
}

/* ---- queries ---- */

void PMIx_Query_construct(pmix_query_t *p)
{
    if (p != NULL) {
        memset(p, 0, sizeof(*p));
    }
}

void PMIx_Query_destruct(pmix_query_t *p)
{
    if (p == NULL) {
        return;
    }
    PMIx_Argv_free(p->keys);
    PMIx_Info_free(p->qualifiers, p->nqual);
    PMIx_Query_construct(p);
}

pmix_query_t *PMIx_Query_create(size_t n)
{
    return px_elems_alloc(n, PMIX_QUERY);
}

void PMIx_Query_qualifiers_create(pmix_query_t *p, size_t n)
{
    if (p == NULL) {
        return;
    }
    PMIx_Info_free(p->qualifiers, p->nqual);
    p->qualifiers = PMIx_Info_create(n);
    p->nqual = p->qualifiers != NULL ? n : 0;
}

void PMIx_Query_release(pmix_query_t *p)
{
    px_elems_free(p, 1, PMIX_QUERY);
}

void PMIx_Query_free(pmix_query_t *p, size_t n)
{
    px_elems_free(p, n, PMIX_QUERY);
}

/* ---- registered attributes ---- */

void PMIx_Regattr_construct(pmix_regattr_t *p)
{
    if (p != NULL) {
        memset(p, 0, sizeof(*p));
        p->type = PMIX_UNDEF;
    }
}

void PMIx_Regattr_destruct(pmix_regattr_t *p)
{
    if (p != NULL) {
        free(p->name);
        PMIx_Argv_free(p->description);
        PMIx_Regattr_construct(p);
    }
}

pmix_regattr_t *PMIx_Regattr_create(size_t n)
{
    return px_elems_alloc(n, PMIX_REGATTR);
}

void PMIx_Regattr_free(pmix_regattr_t *p, size_t n)
{
    px_elems_free(p, n, PMIX_REGATTR);
}

void PMIx_Regattr_load(pmix_regattr_t *p, const char *name, const char *key, pmix_data_type_t type,
                       const char *description)
{
    if (p == NULL) {
        return;
    }
    PMIx_Regattr_construct(p);
    if (name != NULL) {
        p->name = strdup(name);
    }
    PMIx_Load_key(p->string, key);
    p->type = type;
    if (description != NULL) {
        (void)PMIx_Argv_append_nosize(&p->description, description);
    }
}

void PMIx_Regattr_xfer(pmix_regattr_t *dest, const pmix_regattr_t *src)
{
    if (dest == NULL || src == NULL) {
        return;
    }
    PMIx_Regattr_construct(dest);
    (void)px_elems_copy(dest, src, 1, PMIX_REGATTR);
}
