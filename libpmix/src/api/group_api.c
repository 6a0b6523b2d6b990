/*
 * group_api.c - the Standard's PMIx_Group_* calls over the client engine
 * (client/group.c; the server's half is server/group.c).
 *
 * The non-blocking forms start the engine's operation and return; the
 * callback runs later, from the caller's progress, exactly once. As
 * everywhere in the library (user-guide.md, "Errors: returned, or through
 * the callback"), a call with a callback returns an error itself only for
 * arguments wrong on their face (PMIX_ERR_BAD_PARAM), PMIX_ERR_INIT and
 * PMIX_ERR_NOMEM; any other refusal (an unknown group: PMIX_ERR_NOT_FOUND;
 * a name in use: PMIX_ERR_EXISTS; a lost server) comes through the
 * callback, after the call returned, as OpenPMIx's programs expect. The
 * blocking forms wait for the same operation and hand back the results
 * array (a copy the caller frees with PMIx_Info_free). A blocking call
 * from inside a PMIx callback returns PMIX_ERR_WOULD_BLOCK: PMIx_Group_join
 * answers an invitation from an event handler with its non-blocking form,
 * as the Standard says.
 */
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "px_api.h"

typedef struct gsync {
    px_wait w;
    px_api_client *ac;
    pmix_status_t status;
    pmix_info_t *info;
    size_t ninfo;
} gsync;

static void gsync_op(pmix_status_t status, void *cbdata)
{
    gsync *s = cbdata;

    s->status = status;
    s->ac->pops->wake(s->ac->pctx, &s->w);
}

static void gsync_info(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                       pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    gsync *s = cbdata;

    s->status = status;
    if (ninfo > 0 && (s->info = PMIx_Info_create(ninfo)) != NULL) {
        for (size_t i = 0; i < ninfo; i++)
            PMIx_Info_xfer(&s->info[i], &info[i]);
        s->ninfo = ninfo;
    }
    if (release_fn != NULL)
        release_fn(release_cbdata);
    s->ac->pops->wake(s->ac->pctx, &s->w);
}

/* Wait for the operation `rc` started; hand the results over. */
static pmix_status_t gsync_finish(gsync *s, pmix_status_t rc, pmix_info_t **results,
                                  size_t *nresults)
{
    if (results != NULL)
        *results = NULL;
    if (nresults != NULL)
        *nresults = 0;
    if (rc != PMIX_SUCCESS)
        return rc;
    s->ac->pops->wait(s->ac->pctx, &s->w);
    if (results != NULL && nresults != NULL) {
        *results = s->info;
        *nresults = s->ninfo;
    } else {
        PMIx_Info_free(s->info, s->ninfo);
    }
    return s->status;
}

/* The caller's client for a blocking call, or NULL with *rc set; `s`
 * cleared and bound to it. */
static px_api_client *blocking(gsync *s, pmix_status_t *rc)
{
    memset(s, 0, sizeof(*s));
    s->ac = px_api_for_blocking(rc);
    return s->ac;
}

typedef struct late {
    pmix_status_t status;
    pmix_op_cbfunc_t opcb;
    pmix_info_cbfunc_t infocb;
    void *cbdata;
} late;

static void call_late(void *arg)
{
    late *l = arg;

    if (l->opcb != NULL)
        l->opcb(l->status, l->cbdata);
    else
        l->infocb(l->status, NULL, 0, l->cbdata, NULL, NULL);
    free(l);
}

/* What a non-blocking call returns when the engine said `rc`: a refusal
 * other than the ones returned directly goes to the callback, later. */
