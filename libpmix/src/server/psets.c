/*
 * psets.c - process sets: the server's table of them, their definition and
 * deletion by the host, and the queries about them.
 *
 * A process set is a name and a list of processes. The table learns them
 * two ways:
 *
 *   - from the job data the host registers (px_server_register_nspace):
 *     every PMIX_APP_INFO_ARRAY with PMIX_PSET_NAME makes the app's
 *     processes a set (PMIX_PSET_MEMBERS if the array has it, else the
 *     ranks PMIX_APPLDR .. PMIX_APPLDR + PMIX_APP_SIZE - 1 of the
 *     namespace). Two apps with the same name make one set of both. Such
 *     sets go when the namespace is deregistered (or registered again);
 *     no event announces them: their processes learn them from their own
 *     job data (PMIX_PSET_NAMES) and from queries.
 *   - from px_server_define_process_set (the Standard's
 *     PMIx_server_define_process_set): a name defined again replaces the
 *     set, and px_server_delete_process_set removes it. Each raises
 *     PMIX_PROCESS_SET_DEFINE (PMIX_PSET_NAME, PMIX_PSET_MEMBERS) or
 *     PMIX_PROCESS_SET_DELETE (PMIX_PSET_NAME) to every connected client
 *     of this server, whatever its namespace, as the Standard says ("all
 *     local clients"), for the handlers registered for those codes: the
 *     events carry PMIX_EVENT_NON_DEFAULT, so default handlers do not see
 *     them (Open MPI 4.1's aborts on whatever reaches it). Keeping other
 *     servers' tables the same is the host's task (the Standard's advice
 *     to hosts).
 *
 * Queries (PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES and
 * PMIX_QUERY_PSET_MEMBERSHIP with a PMIX_PSET_NAME qualifier) come from
 * clients in a QUERY message and are answered from the table at once; the
 * host is never asked. The range is the server's: every set it knows,
 * whatever namespace asks. Types are those OpenPMIx and PRRTE give and Open
 * MPI reads: the count a PMIX_SIZE, the names one PMIX_STRING joined with
 * commas (empty when there is none), the members a PMIX_DATA_ARRAY of
 * PMIX_PROC.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "server_int.h"

struct px_pset {
    struct px_pset *next;
    char *name;
    /* The namespace whose job data defined it, or "" for a set the host
     * defined with px_server_define_process_set. */
    char origin[PMIX_MAX_NSLEN + 1];
    pmix_proc_t *members;
    size_t nmembers;
};

static void pset_free(px_pset *p)
{
    free(p->name);
    free(p->members);
    free(p);
}

static px_pset **pset_find(px_server *s, const char *name)
{
    px_pset **pp = &s->psets;

    while (*pp != NULL && strcmp((*pp)->name, name) != 0)
        pp = &(*pp)->next;
    return pp;
}

/* Append `p` at the end: queries list sets in the order they came. */
static void pset_append(px_server *s, px_pset *p)
{
    px_pset **pp = &s->psets;

    while (*pp != NULL)
        pp = &(*pp)->next;
    p->next = NULL;
    *pp = p;
}

static void pset_unlink(px_server *s, px_pset **pp)
{
    px_pset *p = *pp;

    *pp = p->next;
    pset_free(p);
}

void px_srv_psets_drop_nspace(px_server *s, const char *nspace)
{
    for (px_pset **pp = &s->psets; *pp != NULL;) {
        if ((*pp)->origin[0] != '\0' && strncmp((*pp)->origin, nspace, PMIX_MAX_NSLEN) == 0)
            pset_unlink(s, pp);
        else
            pp = &(*pp)->next;
    }
}

void px_srv_psets_destroy(px_server *s)
{
    while (s->psets != NULL)
        pset_unlink(s, &s->psets);
}

/* Add `n` members to `p`. PMIX_ERR_NOMEM leaves `p` as it was. */
static pmix_status_t pset_add(px_pset *p, const pmix_proc_t *m, size_t n)
{
    pmix_proc_t *v;

    if (n == 0)
        return PMIX_SUCCESS;
    v = realloc(p->members, (p->nmembers + n) * sizeof(*v));
    if (v == NULL)
        return PMIX_ERR_NOMEM;
    memcpy(&v[p->nmembers], m, n * sizeof(*v));
    p->members = v;
    p->nmembers += n;
    return PMIX_SUCCESS;
}

/* The members of one app array: PMIX_PSET_MEMBERS, else the app's ranks.
 * *out is malloc'd (NULL with *n 0 when the array names none). */
