/*
 * jobpack.c - job-level data on the wire.
 *
 * A server packs the job-level data of a namespace for its clients at the
 * handshake; a client keeps those bytes as its own job (one copy, indexed
 * once: px_store_int.h), which then answers every lookup exactly as the
 * server's would. The encoding:
 *
 *     str  nspace
 *     kv-list                      job keys
 *     u32  nranks,  nranks x (u32 rank, kv-list)
 *     u32  nnodes,  nnodes x (u8 ids, [u32 nodeid], [str hostname], kv-list)
 *     u32  napps,   napps  x (u32 appnum, kv-list)
 *
 * where `ids` says which node identifiers follow (NODE_HAS_ID,
 * NODE_HAS_NAME, at least one). Unpacking checks every key and walks every
 * value (px_skip_value) before it installs the job, so a bad buffer
 * changes nothing in the store; a rank, node or app that appears twice is
 * a bad buffer. A key repeated in a kv-list keeps its last value.
 */
#include "store/px_store_int.h"

#include <stdlib.h>
#include <string.h>

#define NODE_HAS_ID 0x1
#define NODE_HAS_NAME 0x2

/* A kv-list of the live entries of `set`: their bytes as they are. */
typedef struct {
    const px_job *j;
    px_buf *b;
} pack_arg;

static void pack_ent(void *arg, const px_jent *e)
{
    pack_arg *pa = arg;
    px_pack_raw(pa->b, pa->j->data + e->off, e->len);
}

static void pack_set(const px_job *j, uint32_t set, px_buf *b)
{
    pack_arg pa = {j, b};
    px_pack_u32(b, (uint32_t)px_job_each(j, set, NULL, NULL));
    px_job_each(j, set, pack_ent, &pa);
}

static void pack_groups(const px_job *j, const px_grouplist *l, bool nodes, px_buf *b)
{
    px_pack_u32(b, (uint32_t)l->n);
    for (size_t i = 0; i < l->n; i++) {
        const px_group *g = l->v[i];
        if (nodes) {
            uint8_t ids = (g->has_id ? NODE_HAS_ID : 0) | (g->name != NULL ? NODE_HAS_NAME : 0);
            px_pack_u8(b, ids);
            if (g->has_id) {
                px_pack_u32(b, g->id);
            }
            if (g->name != NULL) {
                px_pack_str(b, g->name);
            }
        } else {
            px_pack_u32(b, g->id);
        }
        pack_set(j, g->set, b);
    }
}

/* The body of the encoding (all but the nspace) of a job whose entries
 * lie anywhere in its data: each set's live entries, set by set. */
static void pack_body(const px_job *j, px_buf *b)
{
    pack_set(j, PX_JOB_SET, b);
    px_pack_u32(b, (uint32_t)j->ranks.n);
    px_rankdata *rd;
    for (size_t i = 0; (rd = px_htab_next(&j->ranks, &i)) != NULL;) {
        px_pack_u32(b, rd->rank);
        pack_set(j, rd->set, b);
    }
    pack_groups(j, &j->nodes, true, b);
    pack_groups(j, &j->apps, false, b);
}

void px_store_pack_job(const px_store *s, const char *nspace, px_buf *b)
{
    const px_ns *ns = px_store_ns(s, nspace);
    const px_job *j = ns != NULL ? ns->job : NULL;
    px_pack_str(b, nspace);
    if (j == NULL) {
        px_pack_u32(b, 0); /* job keys */
        px_pack_u32(b, 0); /* ranks */
        px_pack_u32(b, 0); /* nodes */
        px_pack_u32(b, 0); /* apps */
        return;
    }
    px_pack_raw(b, j->data, j->len); /* an installed job is its body */
}

/* Index a kv-list at the cursor as the entries of `set`; their offsets
 * count from `start`, where the job's copy of the buffer begins. */
static pmix_status_t index_list(px_job *j, uint32_t set, px_buf *b, size_t start)
{
    char key[PMIX_MAX_KEYLEN + 1];
    uint32_t count;
    pmix_status_t rc = px_unpack_u32(b, &count);
    for (uint32_t i = 0; rc == PMIX_SUCCESS && i < count; i++) {
        size_t off = b->pos;
        rc = px_unpack_strbuf(b, key, sizeof(key));
        if (rc == PMIX_SUCCESS && key[0] == '\0') {
            rc = PMIX_ERR_UNPACK_FAILURE;
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_skip_value(b);
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_job_add(j, set, key, off - start, b->pos - off);
        }
    }
    return rc;
}

static pmix_status_t unpack_ranks(px_job *j, px_buf *b, size_t start)
{
    uint32_t n, rank;
    pmix_status_t rc = px_unpack_u32(b, &n);
    for (uint32_t i = 0; rc == PMIX_SUCCESS && i < n; i++) {
        rc = px_unpack_u32(b, &rank);
        if (rc != PMIX_SUCCESS) {
            break;
        }
        if (px_htab_get(&j->ranks, NULL, rank) != NULL) {
            return PMIX_ERR_UNPACK_FAILURE;
        }
        px_rankdata *rd = px_job_rank(j, rank);
        rc = rd != NULL ? index_list(j, rd->set, b, start) : PMIX_ERR_NOMEM;
    }
    return rc;
}