static pmix_status_t nb_result(pmix_status_t rc, pmix_op_cbfunc_t opcb, pmix_info_cbfunc_t infocb,
                               void *cbdata)
{
    late *l;

    if (rc == PMIX_SUCCESS || rc == PMIX_ERR_BAD_PARAM || rc == PMIX_ERR_INIT ||
        rc == PMIX_ERR_NOMEM || (opcb == NULL && infocb == NULL))
        return rc;
    if ((l = malloc(sizeof(*l))) == NULL)
        return PMIX_ERR_NOMEM;
    l->status = rc;
    l->opcb = opcb;
    l->infocb = infocb;
    l->cbdata = cbdata;
    if (px_api_defer(call_late, l) != PMIX_SUCCESS) {
        free(l);
        return rc;
    }
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Group_construct_nb(const char grp[], const pmix_proc_t procs[],
                                                  size_t nprocs, const pmix_info_t directives[],
                                                  size_t ndirs, pmix_info_cbfunc_t cbfunc,
                                                  void *cbdata)
{
    px_api_client *ac = px_api_for_nonblocking();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    return nb_result(ENGINE(ac, px_client_group_construct(ac->client, grp, procs, nprocs,
                                                          directives, ndirs, cbfunc, cbdata)),
                     NULL, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Group_construct(const char grp[], const pmix_proc_t procs[],
                                               size_t nprocs, const pmix_info_t directives[],
                                               size_t ndirs, pmix_info_t **results,
                                               size_t *nresults)
{
    gsync s;
    pmix_status_t rc;
    px_api_client *ac = blocking(&s, &rc);

    if (ac == NULL)
        return rc;
    rc = ENGINE(ac, px_client_group_construct(ac->client, grp, procs, nprocs, directives, ndirs,
                                              gsync_info, &s));
    return gsync_finish(&s, rc, results, nresults);
}

PMIX_EXPORT pmix_status_t PMIx_Group_destruct_nb(const char grp[], const pmix_info_t directives[],
                                                 size_t ndirs, pmix_op_cbfunc_t cbfunc,
                                                 void *cbdata)
{
    px_api_client *ac = px_api_for_nonblocking();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    return nb_result(
        ENGINE(ac, px_client_group_destruct(ac->client, grp, directives, ndirs, cbfunc, cbdata)),
        cbfunc, NULL, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Group_destruct(const char grp[], const pmix_info_t directives[],
                                              size_t ndirs)
{
    gsync s;
    pmix_status_t rc;
    px_api_client *ac = blocking(&s, &rc);

    if (ac == NULL)
        return rc;
    rc = ENGINE(ac, px_client_group_destruct(ac->client, grp, directives, ndirs, gsync_op, &s));
    return gsync_finish(&s, rc, NULL, NULL);
}

PMIX_EXPORT pmix_status_t PMIx_Group_invite_nb(const char grp[], const pmix_proc_t procs[],
                                               size_t nprocs, const pmix_info_t info[],
                                               size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                               void *cbdata)
{
    px_api_client *ac = px_api_for_nonblocking();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    return nb_result(ENGINE(ac, px_client_group_invite(ac->client, grp, procs, nprocs, info, ninfo,
                                                       cbfunc, cbdata)),
                     NULL, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Group_invite(const char grp[], const pmix_proc_t procs[],
                                            size_t nprocs, const pmix_info_t info[], size_t ninfo,
                                            pmix_info_t **results, size_t *nresult)
{
    gsync s;
    pmix_status_t rc;
    px_api_client *ac = blocking(&s, &rc);

    if (ac == NULL)
        return rc;
    rc = ENGINE(
        ac, px_client_group_invite(ac->client, grp, procs, nprocs, info, ninfo, gsync_info, &s));
    return gsync_finish(&s, rc, results, nresult);
}

PMIX_EXPORT pmix_status_t PMIx_Group_join_nb(const char grp[], const pmix_proc_t *leader,
                                             pmix_group_opt_t opt, const pmix_info_t info[],
                                             size_t ninfo, pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = px_api_for_nonblocking();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    return nb_result(
        ENGINE(ac, px_client_group_join(ac->client, grp, leader, opt, info, ninfo, cbfunc, cbdata)),
        NULL, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Group_join(const char grp[], const pmix_proc_t *leader,
                                          pmix_group_opt_t opt, const pmix_info_t info[],
                                          size_t ninfo, pmix_info_t **results, size_t *nresult)
{
    gsync s;
    pmix_status_t rc;
    px_api_client *ac = blocking(&s, &rc);

    if (ac == NULL)
        return rc;
    rc =
        ENGINE(ac, px_client_group_join(ac->client, grp, leader, opt, info, ninfo, gsync_info, &s));
    return gsync_finish(&s, rc, results, nresult);
}

PMIX_EXPORT pmix_status_t PMIx_Group_leave_nb(const char grp[], const pmix_info_t info[],
                                              size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = px_api_for_nonblocking();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    return nb_result(
        ENGINE(ac, px_client_group_leave(ac->client, grp, info, ninfo, cbfunc, cbdata)), cbfunc,
        NULL, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Group_leave(const char grp[], const pmix_info_t info[], size_t ninfo)
{
    gsync s;
    pmix_status_t rc;
    px_api_client *ac = blocking(&s, &rc);

    if (ac == NULL)
        return rc;
    rc = ENGINE(ac, px_client_group_leave(ac->client, grp, info, ninfo, gsync_op, &s));
    return gsync_finish(&s, rc, NULL, NULL);
}

/* A group query for api/query.c: PMIX_ERR_NOT_SUPPORTED if `key` is not
 * one (px_client_group_query). */
pmix_status_t px_api_group_query(const char *key, const pmix_info_t qual[], size_t nqual,
                                 pmix_info_t *out)
{
    px_api_client *ac = px_api_ready();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    return ENGINE(ac, px_client_group_query(ac->client, key, qual, nqual, out));
}