static pmix_status_t app_members(const char *nspace, const pmix_info_t *a, size_t na,
                                 pmix_proc_t **out, size_t *n)
{
    const pmix_info_t *mem = px_info_find(a, na, PMIX_PSET_MEMBERS);
    const pmix_info_t *ldr = px_info_find(a, na, PMIX_APPLDR);
    const pmix_info_t *sz = px_info_find(a, na, PMIX_APP_SIZE);
    uint64_t first, size;

    *out = NULL;
    *n = 0;
    if (mem != NULL) {
        const pmix_data_array_t *da = mem->value.data.darray;
        if (mem->value.type != PMIX_DATA_ARRAY || da == NULL || da->type != PMIX_PROC)
            return PMIX_ERR_BAD_PARAM;
        if (da->size == 0)
            return PMIX_SUCCESS;
        if ((*out = malloc(da->size * sizeof(**out))) == NULL)
            return PMIX_ERR_NOMEM;
        memcpy(*out, da->array, da->size * sizeof(**out));
        *n = da->size;
        return PMIX_SUCCESS;
    }
    if (ldr == NULL || sz == NULL || px_value_get_number(&ldr->value, &first) != PMIX_SUCCESS ||
        px_value_get_number(&sz->value, &size) != PMIX_SUCCESS || first >= PMIX_RANK_VALID ||
        size > PMIX_RANK_VALID - first)
        return PMIX_ERR_BAD_PARAM;
    if (size == 0)
        return PMIX_SUCCESS;
    if ((*out = malloc(size * sizeof(**out))) == NULL)
        return PMIX_ERR_NOMEM;
    for (uint64_t i = 0; i < size; i++)
        PMIx_Load_procid(&(*out)[i], nspace, (pmix_rank_t)(first + i));
    *n = (size_t)size;
    return PMIX_SUCCESS;
}

/* The sets one app array of `nspace` defines: at most one. */
static pmix_status_t register_app(px_server *s, const char *nspace, const pmix_info_t *a, size_t na)
{
    const char *name = px_info_string(a, na, PMIX_PSET_NAME);
    pmix_proc_t *m;
    size_t n;
    px_pset **pp, *p;
    pmix_status_t rc;

    if (name == NULL || name[0] == '\0')
        return PMIX_SUCCESS;
    if ((rc = app_members(nspace, a, na, &m, &n)) != PMIX_SUCCESS)
        return rc;
    pp = pset_find(s, name);
    if (*pp != NULL && strncmp((*pp)->origin, nspace, PMIX_MAX_NSLEN) == 0) {
        rc = pset_add(*pp, m, n); /* another app of the same set */
        free(m);
        return rc;
    }
    if ((p = calloc(1, sizeof(*p))) == NULL || (p->name = strdup(name)) == NULL) {
        free(p);
        free(m);
        return PMIX_ERR_NOMEM;
    }
    snprintf(p->origin, sizeof(p->origin), "%s", nspace);
    p->members = m;
    p->nmembers = n;
    if (*pp != NULL)
        pset_unlink(s, pp); /* the newer definition wins */
    pset_append(s, p);
    return PMIX_SUCCESS;
}

pmix_status_t px_srv_psets_register(px_server *s, const char *nspace, const pmix_info_t info[],
                                    size_t ninfo)
{
    pmix_status_t rc = PMIX_SUCCESS;

    px_srv_psets_drop_nspace(s, nspace);
    for (size_t i = 0; i < ninfo && rc == PMIX_SUCCESS; i++) {
        const pmix_data_array_t *da = info[i].value.data.darray;
        if (strncmp(info[i].key, PMIX_APP_INFO_ARRAY, PMIX_MAX_KEYLEN) != 0 ||
            info[i].value.type != PMIX_DATA_ARRAY || da == NULL || da->type != PMIX_INFO)
            continue;
        rc = register_app(s, nspace, da->array, da->size);
    }
    if (rc != PMIX_SUCCESS)
        px_srv_psets_drop_nspace(s, nspace); /* all or nothing */
    return rc;
}

/* ---- the host's definitions ---- */

