/*
 * proc.c: keys, namespaces, ranks and process identifiers.
 *
 * Keys and namespaces are fixed-size char arrays; loads always terminate
 * them and truncate what does not fit. The checks implement the Standard's
 * matching rules: PMIX_RANK_WILDCARD matches any rank, and an empty
 * (invalid) namespace matches any namespace. px_proc_eq is the exact form.
 */
#include <stdlib.h>
#include <string.h>

#include "px_common.h"

/* Copies at most cap-1 characters of src into dst and terminates it; the
 * rest of dst is zeroed so fixed arrays compare and hash predictably. */
static void load_fixed(char *dst, size_t cap, const char *src)
{
    memset(dst, 0, cap);
    if (src != NULL) {
        size_t n = strnlen(src, cap - 1);
        memcpy(dst, src, n);
    }
}

void PMIx_Load_key(pmix_key_t key, const char *src)
{
    if (key != NULL && key != src) {
        load_fixed(key, PMIX_MAX_KEYLEN + 1, src);
    }
}

bool PMIx_Check_key(const char *key, const char *str)
{
    if (key == NULL || str == NULL) {
        return false;
    }
    return strncmp(key, str, PMIX_MAX_KEYLEN) == 0;
}

bool PMIx_Check_reserved_key(const char *key)
{
    return key != NULL && strncmp(key, "pmix", 4) == 0;
}

void PMIx_Load_nspace(pmix_nspace_t nspace, const char *str)
{
    if (nspace != NULL && nspace != str) {
        load_fixed(nspace, PMIX_MAX_NSLEN + 1, str);
    }
}

bool PMIx_Nspace_invalid(const char *nspace)
{
    return nspace == NULL || nspace[0] == '\0';
}

bool PMIx_Check_nspace(const char *a, const char *b)
{
    if (PMIx_Nspace_invalid(a) || PMIx_Nspace_invalid(b)) {
        return true;
    }
    return strncmp(a, b, PMIX_MAX_NSLEN) == 0;
}

bool PMIx_Check_rank(pmix_rank_t a, pmix_rank_t b)
{
    return a == b || a == PMIX_RANK_WILDCARD || b == PMIX_RANK_WILDCARD;
}

bool PMIx_Rank_valid(pmix_rank_t a)
{
    return a < PMIX_RANK_VALID;
}

void PMIx_Load_procid(pmix_proc_t *p, const char *nspace, pmix_rank_t rank)
{
    if (p != NULL) {
        PMIx_Load_nspace(p->nspace, nspace);
        p->rank = rank;
    }
}

void PMIx_Xfer_procid(pmix_proc_t *dst, const pmix_proc_t *src)
{
    if (dst != NULL && src != NULL && dst != src) {
        PMIx_Load_nspace(dst->nspace, src->nspace);
        dst->rank = src->rank;
    }
}

bool PMIx_Check_procid(const pmix_proc_t *a, const pmix_proc_t *b)
{
    if (a == NULL || b == NULL) {
        return false;
    }
    return PMIx_Check_nspace(a->nspace, b->nspace) && PMIx_Check_rank(a->rank, b->rank);
}

bool PMIx_Procid_invalid(const pmix_proc_t *p)
{
    return p == NULL || PMIx_Nspace_invalid(p->nspace) || p->rank == PMIX_RANK_INVALID;
}

bool px_proc_eq(const pmix_proc_t *a, const pmix_proc_t *b)
{
    if (a == NULL || b == NULL) {
        return a == b;
    }
    return a->rank == b->rank && strncmp(a->nspace, b->nspace, PMIX_MAX_NSLEN) == 0;
}

void PMIx_Multicluster_nspace_construct(pmix_nspace_t target, const char *cluster,
                                        const char *nspace)
{
    if (target == NULL) {
        return;
    }
    pmix_nspace_t tmp;
    size_t nc = cluster != NULL ? strnlen(cluster, PMIX_MAX_NSLEN) : 0;
    size_t nn = nspace != NULL ? strnlen(nspace, PMIX_MAX_NSLEN) : 0;
    memset(tmp, 0, sizeof(tmp));
    if (nc > PMIX_MAX_NSLEN - 1) {
        nc = PMIX_MAX_NSLEN - 1;
    }
    if (nc > 0) {
        memcpy(tmp, cluster, nc);
    }
    tmp[nc] = ':';
    if (nn > PMIX_MAX_NSLEN - nc - 1) {
        nn = PMIX_MAX_NSLEN - nc - 1;
    }
    if (nn > 0) {
        memcpy(tmp + nc + 1, nspace, nn);
    }
    memcpy(target, tmp, sizeof(tmp));
}

void PMIx_Multicluster_nspace_parse(const char *target, pmix_nspace_t cluster, pmix_nspace_t nspace)
{
    if (target == NULL) {
        return;
    }
    pmix_nspace_t tmp;
    PMIx_Load_nspace(tmp, target);
    char *colon = strchr(tmp, ':');
    if (colon == NULL) {
        /* No cluster part: the whole string is the namespace. */
        if (cluster != NULL) {
            PMIx_Load_nspace(cluster, NULL);
        }
        if (nspace != NULL) {
            PMIx_Load_nspace(nspace, tmp);
        }
        return;
    }
    *colon = '\0';
    if (cluster != NULL) {
        PMIx_Load_nspace(cluster, tmp);
    }
    if (nspace != NULL) {
        PMIx_Load_nspace(nspace, colon + 1);
    }
}

void PMIx_Proc_construct(pmix_proc_t *p)
{
    if (p != NULL) {
        memset(p, 0, sizeof(*p));
        p->rank = PMIX_RANK_UNDEF;
    }
}

void PMIx_Proc_destruct(pmix_proc_t *p)
{
    PMIx_Proc_construct(p);
}

pmix_proc_t *PMIx_Proc_create(size_t n)
{
    if (n == 0) {
        return NULL;
    }
    pmix_proc_t *p = calloc(n, sizeof(*p));
    if (p != NULL) {
        px_elems_construct(p, n, PMIX_PROC);
    }
    return p;
}

void PMIx_Proc_free(pmix_proc_t *p, size_t n)
{
    (void)n;
    free(p);
}

void PMIx_Proc_info_construct(pmix_proc_info_t *p)
{
    px_elems_construct(p, 1, PMIX_PROC_INFO);
}

void PMIx_Proc_info_destruct(pmix_proc_info_t *p)
{
    if (p != NULL) {
        free(p->hostname);
        free(p->executable_name);
        PMIx_Proc_info_construct(p);
    }
}

pmix_proc_info_t *PMIx_Proc_info_create(size_t n)
{
    if (n == 0) {
        return NULL;
    }
    pmix_proc_info_t *p = calloc(n, sizeof(*p));
    if (p != NULL) {
        px_elems_construct(p, n, PMIX_PROC_INFO);
    }
    return p;
}

void PMIx_Proc_info_free(pmix_proc_info_t *p, size_t n)
{
    if (p == NULL) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        PMIx_Proc_info_destruct(&p[i]);
    }
    free(p);
}
