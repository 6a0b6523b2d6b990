/*
 * coords.c - print the network coordinates a PMIx host gives (the
 * Standard's network coordinates chapter), for this process and a peer.
 *
 *   coords [--peer RANK] [--wait-update FENCES]
 *
 * Every process prints, one item per line prefixed with "rank R:",
 *   planes                          PMIX_NETWORK_PLANE (every plane)
 *   dims [physical]                 PMIX_NETWORK_DIMS of every plane
 *   shape PLANE logical|physical    PMIX_NETWORK_SHAPE of the first and of
 *                                   the last plane
 * and for itself and the peer T (default: the same local rank on the next
 * node, i.e. rank + local size, modulo the job size):
 *   rank T coord logical|physical   PMIX_NETWORK_COORDINATE in that view
 *   rank T coord PLANE              ... of the last plane only
 *   rank T nic, rank T endpt        PMIX_NETWORK_NIC, PMIX_NETWORK_ENDPT
 *   rank T coord nic NIC physical   the coordinate of each of its NICs,
 *                                   asked for with PMIX_NETWORK_NIC
 * With --wait-update N it registers for PMIX_NETWORK_COORDS_UPDATED, runs
 * N barriers (the event arrives while it waits in one), then prints what
 * the event said, or that none came.
 *
 * A host that gives no coordinates is not an error: the program says so
 * and exits 0. (pmixrun gives them from --topology FILE, or a flat one-switch
 * default.) Only the Standard's API; no global state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

typedef struct update {
    int seen;
    char plane[64];
    char nic[64];
} update;

static void append(char *buf, size_t len, const char *fmt, unsigned long v, const char *sep)
{
    size_t at = strlen(buf);

    if (at < len)
        snprintf(buf + at, len - at, fmt, v, sep);
}

/* "plane0:(0,1,0) plane1:(0,1,0)" from a data array of coordinates. */
static void format_coords(const pmix_value_t *v, char *buf, size_t len)
{
    const pmix_data_array_t *da = v->type == PMIX_DATA_ARRAY ? v->data.darray : NULL;

    buf[0] = '\0';
    if (da == NULL || da->type != PMIX_COORD) {
        snprintf(buf, len, "(not an array of coordinates)");
        return;
    }
    for (size_t i = 0; i < da->size; i++) {
        const pmix_coord_t *c = &((const pmix_coord_t *)da->array)[i];
        size_t at = strlen(buf);
        snprintf(buf + at, len - at, "%s%s:%s(", i ? " " : "", c->plane ? c->plane : "?",
                 c->view == PMIX_COORD_PHYSICAL_VIEW ? "p" : "");
        for (size_t d = 0; d < c->dims; d++)
            append(buf, len, "%lu%s", c->coord[d], d + 1 < c->dims ? "," : ")");
        if (c->dims == 0)
            append(buf, len, "%.0lu%s", 0, ")");
    }
}

/* Strings, or arrays of strings joined by '=': "plane0=node-0.nic0 ...". */
static void format_strings(const pmix_value_t *v, char *buf, size_t len)
{
    const pmix_data_array_t *da = v->type == PMIX_DATA_ARRAY ? v->data.darray : NULL;

    buf[0] = '\0';
    if (da == NULL) {
        snprintf(buf, len, "%s", v->type == PMIX_STRING ? v->data.string : "(?)");
        return;
    }
    for (size_t i = 0; i < da->size; i++) {
        size_t at = strlen(buf);
        if (da->type == PMIX_STRING) {
            snprintf(buf + at, len - at, "%s%s", i ? " " : "", ((char **)da->array)[i]);
        } else if (da->type == PMIX_DATA_ARRAY) {
            const pmix_data_array_t *in = &((const pmix_data_array_t *)da->array)[i];
            snprintf(buf + at, len - at, "%s", i ? " " : "");
            for (size_t k = 0; in->type == PMIX_STRING && k < in->size; k++) {
                at = strlen(buf);
                snprintf(buf + at, len - at, "%s%s", k ? "=" : "", ((char **)in->array)[k]);
            }
        }
    }
}

/* "2x2x2" from a data array of uint32. */
static void format_u32s(const pmix_value_t *v, const char *sep, char *buf, size_t len)
{
    const pmix_data_array_t *da = v->type == PMIX_DATA_ARRAY ? v->data.darray : NULL;

    buf[0] = '\0';
    if (v->type == PMIX_UINT32) {
        snprintf(buf, len, "%u", v->data.uint32);
        return;
    }
    for (size_t i = 0; da != NULL && da->type == PMIX_UINT32 && i < da->size; i++)
        append(buf, len, "%lu%s", ((uint32_t *)da->array)[i], i + 1 < da->size ? sep : "");
}

typedef enum {
    AS_COORDS,
    AS_STRINGS,
    AS_U32
} shape_kind;