pmix_status_t px_server_define_process_set(px_server *s, const pmix_proc_t *source,
                                           const char *name, const pmix_proc_t members[],
                                           size_t nmembers)
{
    px_pset *p, **pp;
    pmix_info_t ev[3];
    pmix_data_array_t da;

    if (name == NULL || name[0] == '\0' || source == NULL || (members == NULL && nmembers > 0))
        return PMIX_ERR_BAD_PARAM;
    if ((p = calloc(1, sizeof(*p))) == NULL || (p->name = strdup(name)) == NULL ||
        pset_add(p, members, nmembers) != PMIX_SUCCESS) {
        if (p != NULL)
            pset_free(p);
        return PMIX_ERR_NOMEM;
    }
    pp = pset_find(s, name);
    if (*pp != NULL)
        pset_unlink(s, pp); /* a redefinition replaces the set */
    pset_append(s, p);
    /* borrowed into the event's info: nothing here is freed by it */
    memset(ev, 0, sizeof(ev));
    PMIx_Load_key(ev[0].key, PMIX_PSET_NAME);
    ev[0].value.type = PMIX_STRING;
    ev[0].value.data.string = p->name;
    da.type = PMIX_PROC;
    da.size = p->nmembers;
    da.array = p->members;
    PMIx_Load_key(ev[1].key, PMIX_PSET_MEMBERS);
    ev[1].value.type = PMIX_DATA_ARRAY;
    ev[1].value.data.darray = &da;
    PMIx_Load_key(ev[2].key, PMIX_EVENT_NON_DEFAULT);
    ev[2].value.type = PMIX_BOOL;
    ev[2].value.data.flag = true;
    px_srv_event_to_clients(s, PMIX_PROCESS_SET_DEFINE, source, PMIX_RANGE_LOCAL, ev, 3, NULL);
    return PMIX_SUCCESS;
}

pmix_status_t px_server_delete_process_set(px_server *s, const pmix_proc_t *source,
                                           const char *name)
{
    px_pset **pp;
    pmix_info_t ev[2];

    if (name == NULL || source == NULL)
        return PMIX_ERR_BAD_PARAM;
    pp = pset_find(s, name);
    if (*pp == NULL)
        return PMIX_ERR_NOT_FOUND;
    pset_unlink(s, pp);
    memset(ev, 0, sizeof(ev));
    PMIx_Load_key(ev[0].key, PMIX_PSET_NAME);
    ev[0].value.type = PMIX_STRING;
    ev[0].value.data.string = (char *)name;
    PMIx_Load_key(ev[1].key, PMIX_EVENT_NON_DEFAULT);
    ev[1].value.type = PMIX_BOOL;
    ev[1].value.data.flag = true;
    px_srv_event_to_clients(s, PMIX_PROCESS_SET_DELETE, source, PMIX_RANGE_LOCAL, ev, 2, NULL);
    return PMIX_SUCCESS;
}

/* ---- PMIx_Get of a process's sets ---- */

pmix_status_t px_srv_pset_names(px_server *s, const pmix_proc_t *p, pmix_value_t *out)
{
    size_t len = 1, at = 0;
    char *all;
    pmix_status_t rc;

    for (px_pset *q = s->psets; q != NULL; q = q->next)
        for (size_t i = 0; i < q->nmembers; i++)
            if (PMIx_Check_procid(&q->members[i], p)) {
                len += strlen(q->name) + 1;
                break;
            }
    if (len == 1)
        return PMIX_ERR_NOT_FOUND;
    if ((all = malloc(len)) == NULL)
        return PMIX_ERR_NOMEM;
    for (px_pset *q = s->psets; q != NULL; q = q->next)
        for (size_t i = 0; i < q->nmembers; i++)
            if (PMIx_Check_procid(&q->members[i], p)) {
                at += (size_t)snprintf(all + at, len - at, "%s%s", at != 0 ? "," : "", q->name);
                break;
            }
    rc = PMIx_Value_load(out, all, PMIX_STRING);
    free(all);
    return rc;
}

/* ---- queries ---- */

bool px_query_key_is_pset(const char *key)
{
    return strcmp(key, PMIX_QUERY_NUM_PSETS) == 0 || strcmp(key, PMIX_QUERY_PSET_NAMES) == 0 ||
           strcmp(key, PMIX_QUERY_PSET_MEMBERSHIP) == 0;
}

/* Answer `key` with the query's qualifiers into `out` (constructed);
 * false if it cannot be answered. */
