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

/* px_job_encode's state: the job, the body being written, and the new
 * index, filled as the entries land. */
typedef struct {
    const px_job *j;
    px_buf *b;
    px_jent *ent; /* room for every entry of j */
    size_t nent;
    px_jset *sets;
} encoder;

static void encode_ent(void *arg, const px_jent *e)
{
    encoder *en = arg;
    size_t off = en->b->size;
    px_pack_raw(en->b, en->j->data + e->off, e->len);
    en->ent[en->nent++] =
        (px_jent){.set = e->set, .hash = e->hash, .off = (uint32_t)off, .len = e->len};
}

/* A kv-list of the live entries of `set`, their bytes as they are. */
static void encode_set(encoder *en, uint32_t set)
{
    size_t first = en->nent;
    px_pack_u32(en->b, (uint32_t)px_job_each(en->j, set, NULL, NULL));
    px_job_each(en->j, set, encode_ent, en);
    en->sets[set] = (px_jset){.first = (uint32_t)first, .n = (uint32_t)(en->nent - first)};
}

static void encode_groups(encoder *en, const px_grouplist *l, bool nodes)
{
    px_pack_u32(en->b, (uint32_t)l->n);
    for (size_t i = 0; i < l->n; i++) {
        const px_group *g = l->v[i];
        if (nodes) {
            uint8_t ids = (g->has_id ? NODE_HAS_ID : 0) | (g->name != NULL ? NODE_HAS_NAME : 0);
            px_pack_u8(en->b, ids);
            if (g->has_id) {
                px_pack_u32(en->b, g->id);
            }
            if (g->name != NULL) {
                px_pack_str(en->b, g->name);
            }
        } else {
            px_pack_u32(en->b, g->id);
        }
        encode_set(en, g->set);
    }
}

/* The body of the encoding (all but the nspace): each set's live entries,
 * set by set. Within a set they keep the index's order, (hash, offset),
 * and their new offsets grow: the new index needs no sorting. */
static void encode_body(encoder *en)
{
    const px_job *j = en->j;
    px_rankdata *rd;
    encode_set(en, PX_JOB_SET);
    px_pack_u32(en->b, (uint32_t)j->ranks.n);
    for (size_t i = 0; (rd = px_htab_next(&j->ranks, &i)) != NULL;) {
        px_pack_u32(en->b, rd->rank);
        encode_set(en, rd->set);
    }
    encode_groups(en, &j->nodes, true);
    encode_groups(en, &j->apps, false);
}

pmix_status_t px_job_encode(px_job *j)
{
    px_buf b;
    size_t len;
    encoder en = {.j = j, .b = &b};
    pmix_status_t rc = PMIX_ERR_NOMEM;
    uint8_t *data = NULL;

    en.ent = malloc((j->nent != 0 ? j->nent : 1) * sizeof(*en.ent));
    en.sets = calloc(j->nsets, sizeof(*en.sets));
    px_buf_init(&b);
    if (en.ent != NULL && en.sets != NULL) {
        /* the entries, a count per set and a few bytes per group */
        px_buf_reserve(&b, j->len + (size_t)j->nsets * 16 + 16);
        encode_body(&en);
        rc = px_buf_status(&b);
    }
    if (rc == PMIX_SUCCESS) {
        data = px_buf_steal(&b, &len);
        rc = data != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    }
    px_buf_fini(&b);
    if (rc != PMIX_SUCCESS) {
        free(en.ent);
        free(en.sets);
        return rc;
    }
    uint8_t *fit = realloc(data, len); /* kept for the job's life */
    if (fit != NULL) {
        data = fit;
    }
    free(j->data);
    free(j->ent);
    free(j->sets);
    j->data = data;
    j->len = len;
    j->ent = en.ent;
    j->nent = j->capent = en.nent;
    j->sets = en.sets;
    return PMIX_SUCCESS;
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