/* Get `key` of `who` with up to two qualifiers and print it. */
static int show_q(const pmix_proc_t *me, const pmix_proc_t *who, const char *key, const char *plane,
                  const char *nic, pmix_coord_view_t view, shape_kind kind, const char *label)
{
    pmix_info_t q[3];
    size_t nq = 0;
    pmix_value_t *v = NULL;
    char buf[1024];
    pmix_status_t rc;

    if (plane != NULL)
        PMIx_Info_load(&q[nq++], PMIX_NETWORK_PLANE, plane, PMIX_STRING);
    if (nic != NULL)
        PMIx_Info_load(&q[nq++], PMIX_NETWORK_NIC, nic, PMIX_STRING);
    if (view != PMIX_COORD_VIEW_UNDEF)
        PMIx_Info_load(&q[nq++], PMIX_NETWORK_VIEW, &view, PMIX_UINT8);
    rc = PMIx_Get(who, key, nq ? q : NULL, nq, &v);
    for (size_t i = 0; i < nq; i++)
        PMIx_Info_destruct(&q[i]);
    if (rc != PMIX_SUCCESS) {
        printf("rank %u: %s: %s\n", me->rank, label, PMIx_Error_string(rc));
        return 1;
    }
    if (kind == AS_COORDS)
        format_coords(v, buf, sizeof(buf));
    else if (kind == AS_STRINGS)
        format_strings(v, buf, sizeof(buf));
    else
        format_u32s(v, plane != NULL ? "x" : " ", buf, sizeof(buf));
    printf("rank %u: %s %s\n", me->rank, label, buf);
    PMIx_Value_free(v, 1);
    return 0;
}

static int show(const pmix_proc_t *me, const pmix_proc_t *who, const char *key, const char *plane,
                pmix_coord_view_t view, shape_kind kind, const char *label)
{
    return show_q(me, who, key, plane, NULL, view, kind, label);
}

static int show_proc(const pmix_proc_t *me, pmix_rank_t rank, const char *last_plane)
{
    pmix_proc_t who;
    char label[128];
    int bad = 0;

    PMIx_Load_procid(&who, me->nspace, rank);
    snprintf(label, sizeof(label), "rank %u coord logical", rank);
    bad += show(me, &who, PMIX_NETWORK_COORDINATE, NULL, PMIX_COORD_VIEW_UNDEF, AS_COORDS, label);
    snprintf(label, sizeof(label), "rank %u coord physical", rank);
    bad +=
        show(me, &who, PMIX_NETWORK_COORDINATE, NULL, PMIX_COORD_PHYSICAL_VIEW, AS_COORDS, label);
    snprintf(label, sizeof(label), "rank %u coord %s", rank, last_plane);
    bad += show(me, &who, PMIX_NETWORK_COORDINATE, last_plane, PMIX_COORD_VIEW_UNDEF, AS_COORDS,
                label);
    snprintf(label, sizeof(label), "rank %u nic", rank);
    bad += show(me, &who, PMIX_NETWORK_NIC, NULL, PMIX_COORD_VIEW_UNDEF, AS_STRINGS, label);
    {
        /* the coordinate of each of the process's NICs, by NIC id */
        pmix_value_t *v = NULL;
        if (PMIx_Get(&who, PMIX_NETWORK_NIC, NULL, 0, &v) == PMIX_SUCCESS) {
            const pmix_data_array_t *da = v->type == PMIX_DATA_ARRAY ? v->data.darray : NULL;
            if (da != NULL && da->type == PMIX_DATA_ARRAY && da->size > 0) {
                for (size_t i = 0; i < da->size; i++) {
                    const pmix_data_array_t *one = &((pmix_data_array_t *)da->array)[i];
                    if (one->type != PMIX_STRING || one->size != 2)
                        continue;
                    const char *nic = ((char **)one->array)[1];
                    snprintf(label, sizeof(label), "rank %u coord nic %s physical", rank, nic);
                    bad += show_q(me, &who, PMIX_NETWORK_COORDINATE, NULL, nic,
                                  PMIX_COORD_PHYSICAL_VIEW, AS_COORDS, label);
                }
            }
            PMIx_Value_free(v, 1);
        }
    }
    snprintf(label, sizeof(label), "rank %u endpt", rank);
    bad += show(me, &who, PMIX_NETWORK_ENDPT, NULL, PMIX_COORD_VIEW_UNDEF, AS_STRINGS, label);
    return bad;
}