static bool answer(px_server *s, const char *key, const pmix_info_t *qual, size_t nqual,
                   pmix_info_t *out)
{
    if (strcmp(key, PMIX_QUERY_NUM_PSETS) == 0) {
        size_t n = 0;
        for (px_pset *p = s->psets; p != NULL; p = p->next)
            n++;
        return PMIx_Info_load(out, key, &n, PMIX_SIZE) == PMIX_SUCCESS;
    }
    if (strcmp(key, PMIX_QUERY_PSET_NAMES) == 0) {
        size_t len = 1, at = 0;
        char *all;
        bool ok;
        for (px_pset *p = s->psets; p != NULL; p = p->next)
            len += strlen(p->name) + 1;
        if ((all = malloc(len)) == NULL)
            return false;
        all[0] = '\0';
        for (px_pset *p = s->psets; p != NULL; p = p->next)
            at += (size_t)snprintf(all + at, len - at, "%s%s", at != 0 ? "," : "", p->name);
        ok = PMIx_Info_load(out, key, all, PMIX_STRING) == PMIX_SUCCESS;
        free(all);
        return ok;
    }
    if (strcmp(key, PMIX_QUERY_PSET_MEMBERSHIP) == 0) {
        const char *name = px_info_string(qual, nqual, PMIX_PSET_NAME);
        pmix_data_array_t da;
        px_pset *p;
        if (name == NULL || (p = *pset_find(s, name)) == NULL)
            return false;
        da.type = PMIX_PROC;
        da.size = p->nmembers;
        da.array = p->members;
        return PMIx_Info_load(out, key, &da, PMIX_DATA_ARRAY) == PMIX_SUCCESS;
    }
    return false;
}

pmix_status_t px_server_query_psets(px_server *s, const pmix_query_t queries[], size_t nqueries,
                                    pmix_info_t **info, size_t *ninfo)
{
    size_t nkeys = 0, n = 0;
    pmix_info_t *res;

    *info = NULL;
    *ninfo = 0;
    for (size_t q = 0; q < nqueries; q++)
        for (size_t k = 0; queries[q].keys != NULL && queries[q].keys[k] != NULL; k++)
            nkeys++;
    if (nkeys == 0)
        return PMIX_ERR_BAD_PARAM;
    if ((res = PMIx_Info_create(nkeys)) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t q = 0; q < nqueries; q++)
        for (size_t k = 0; queries[q].keys != NULL && queries[q].keys[k] != NULL; k++)
            if (answer(s, queries[q].keys[k], queries[q].qualifiers, queries[q].nqual, &res[n]))
                n++;
    if (n == 0) {
        PMIx_Info_free(res, nkeys);
        return PMIX_ERR_NOT_FOUND;
    }
    /* the tail past n is constructed and empty: PMIx_Info_free(res, n)
     * releases the whole block */
    *info = res;
    *ninfo = n;
    return n == nkeys ? PMIX_SUCCESS : PMIX_ERR_PARTIAL_SUCCESS;
}

pmix_status_t px_srv_query(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    uint32_t nq;
    pmix_query_t *q = NULL;
    pmix_info_t *res = NULL;
    size_t nres = 0, nkeys = 0, nhost = 0;
    pmix_status_t rc;
    px_buf out;

    if ((rc = px_unpack_u32(b, &nq)) != PMIX_SUCCESS)
        return rc;
    if (nq == 0 || nq > PX_QUERY_MAX || nq > px_buf_left(b)) /* each query takes bytes */
        return PMIX_ERR_UNPACK_FAILURE;
    if ((q = PMIx_Query_create(nq)) == NULL)
        return PMIX_ERR_NOMEM;
    for (uint32_t i = 0; i < nq && rc == PMIX_SUCCESS; i++) {
        rc = px_unpack_argv(b, &q[i].keys);
        if (rc == PMIX_SUCCESS)
            rc = px_unpack_info(b, &q[i].qualifiers, &q[i].nqual);
    }
    if (rc != PMIX_SUCCESS) {
        PMIx_Query_free(q, nq);
        return rc;
    }
    for (uint32_t i = 0; i < nq; i++)
        for (size_t k = 0; q[i].keys != NULL && q[i].keys[k] != NULL; k++) {
            nkeys++;
            if (!px_query_key_is_pset(q[i].keys[k]))
                nhost++;
        }
    rc = px_server_query_psets(s, q, nq, &res, &nres);
    if (nhost > 0 && px_srv_host_queries(s)) /* the host's keys: it answers */
        return px_srv_query_host(s, c, tag, q, nq, nkeys, res, nres);
    if (nhost > 0 && nhost == nkeys)
        rc = PMIX_ERR_NOT_SUPPORTED; /* only a host's keys, and no host to ask */
    px_buf_init_frame(&out, PX_MSG_INFO_DONE, tag);
    px_pack_i32(&out, rc == PMIX_ERR_BAD_PARAM ? PMIX_ERR_NOT_FOUND : rc);
    px_pack_info(&out, res, nres);
    px_srv_send(s, c, &out);
    PMIx_Info_free(res, nres);
    PMIx_Query_free(q, nq);
    return PMIX_SUCCESS;
}