static pmix_status_t unpack_node(px_job *j, px_buf *b, size_t start)
{
    uint8_t ids;
    uint32_t id = 0;
    char *name = NULL;
    px_group *g;
    pmix_status_t rc = px_unpack_u8(b, &ids);
    if (rc == PMIX_SUCCESS && (ids == 0 || (ids & ~(NODE_HAS_ID | NODE_HAS_NAME)) != 0)) {
        rc = PMIX_ERR_UNPACK_FAILURE;
    }
    if (rc == PMIX_SUCCESS && (ids & NODE_HAS_ID) != 0) {
        rc = px_unpack_u32(b, &id);
        if (rc == PMIX_SUCCESS && px_htab_get(&j->node_ids, NULL, id) != NULL) {
            rc = PMIX_ERR_UNPACK_FAILURE;
        }
    }
    if (rc == PMIX_SUCCESS && (ids & NODE_HAS_NAME) != 0) {
        rc = px_unpack_str(b, &name);
        if (rc == PMIX_SUCCESS &&
            (name == NULL || name[0] == '\0' || px_htab_get(&j->node_names, name, 0) != NULL)) {
            rc = PMIX_ERR_UNPACK_FAILURE;
        }
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_job_node(j, (ids & NODE_HAS_ID) != 0, id, name, &g);
    }
    if (rc == PMIX_SUCCESS) {
        rc = index_list(j, g->set, b, start);
    }
    free(name);
    return rc;
}

static pmix_status_t unpack_apps(px_job *j, px_buf *b, size_t start)
{
    uint32_t n, appnum;
    pmix_status_t rc = px_unpack_u32(b, &n);
    for (uint32_t i = 0; rc == PMIX_SUCCESS && i < n; i++) {
        rc = px_unpack_u32(b, &appnum);
        if (rc != PMIX_SUCCESS) {
            break;
        }
        if (px_htab_get(&j->app_ids, NULL, appnum) != NULL) {
            return PMIX_ERR_UNPACK_FAILURE;
        }
        px_group *g = px_job_app(j, appnum);
        rc = g != NULL ? index_list(j, g->set, b, start) : PMIX_ERR_NOMEM;
    }
    return rc;
}

/* Index the body of an encoded job at the cursor into `j` (empty); the
 * entries' offsets count from where the body begins. */
static pmix_status_t index_body(px_job *j, px_buf *b)
{
    size_t start = b->pos;
    uint32_t nnodes;
    pmix_status_t rc = index_list(j, PX_JOB_SET, b, start);
    if (rc == PMIX_SUCCESS) {
        rc = unpack_ranks(j, b, start);
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_u32(b, &nnodes);
        for (uint32_t i = 0; rc == PMIX_SUCCESS && i < nnodes; i++) {
            rc = unpack_node(j, b, start);
        }
    }
    if (rc == PMIX_SUCCESS) {
        rc = unpack_apps(j, b, start);
    }
    return rc;
}

pmix_status_t px_job_encode(px_job **jp)
{
    px_buf b, view;
    px_job *j = px_job_create();
    pmix_status_t rc;
    if (j == NULL) {
        return PMIX_ERR_NOMEM;
    }
    px_buf_init(&b);
    pack_body(*jp, &b);
    rc = px_buf_status(&b);
    if (rc == PMIX_SUCCESS) {
        j->data = px_buf_steal(&b, &j->len);
        rc = j->data != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    }
    px_buf_fini(&b);
    if (rc == PMIX_SUCCESS) { /* kept for the job's life: give back what doubling left */
        uint8_t *fit = realloc(j->data, j->len);
        if (fit != NULL) {
            j->data = fit;
        }
        px_buf_view(&view, j->data, j->len);
        rc = index_body(j, &view);
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_job_seal(j);
    }
    if (rc != PMIX_SUCCESS) {
        px_job_destroy(j);
        return rc;
    }
    px_job_destroy(*jp);
    *jp = j;
    return PMIX_SUCCESS;
}

pmix_status_t px_store_unpack_job(px_store *s, px_buf *b)
{
    char nspace[PMIX_MAX_NSLEN + 1];
    if (s == NULL || b == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    size_t start = b->pos, body;
    px_job *j = px_job_create();
    if (j == NULL) {
        return PMIX_ERR_NOMEM;
    }
    pmix_status_t rc = px_unpack_strbuf(b, nspace, sizeof(nspace));
    if (rc == PMIX_SUCCESS && nspace[0] == '\0') {
        rc = PMIX_ERR_UNPACK_FAILURE;
    }
    body = b->pos;
    if (rc == PMIX_SUCCESS) {
        rc = index_body(j, b);
    }
    if (rc == PMIX_SUCCESS) { /* the job's own copy of what it indexed */
        j->len = b->pos - body;
        j->data = malloc(j->len);
        if (j->data != NULL) {
            memcpy(j->data, b->data + body, j->len);
        } else {
            rc = PMIX_ERR_NOMEM;
        }
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_job_seal(j);
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_store_install_job(s, nspace, j); /* destroys j on failure */
    } else {
        px_job_destroy(j);
    }
    if (rc != PMIX_SUCCESS) {
        b->pos = start;
    }
    return rc;
}