static void on_update(size_t id, pmix_status_t status, const pmix_proc_t *source,
                      pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                      pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    update *u = NULL;

    for (size_t i = 0; i < ninfo; i++) {
        if (strcmp(info[i].key, PMIX_EVENT_RETURN_OBJECT) == 0 &&
            info[i].value.type == PMIX_POINTER)
            u = info[i].value.data.ptr;
    }
    for (size_t i = 0; u != NULL && i < ninfo; i++) {
        if (info[i].value.type != PMIX_STRING)
            continue;
        if (strcmp(info[i].key, PMIX_NETWORK_PLANE) == 0)
            snprintf(u->plane, sizeof(u->plane), "%s", info[i].value.data.string);
        else if (strcmp(info[i].key, PMIX_NETWORK_NIC) == 0)
            snprintf(u->nic, sizeof(u->nic), "%s", info[i].value.data.string);
    }
    if (u != NULL)
        u->seen++;
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

int main(int argc, char **argv)
{
    pmix_proc_t me, wild;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    uint32_t size = 1, lsize = 1;
    long peer = -1, wait = 0;
    int bad = 0;
    char first_plane[64] = "", last_plane[64] = "";
    update u;
    pmix_info_t reg;
    pmix_status_t code = PMIX_NETWORK_COORDS_UPDATED;

    memset(&u, 0, sizeof(u));
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--peer") == 0 && i + 1 < argc) {
            peer = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--wait-update") == 0 && i + 1 < argc) {
            wait = strtol(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: coords [--peer RANK] [--wait-update FENCES]\n");
            return 2;
        }
    }
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "coords: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIx_Load_procid(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS) {
        size = v->data.uint32;
        PMIx_Value_free(v, 1);
    }
    if (PMIx_Get(&wild, PMIX_LOCAL_SIZE, NULL, 0, &v) == PMIX_SUCCESS) {
        lsize = v->data.uint32;
        PMIx_Value_free(v, 1);
    }
    rc = PMIx_Get(&wild, PMIX_NETWORK_PLANE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) {
        printf("rank %u: no network coordinates (PMIX_NETWORK_PLANE: %s): this host gives none\n",
               me.rank, PMIx_Error_string(rc));
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (v->type == PMIX_DATA_ARRAY && v->data.darray->type == PMIX_STRING &&
        v->data.darray->size > 0) {
        snprintf(first_plane, sizeof(first_plane), "%s", ((char **)v->data.darray->array)[0]);
        snprintf(last_plane, sizeof(last_plane), "%s",
                 ((char **)v->data.darray->array)[v->data.darray->size - 1]);
    }
    PMIx_Value_free(v, 1);
    bad += show(&me, &wild, PMIX_NETWORK_PLANE, NULL, PMIX_COORD_VIEW_UNDEF, AS_STRINGS, "planes");
    bad += show(&me, &wild, PMIX_NETWORK_DIMS, NULL, PMIX_COORD_VIEW_UNDEF, AS_U32, "dims");
    bad += show(&me, &wild, PMIX_NETWORK_DIMS, NULL, PMIX_COORD_PHYSICAL_VIEW, AS_U32,
                "dims physical");
    for (int pl = 0; pl < 2 && last_plane[0] != '\0'; pl++) {
        char plane[64], label[128];
        snprintf(plane, sizeof(plane), "%s", pl == 0 ? first_plane : last_plane);
        if (pl == 1 && strcmp(plane, first_plane) == 0)
            break;
        snprintf(label, sizeof(label), "shape %s logical", plane);
        bad += show(&me, &wild, PMIX_NETWORK_SHAPE, plane, PMIX_COORD_VIEW_UNDEF, AS_U32, label);
        snprintf(label, sizeof(label), "shape %s physical", plane);
        bad += show(&me, &wild, PMIX_NETWORK_SHAPE, plane, PMIX_COORD_PHYSICAL_VIEW, AS_U32, label);
    }
    if (peer < 0)
        peer = (long)((me.rank + lsize) % size);
    bad += show_proc(&me, me.rank, last_plane);
    if ((uint32_t)peer != me.rank && (uint32_t)peer < size)
        bad += show_proc(&me, (pmix_rank_t)peer, last_plane);

    if (wait > 0) {
        PMIx_Info_load(&reg, PMIX_EVENT_RETURN_OBJECT, &u, PMIX_POINTER);
        rc = PMIx_Register_event_handler(&code, 1, &reg, 1, on_update, NULL, NULL);
        PMIx_Info_destruct(&reg);
        if (rc < 0) {
            printf("rank %u: cannot register for PMIX_NETWORK_COORDS_UPDATED: %s\n", me.rank,
                   PMIx_Error_string(rc));
            bad++;
        }
        /* every process runs the same number of barriers, seen or not */
        for (long i = 0; i < wait; i++)
            (void)PMIx_Fence(&wild, 1, NULL, 0);
        if (u.seen)
            printf("rank %u: PMIX_NETWORK_COORDS_UPDATED plane=%s nic=%s\n", me.rank,
                   u.plane[0] ? u.plane : "-", u.nic[0] ? u.nic : "-");
        else
            printf("rank %u: no PMIX_NETWORK_COORDS_UPDATED after %ld fences\n", me.rank, wait);
    }
    PMIx_Finalize(NULL, 0);
    return bad ? 1 : 0;
}
