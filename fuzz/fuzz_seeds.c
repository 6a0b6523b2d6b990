/*
 * fuzz_seeds.c - writes the seed corpus of the fuzz targets (corpus/ in
 * this directory): fuzz_seeds DIR writes DIR/wire, DIR/store and
 * DIR/engine.
 *
 * Every seed is made with the library itself: values, info lists and jobs
 * packed by the codec and the store, frames packed as the engines pack
 * them, the job data the host core builds. The fuzzer starts from inputs
 * that already pass the checks at the door (a known type, a length that
 * fits, a frame a client is waiting for) and mutates them from there. The
 * scripts follow the formats the targets' opening comments describe; a
 * change of those formats wants new seeds (run this again, commit the
 * result).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pmix.h>

#include "px_hostcore.h"
#include "px_pubsub.h"
#include "px_proto.h"
#include "store/px_store.h"
#include "wire/px_wire.h"

static const char *outdir;

static void die(const char *what)
{
    fprintf(stderr, "fuzz_seeds: %s\n", what);
    exit(1);
}

/* A seed being written: plain bytes. */
typedef struct seed {
    uint8_t *p;
    size_t n, cap;
} seed;

static void put(seed *s, const void *p, size_t n)
{
    if (n == 0) {
        return;
    }
    if (s->n + n > s->cap) {
        s->cap = (s->n + n) * 2;
        s->p = realloc(s->p, s->cap);
        if (s->p == NULL) {
            die("out of memory");
        }
    }
    memcpy(s->p + s->n, p, n);
    s->n += n;
}

static void put8(seed *s, uint8_t v)
{
    put(s, &v, 1);
}

static void put16(seed *s, uint16_t v)
{
    put8(s, (uint8_t)v);
    put8(s, (uint8_t)(v >> 8));
}

/* Bytes with a two-byte length in front (fuzz_blob16). */
static void put_blob16(seed *s, const void *p, size_t n)
{
    if (n > 0xffff) {
        die("a seed part is too long");
    }
    put16(s, (uint16_t)n);
    put(s, p, n);
}

/* Hand over what a px_buf packed, as a blob16. */
static void put_buf16(seed *s, px_buf *b)
{
    size_t n;
    void *p;

    if (px_buf_status(b) != PMIX_SUCCESS) {
        die("a pack failed");
    }
    p = px_buf_steal(b, &n);
    put_blob16(s, p, n);
    free(p);
}

static void save(const char *target, const char *name, seed *s)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", outdir, target);
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        die("cannot make a directory");
    }
    snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(s->p, 1, s->n, f) != s->n || fclose(f) != 0) {
        die("cannot write a seed");
    }
    free(s->p);
    memset(s, 0, sizeof(*s));
}

/* ---- the data the seeds are made of ---- */

static const char *node_name(void *ctx, uint32_t node)
{
    return node == 0 ? "n0" : "n1";
}

/* The job data a host registers for node 0 of a 2 x 2 job. */
static void job_info(px_ivec *info)
{
    px_jobmap m = {
        .nspace = "job",
        .nprocs = 4,
        .nnodes = 2,
        .ppn = 2,
        .node_name = node_name,
        .describe_all = true,
    };

    memset(info, 0, sizeof(*info));
    if (px_jobinfo_build(&m, 0, info) != PMIX_SUCCESS) {
        die("the job data cannot be built");
    }
}

static px_store *job_store(void)
{
    px_store *st = px_store_create();
    px_ivec info;

    job_info(&info);
    if (st == NULL || px_store_load_job(st, "job", info.v, info.n) != PMIX_SUCCESS) {
        die("the job data cannot be loaded");
    }
    px_ivec_free(&info);
    return st;
}

/* A store in which ranks 0 and 1 of "job" put a card (and rank 0 a local
 * and a remote key) and committed. */
static px_store *cards_store(void)
{
    px_store *st = px_store_create(), *cl = px_store_create();
    pmix_value_t v;
    pmix_byte_object_t bo = {.bytes = "tcp://10.0.0.1:4242", .size = 19};

    for (pmix_rank_t r = 0; r < 2; r++) {
        pmix_proc_t p;
        px_buf b;
        PMIx_Load_procid(&p, "job", r);
        PMIX_VALUE_LOAD(&v, &bo, PMIX_BYTE_OBJECT);
        px_store_put(cl, &p, PMIX_GLOBAL, "card", &v);
        PMIx_Value_destruct(&v);
        if (r == 0) {
            uint32_t u = 7;
            PMIX_VALUE_LOAD(&v, &u, PMIX_UINT32);
            px_store_put(cl, &p, PMIX_LOCAL, "k1", &v);
            PMIX_VALUE_LOAD(&v, "remote", PMIX_STRING);
            px_store_put(cl, &p, PMIX_REMOTE, "k2", &v);
            PMIx_Value_destruct(&v);
        }
        px_buf_init(&b);
        px_store_pack_commit(cl, &p, &b);
        px_buf_view(&b, b.data, b.size);
        if (px_store_unpack_commit(st, &p, &b) != PMIX_SUCCESS) {
            die("a commit does not load");
        }
        free(b.data);
    }
    px_store_destroy(cl);
    return st;
}

static void pack_records(px_store *st, bool local, px_buf *b)
{
    for (pmix_rank_t r = 0; r < 2; r++) {
        pmix_proc_t p;
        PMIx_Load_procid(&p, "job", r);
        px_store_pack_record(st, &p, local, b);
    }
}

/* ---- wire ---- */

static void wire_seeds(void)
{
    seed s = {0};
    px_buf b;
    pmix_value_t v;
    pmix_info_t info[3];
    pmix_proc_t proc;
    uint32_t u = 42;
    double d = 1.5;
    pmix_byte_object_t bo = {.bytes = "card", .size = 4};
    pmix_data_array_t da = {.type = PMIX_INFO, .size = 2, .array = info};
    px_ivec job;

    PMIx_Load_procid(&proc, "job", 3);
    PMIx_Info_load(&info[0], PMIX_JOB_SIZE, &u, PMIX_UINT32);
    PMIx_Info_load(&info[1], PMIX_HOSTNAME, "n0", PMIX_STRING);
    PMIx_Info_load(&info[2], PMIX_PROCID, &proc, PMIX_PROC);

    /* values */
    const struct {
        const char *name;
        const void *data;
        pmix_data_type_t type;
    } values[] = {
        {"value-uint32", &u, PMIX_UINT32},      {"value-string", "hello", PMIX_STRING},
        {"value-bytes", &bo, PMIX_BYTE_OBJECT}, {"value-double", &d, PMIX_DOUBLE},
        {"value-proc", &proc, PMIX_PROC},       {"value-darray", &da, PMIX_DATA_ARRAY},
        {"value-info", &info[2], PMIX_INFO},
    };
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        PMIx_Value_construct(&v);
        if (PMIx_Value_load(&v, values[i].data, values[i].type) != PMIX_SUCCESS) {
            die("a value does not load");
        }
        px_buf_init(&b);
        px_pack_value(&b, &v);
        put8(&s, 0);
        put(&s, b.data, b.size);
        px_buf_fini(&b);
        PMIx_Value_destruct(&v);
        save("wire", values[i].name, &s);
    }

    /* info lists: three keys, and a whole job's data */
    px_buf_init(&b);
    px_pack_info(&b, info, 3);
    put8(&s, 1);
    put(&s, b.data, b.size);
    px_buf_fini(&b);
    save("wire", "info-three", &s);
    job_info(&job);
    px_buf_init(&b);
    px_pack_info(&b, job.v, job.n);
    put8(&s, 1);
    put(&s, b.data, b.size);
    px_buf_fini(&b);
    save("wire", "info-job", &s);

    /* typed: structures, empty (their layout) */
    const pmix_data_type_t structs[] = {
        PMIX_APP,        PMIX_QUERY,      PMIX_PDATA,       PMIX_PROC_INFO,   PMIX_ENVAR,
        PMIX_COORD,      PMIX_REGATTR,    PMIX_GEOMETRY,    PMIX_DEVICE_DIST, PMIX_ENDPOINT,
        PMIX_PROC_STATS, PMIX_NODE_STATS, PMIX_DATA_BUFFER, PMIX_TIMEVAL,
    };
    for (size_t i = 0; i < sizeof(structs) / sizeof(structs[0]); i++) {
        uint8_t zero[4096] = {0}; /* larger than any structure */
        char name[64];
        px_buf_init(&b);
        px_pack_typed(&b, zero, structs[i]);
        if (px_buf_status(&b) != PMIX_SUCCESS) {
            die("an empty structure does not pack");
        }
        put8(&s, 2);
        put8(&s, (uint8_t)structs[i]);
        put(&s, b.data, b.size);
        px_buf_fini(&b);
        snprintf(name, sizeof(name), "typed-%s", PMIx_Data_type_string(structs[i]) + 5);
        save("wire", name, &s);
    }

    /* items: procs, argv, a string, a key */
    {
        char *argv[] = {"hello", "-n", "4", NULL};
        pmix_proc_t procs[2];
        PMIx_Load_procid(&procs[0], "job", 0);
        PMIx_Load_procid(&procs[1], "job", PMIX_RANK_WILDCARD);
        px_buf_init(&b);
        px_pack_u8(&b, 0);
        px_pack_procs(&b, procs, 2);
        px_pack_u8(&b, 1);
        px_pack_argv(&b, argv);
        px_pack_u8(&b, 2);
        px_pack_str(&b, "string");
        px_pack_u8(&b, 3);
        px_pack_str(&b, PMIX_JOB_SIZE);
        px_pack_u8(&b, 5);
        px_pack_bytes(&b, "bytes", 5);
        put8(&s, 3);
        put(&s, b.data, b.size);
        px_buf_fini(&b);
        save("wire", "items", &s);
    }

    /* frames: a client's requests, and a server's replies */
    {
        px_store *st = cards_store(), *js = job_store();
        size_t n;
        uint8_t *f;
        pmix_proc_t self;
        PMIx_Load_procid(&self, "job", 0);
        put8(&s, 4);
        px_buf_init_frame(&b, PX_MSG_HELLO, 1);
        px_pack_u32(&b, PX_PROTOCOL);
        px_pack_proc(&b, &self);
        px_pack_u32(&b, 4242);
        px_pack_info(&b, NULL, 0);
        f = px_buf_finish_frame(&b, &n);
        put(&s, f, n);
        free(f);
        px_buf_init_frame(&b, PX_MSG_COMMIT, 0);
        px_store_pack_commit(st, &self, &b);
        f = px_buf_finish_frame(&b, &n);
        put(&s, f, n);
        free(f);
        px_buf_init_frame(&b, PX_MSG_FENCE, 2);
        px_pack_procs(&b, NULL, 0);
        px_pack_info(&b, info, 1);
        px_pack_u8(&b, 0);
        f = px_buf_finish_frame(&b, &n);
        put(&s, f, n);
        free(f);
        px_buf_init_frame(&b, PX_MSG_GET, 3);
        px_pack_proc(&b, &proc);
        px_pack_str(&b, "card");
        px_pack_info(&b, NULL, 0);
        f = px_buf_finish_frame(&b, &n);
        put(&s, f, n);
        free(f);
        save("wire", "frames-client", &s);

        put8(&s, 4);
        px_buf_init_frame(&b, PX_MSG_WELCOME, 1);
        px_pack_i32(&b, PMIX_SUCCESS);
        px_pack_u8(&b, 0);
        px_store_pack_job(js, "job", &b);
        f = px_buf_finish_frame(&b, &n);
        put(&s, f, n);
        free(f);
        px_buf_init_frame(&b, PX_MSG_EVENT, 0);
        px_pack_i32(&b, PMIX_ERR_PROC_ABORTED);
        px_pack_proc(&b, &proc);
        px_pack_u8(&b, PMIX_RANGE_NAMESPACE);
        px_pack_info(&b, info, 2);
        f = px_buf_finish_frame(&b, &n);
        put(&s, f, n);
        free(f);
        px_buf_init_frame(&b, PX_MSG_INFO_DONE, 4);
        px_pack_i32(&b, PMIX_SUCCESS);
        px_pack_info(&b, info, 3);
        f = px_buf_finish_frame(&b, &n);
        put(&s, f, n);
        free(f);
        save("wire", "frames-server", &s);
        px_store_destroy(st);
        px_store_destroy(js);
    }

    /* the Standard's buffers: a string, a value, procs, an info */
    {
        pmix_data_buffer_t db;
        char *str = "hello";
        int32_t one = 1;
        (void)one;
        PMIx_Data_buffer_construct(&db);
        PMIx_Load_procid(&proc, "job", 1);
        PMIx_Data_pack(NULL, &db, &str, 1, PMIX_STRING);
        PMIx_Value_construct(&v);
        PMIx_Value_load(&v, &u, PMIX_UINT32);
        PMIx_Data_pack(NULL, &db, &v, 1, PMIX_VALUE);
        PMIx_Data_pack(NULL, &db, &proc, 1, PMIX_PROC);
        PMIx_Data_pack(NULL, &db, info, 2, PMIX_INFO);
        put8(&s, 5);
        const pmix_data_type_t types[4] = {PMIX_STRING, PMIX_VALUE, PMIX_PROC, PMIX_INFO};
        for (int i = 0; i < 4; i++) {
            put8(&s, (uint8_t)types[i]);
            put8(&s, i == 3 ? 1 : 0);
        }
        put(&s, db.base_ptr, db.bytes_used);
        save("wire", "data-buffer", &s);
        PMIx_Data_buffer_destruct(&db);
    }
    for (int i = 0; i < 3; i++) {
        PMIx_Info_destruct(&info[i]);
    }
    px_ivec_free(&job);
}

/* ---- store (fuzz_store.c's script) ---- */

enum {
    ST_LOAD,
    ST_UNPACK,
    ST_BLOB,
    ST_PARTS,
    ST_GROUPS,
    ST_PUT,
    ST_COMMIT,
    ST_GET,
    ST_REPACK,
    ST_DROP,
};

static void st_get(seed *s, uint8_t how, uint8_t rank, uint8_t key)
{
    put8(s, ST_GET);
    put8(s, how);
    put8(s, 0); /* "job" */
    put8(s, rank);
    put8(s, key);
    if (how % 3 == 2) {
        put8(s, 0); /* the qualifier's id */
    }
}

static void store_seeds(void)
{
    seed s = {0};
    px_buf b;
    px_ivec job;
    px_store *js = job_store(), *cs = cards_store();
    pmix_proc_t procs[2];
    const pmix_proc_t *pp[2] = {&procs[0], &procs[1]};

    PMIx_Load_procid(&procs[0], "job", 0);
    PMIx_Load_procid(&procs[1], "job", 1);

    /* job data as a host registers it, then lookups */
    job_info(&job);
    put8(&s, ST_LOAD);
    put8(&s, 0);
    px_buf_init(&b);
    px_pack_info(&b, job.v, job.n);
    put_buf16(&s, &b);
    st_get(&s, 2, 0xfe, 2);    /* job size, wildcard */
    st_get(&s, 2, 1, 3);       /* a rank's local rank */
    st_get(&s, 0x12, 0xfe, 7); /* the local size of node 0 */
    st_get(&s, 0x22, 0xfe, 11);
    save("store", "load-job", &s);
    px_ivec_free(&job);

    /* a packed job, as in WELCOME */
    put8(&s, ST_UNPACK);
    px_buf_init(&b);
    px_store_pack_job(js, "job", &b);
    put_buf16(&s, &b);
    st_get(&s, 2, 0, 4);
    st_get(&s, 2, 0xfe, 8);
    save("store", "unpack-job", &s);

    /* collected data: records in a blob, in parts, in groups */
    put8(&s, ST_BLOB);
    px_buf_init(&b);
    pack_records(cs, true, &b);
    put_buf16(&s, &b);
    st_get(&s, 0x80, 1, 0);
    st_get(&s, 1, 0, 1);
    put8(&s, ST_REPACK);
    put8(&s, 1);
    put8(&s, 0);
    put8(&s, 0);
    put8(&s, 0);
    put8(&s, 0);
    save("store", "blob", &s);

    {
        px_buf r0, r1;
        px_buf_init(&r0);
        px_buf_init(&r1);
        px_store_pack_record(cs, &procs[0], false, &r0);
        px_store_pack_record(cs, &procs[1], false, &r1);
        put8(&s, ST_PARTS);
        put16(&s, (uint16_t)(r0.size + 8 + r1.size));
        put(&s, r0.data, r0.size);
        put(&s, "\0\0\0\0\0\0\0\0", 8);
        put(&s, r1.data, r1.size);
        put8(&s, 2);
        put8(&s, 1); /* one record per slot, of "job" */
        put16(&s, 0);
        put16(&s, (uint16_t)r0.size);
        put16(&s, (uint16_t)(r0.size + 8));
        put16(&s, (uint16_t)r1.size);
        st_get(&s, 0, 1, 0);
        px_buf_fini(&r0);
        px_buf_fini(&r1);
        save("store", "parts", &s);
    }

    put8(&s, ST_GROUPS);
    px_buf_init(&b);
    px_store_pack_groups(cs, pp, 2, false, &b);
    put_buf16(&s, &b);
    st_get(&s, 0, 0, 0);
    st_get(&s, 0, 1, 0);
    st_get(&s, 1, 0, 0);
    put8(&s, ST_REPACK);
    put8(&s, 0);
    put8(&s, 0);
    put8(&s, 1);
    put8(&s, 0);
    put8(&s, 1);
    save("store", "groups", &s);

    /* a commit, puts, and the records they make */
    put8(&s, ST_COMMIT);
    put8(&s, 0);
    put8(&s, 0);
    px_buf_init(&b);
    px_store_pack_commit(cs, &procs[0], &b);
    put_buf16(&s, &b);
    put8(&s, ST_PUT);
    put8(&s, 0);
    put8(&s, 1);
    put8(&s, 1);
    put8(&s, PMIX_LOCAL);
    {
        pmix_value_t v;
        uint32_t u = 5;
        PMIX_VALUE_LOAD(&v, &u, PMIX_UINT32);
        px_buf_init(&b);
        px_pack_value(&b, &v);
        put_buf16(&s, &b);
    }
    st_get(&s, 0x80, 0, 1);
    st_get(&s, 0x80, 1, 1);
    put8(&s, ST_REPACK);
    put8(&s, 1);
    put8(&s, 0);
    put8(&s, 0);
    put8(&s, 1);
    put8(&s, 0);
    put8(&s, ST_DROP);
    put8(&s, 0);
    st_get(&s, 0, 0, 1);
    save("store", "commit-put", &s);

    px_store_destroy(js);
    px_store_destroy(cs);
}

/* ---- engine (fuzz_engine.c's script) ---- */

enum {
    EN_CONNECT,
    EN_PUT,
    EN_COMMIT,
    EN_FENCE,
    EN_FENCE_ALL,
    EN_GET,
    EN_RUN,
    EN_RAW_SERVER,
    EN_RAW_CLIENT,
    EN_RAW_REGION,
    EN_FINALIZE,
    EN_KILL,
    EN_NEW,
    EN_EVENTS,
    EN_ABORT,
    EN_JCTRL,
    EN_HOST,
    EN_PAGE,
    EN_CUT,
    EN_PUT_COMMIT,
    EN_KNOBS,
    EN_STORE_INTERNAL,
    EN_PUBSUB,
    EN_QUERY,
    EN_PSET,
};

static void en(seed *s, uint8_t op, uint8_t slot)
{
    put8(s, op);
    put8(s, slot);
}

/* A business card: key 0 ("card"), a byte object of 8 bytes. */
static void en_card(seed *s, uint8_t slot)
{
    en(s, EN_PUT_COMMIT, slot);
    put8(s, PMIX_GLOBAL);
    put8(s, 0);
    put8(s, 2);
    put8(s, 8);
    put(s, "addr:000", 8);
}

static void en_get(seed *s, uint8_t slot, uint8_t who, uint8_t key, uint8_t info)
{
    en(s, EN_GET, slot);
    put8(s, who);
    put8(s, key);
    put8(s, info);
    if (info & 0x02) {
        put8(s, 1);
    }
}

/* A frame for a raw step: type, tag, payload. */
static void en_frame(seed *s, uint8_t op, uint8_t slot, uint16_t type, uint8_t tag, px_buf *payload)
{
    en(s, op, slot);
    put8(s, (uint8_t)type);
    put8(s, tag);
    put_buf16(s, payload);
}

static void engine_seeds(void)
{
    seed s = {0};
    px_buf b;
    pmix_proc_t self, peer;

    PMIx_Load_procid(&self, "job", 0);
    PMIx_Load_procid(&peer, "job", 1);

    /* cards, a collecting fence, gets: one node, then two */
    for (int nodes = 1; nodes <= 2; nodes++) {
        put8(&s, nodes == 2 ? 0x06 : 0x04);
        for (int i = 0; i < 2 * nodes; i++) {
            en_card(&s, (uint8_t)i);
        }
        en(&s, EN_FENCE_ALL, 0);
        put8(&s, 0x01);
        en(&s, EN_RUN, 0);
        en_get(&s, 0, 1, 0, 0);
        en_get(&s, 1, (uint8_t)(2 * nodes - 1), 0, 0);
        en_get(&s, 0, 0xf3, 2, 0);
        en(&s, EN_RUN, 0);
        save("engine", nodes == 1 ? "fence-collect-1node" : "fence-collect-2nodes", &s);
    }

    /* process sets: queries from both nodes, a set defined, queried,
     * deleted twice, the namespace registered again */
    put8(&s, 0x06);
    en(&s, EN_QUERY, 0);
    put8(&s, 0x07); /* all three keys, no name: partial */
    en(&s, EN_QUERY, 3);
    put8(&s, 0x15 | (1 << 5)); /* the number and the members of "ice" */
    en(&s, EN_RUN, 0);
    en(&s, EN_PSET, 0);
    put8(&s, 2 << 1); /* define "tide" */
    put8(&s, 0x02 | 0x10 | 0x40);
    en(&s, EN_QUERY, 1);
    put8(&s, 0x1f | (2 << 5));
    en(&s, EN_RUN, 0);
    en(&s, EN_PSET, 2);
    put8(&s, 1 | (2 << 1)); /* delete "tide" on the other node: not there */
    en(&s, EN_PSET, 0);
    put8(&s, 1 | (2 << 1));
    en(&s, EN_HOST, 0);
    put8(&s, 0x83); /* the namespace deregistered and registered again */
    en(&s, EN_QUERY, 0);
    put8(&s, 0x03);
    en(&s, EN_QUERY, 1); /* the sets' number and the host's keys in one query */
    put8(&s, 0x81);
    put8(&s, 0x0f); /* the namespaces, the job's proc table */
    en(&s, EN_QUERY, 2);
    put8(&s, 0x80);
    put8(&s, 0x06); /* another namespace's proc table: the host has none */
    en(&s, EN_RUN, 0);
    save("engine", "psets", &s);

    /* collected data large enough for a region (64 KiB per process) */
    put8(&s, 0x04);
    for (int i = 0; i < 2; i++) {
        en(&s, EN_PUT_COMMIT, (uint8_t)i);
        put8(&s, PMIX_GLOBAL);
        put8(&s, 0);
        put8(&s, 3);
        put8(&s, 255);
    }
    en(&s, EN_FENCE_ALL, 0);
    put8(&s, 0x01);
    en(&s, EN_RUN, 0);
    en_get(&s, 0, 1, 0, 0);
    save("engine", "fence-collect-region", &s);

    /* failures: a client the server cannot send to, one that cannot send */
    put8(&s, 0x06);
    en(&s, EN_KNOBS, 1);
    put8(&s, 1);
    en(&s, EN_KNOBS, 2);
    put8(&s, 2 << 2);
    en_card(&s, 0);
    en_card(&s, 2);
    en(&s, EN_STORE_INTERNAL, 3);
    put8(&s, 3);
    put8(&s, 1);
    put8(&s, 0);
    put16(&s, 9);
    en(&s, EN_FENCE_ALL, 0);
    put8(&s, 0x03);
    put8(&s, 1);
    en(&s, EN_RUN, 0);
    en_get(&s, 3, 0, 0, 0);
    en(&s, EN_RUN, 0);
    save("engine", "failures", &s);

    /* direct modex: no fence, gets across nodes, a timeout */
    put8(&s, 0x06);
    en_card(&s, 2);
    en_card(&s, 3);
    en(&s, EN_RUN, 0);
    en_get(&s, 0, 2, 0, 0);
    en_get(&s, 1, 3, 1, 0x02);
    en(&s, EN_HOST, 3);
    put8(&s, 2);
    en(&s, EN_RUN, 0);
    save("engine", "dmodex", &s);

    /* the fence page */
    put8(&s, 0x05);
    en(&s, EN_PAGE, 0);
    put8(&s, 0);
    en(&s, EN_PAGE, 1);
    put8(&s, 0);
    en(&s, EN_PAGE, 0);
    put8(&s, 0);
    en_card(&s, 0);
    en_card(&s, 1);
    en(&s, EN_PAGE, 0);
    put8(&s, 1);
    en(&s, EN_PAGE, 1);
    put8(&s, 1);
    en(&s, EN_RUN, 0);
    en(&s, EN_PAGE, 0);
    put8(&s, 1);
    save("engine", "page", &s);

    /* events, abort, job control, finalize, deaths */
    put8(&s, 0x06);
    en(&s, EN_EVENTS, 0);
    put8(&s, 0);
    en(&s, EN_EVENTS, 1);
    put8(&s, 1);
    en(&s, EN_EVENTS, 2);
    put8(&s, 3);
    put8(&s, PMIX_RANGE_NAMESPACE);
    en(&s, EN_HOST, 0);
    put8(&s, 1);
    en(&s, EN_RUN, 0);
    en(&s, EN_ABORT, 1);
    put8(&s, 1);
    put8(&s, 3);
    en(&s, EN_JCTRL, 0);
    put8(&s, 0);
    put8(&s, 0x20);
    en(&s, EN_FENCE, 0);
    put8(&s, 0);
    put8(&s, 0);
    en(&s, EN_KILL, 1);
    en(&s, EN_RUN, 0);
    en(&s, EN_NEW, 1);
    en(&s, EN_FINALIZE, 2);
    en(&s, EN_HOST, 3);
    put8(&s, 0);
    en(&s, EN_RUN, 0);
    save("engine", "events-deaths", &s);

    /* publish and lookup: a lookup that waits, the publish that answers
     * it, a duplicate, a lookup with a timeout, an unpublish by another
     * process, then by the owner (fuzz_engine.c, do_pubsub) */
    put8(&s, 0x06);
    en(&s, EN_RUN, 0);
    en(&s, EN_PUBSUB, 1); /* lookup "card" with PMIX_WAIT */
    put8(&s, 1);
    put8(&s, 0x04);
    put8(&s, 0);
    put8(&s, 0);
    en(&s, EN_PUBSUB, 0); /* publish "card" = 7 */
    put8(&s, 0);
    put8(&s, 0);
    put8(&s, 0);
    put8(&s, 0);
    put8(&s, 0);
    put16(&s, 7);
    en(&s, EN_PUBSUB, 2); /* the same again, two keys, range namespace */
    put8(&s, 0x06);
    put8(&s, 0x01);
    put8(&s, 0);
    put8(&s, 1);
    put8(&s, PMIX_RANGE_NAMESPACE);
    put8(&s, 0);
    put16(&s, 8);
    en(&s, EN_PUBSUB, 3); /* lookup "k1" with PMIX_WAIT and a timeout */
    put8(&s, 1);
    put8(&s, 0x0c);
    put8(&s, 1);
    put8(&s, 1);
    put8(&s, 2);
    en(&s, EN_PUBSUB, 3); /* unpublish "card": not the owner */
    put8(&s, 2);
    put8(&s, 0);
    put8(&s, 0);
    put8(&s, 0);
    en(&s, EN_PUBSUB, 0); /* unpublish all of the owner's */
    put8(&s, 0x08);
    put8(&s, 0);
    put8(&s, 0);
    put8(&s, 0);
    en(&s, EN_RUN, 0);
    save("engine", "pubsub", &s);

    /* raw frames to the server, from a connected client: every request */
    put8(&s, 0x04);
    en(&s, EN_RUN, 0);
    {
        px_store *cs = cards_store();
        pmix_info_t info;
        bool t = true;
        PMIx_Info_load(&info, PMIX_COLLECT_DATA, &t, PMIX_BOOL);
        px_buf_init(&b);
        px_store_pack_commit(cs, &self, &b);
        en_frame(&s, EN_RAW_SERVER, 0, PX_MSG_COMMIT, 0, &b);
        px_buf_init(&b);
        px_pack_procs(&b, NULL, 0);
        px_pack_info(&b, &info, 1);
        px_pack_u8(&b, 0);
        en_frame(&s, EN_RAW_SERVER, 0, PX_MSG_FENCE, 100, &b);
        px_buf_init(&b);
        px_pack_proc(&b, &peer);
        px_pack_str(&b, "card");
        px_pack_info(&b, NULL, 0);
        en_frame(&s, EN_RAW_SERVER, 0, PX_MSG_GET, 101, &b);
        px_buf_init(&b);
        px_pack_i32(&b, PMIX_ERR_PROC_ABORTED);
        px_pack_proc(&b, &self);
        px_pack_u8(&b, PMIX_RANGE_NAMESPACE);
        px_pack_info(&b, &info, 1);
        en_frame(&s, EN_RAW_SERVER, 0, PX_MSG_NOTIFY, 0, &b);
        px_buf_init(&b);
        px_pack_procs(&b, &self, 1);
        px_pack_info(&b, &info, 1);
        en_frame(&s, EN_RAW_SERVER, 0, PX_MSG_JCTRL, 102, &b);
        px_buf_init(&b);
        px_pack_i32(&b, 1);
        px_pack_str(&b, "bye");
        px_pack_procs(&b, NULL, 0);
        en_frame(&s, EN_RAW_SERVER, 1, PX_MSG_ABORT, 103, &b);
        px_buf_init(&b);
        {
            char *svc[] = {"svc", NULL};
            pmix_info_t pub;
            PMIx_Info_load(&pub, "svc", "port", PMIX_STRING);
            px_pack_info(&b, &pub, 1);
            en_frame(&s, EN_RAW_SERVER, 0, PX_MSG_PUBLISH, 105, &b);
            px_buf_init(&b);
            px_pack_argv(&b, svc);
            px_pack_info(&b, &info, 1);
            en_frame(&s, EN_RAW_SERVER, 1, PX_MSG_LOOKUP, 106, &b);
            px_buf_init(&b);
            px_pack_argv(&b, svc);
            px_pack_info(&b, NULL, 0);
            en_frame(&s, EN_RAW_SERVER, 0, PX_MSG_UNPUBLISH, 107, &b);
            PMIx_Info_destruct(&pub);
        }
        {
            /* the later requests: a query, a spawn, output pulled and
             * released, input pushed and its end */
            char *keys[] = {PMIX_QUERY_NUM_PSETS, NULL}, *argv[] = {"true", NULL};
            pmix_proc_t all;
            PMIx_Load_procid(&all, self.nspace, PMIX_RANK_WILDCARD);
            px_buf_init(&b);
            px_pack_u32(&b, 1);
            px_pack_argv(&b, keys);
            px_pack_info(&b, NULL, 0);
            en_frame(&s, EN_RAW_SERVER, 0, PX_MSG_QUERY, 108, &b);
            px_buf_init(&b);
            px_pack_info(&b, NULL, 0);
            px_pack_u32(&b, 1);
            px_pack_str(&b, "true");
            px_pack_argv(&b, argv);
            px_pack_argv(&b, NULL);
            px_pack_str(&b, "/");
            px_pack_i32(&b, 1);
            px_pack_info(&b, NULL, 0);
            en_frame(&s, EN_RAW_SERVER, 1, PX_MSG_SPAWN, 109, &b);
            px_buf_init(&b);
            px_pack_u32(&b, 7);
            px_pack_procs(&b, &all, 1);
            px_pack_u16(&b, PMIX_FWD_STDOUT_CHANNEL);
            px_pack_info(&b, NULL, 0);
            en_frame(&s, EN_RAW_SERVER, 0, PX_MSG_IOF_PULL, 115, &b);
            px_buf_init(&b);
            px_pack_u32(&b, 7);
            en_frame(&s, EN_RAW_SERVER, 0, PX_MSG_IOF_DEREG, 116, &b);
            px_buf_init(&b);
            px_pack_procs(&b, &all, 1);
            px_pack_info(&b, NULL, 0);
            px_pack_u8(&b, 0);
            px_pack_bytes(&b, "input\n", 6);
            en_frame(&s, EN_RAW_SERVER, 1, PX_MSG_IOF_PUSH, 117, &b);
            px_buf_init(&b);
            px_pack_procs(&b, &all, 1);
            px_pack_info(&b, NULL, 0);
            px_pack_u8(&b, 1);
            px_pack_bytes(&b, NULL, 0);
            en_frame(&s, EN_RAW_SERVER, 1, PX_MSG_IOF_PUSH, 118, &b);
        }
        en(&s, EN_FENCE, 1);
        put8(&s, 0);
        put8(&s, 0x01);
        en(&s, EN_RUN, 0);
        px_buf_init(&b);
        en_frame(&s, EN_RAW_SERVER, 0, PX_MSG_FINALIZE, 104, &b);
        en(&s, EN_RUN, 0);
        save("engine", "raw-to-server", &s);

        /* a HELLO of its own on a new connection */
        put8(&s, 0x00);
        px_buf_init(&b);
        px_pack_u32(&b, PX_PROTOCOL);
        px_pack_proc(&b, &peer);
        px_pack_u32(&b, 4242);
        px_pack_info(&b, NULL, 0);
        en_frame(&s, EN_RAW_SERVER, 1, PX_MSG_HELLO, 1, &b);
        px_buf_init(&b);
        px_pack_u32(&b, 1);
        en_frame(&s, EN_RAW_SERVER, 1, PX_MSG_PCOLLECT, 0, &b);
        en(&s, EN_RUN, 0);
        save("engine", "raw-hello", &s);

        /* groups over two nodes, as raw GROUP frames: a construct of
         * every rank with a context id (the host's group upcall), its
         * destruct, then an invitation on node 0 that rank 1 accepts and
         * later leaves */
        {
            pmix_proc_t all[4];
            pmix_info_t ctx;
            for (int i = 0; i < 4; i++)
                PMIx_Load_procid(&all[i], "job", (pmix_rank_t)i);
            PMIx_Info_load(&ctx, PMIX_GROUP_ASSIGN_CONTEXT_ID, &t, PMIX_BOOL);
            put8(&s, 0x06);
            for (int i = 0; i < 4; i++)
                en_card(&s, (uint8_t)i);
            for (int i = 0; i < 4; i++) {
                px_buf_init(&b);
                px_pack_u8(&b, PX_GRP_CONSTRUCT);
                px_pack_str(&b, "grp");
                px_pack_procs(&b, all, 4);
                px_pack_info(&b, &ctx, 1);
                en_frame(&s, EN_RAW_SERVER, (uint8_t)i, PX_MSG_GROUP, 110, &b);
            }
            en(&s, EN_RUN, 0);
            for (int i = 0; i < 4; i++) {
                px_buf_init(&b);
                px_pack_u8(&b, PX_GRP_DESTRUCT);
                px_pack_str(&b, "grp");
                px_pack_procs(&b, NULL, 0);
                px_pack_info(&b, NULL, 0);
                en_frame(&s, EN_RAW_SERVER, (uint8_t)i, PX_MSG_GROUP, 111, &b);
            }
            en(&s, EN_RUN, 0);
            px_buf_init(&b);
            px_pack_u8(&b, PX_GRP_INVITE);
            px_pack_str(&b, "team");
            px_pack_procs(&b, &peer, 1);
            px_pack_info(&b, NULL, 0);
            en_frame(&s, EN_RAW_SERVER, 0, PX_MSG_GROUP, 112, &b);
            en(&s, EN_RUN, 0);
            px_buf_init(&b);
            px_pack_u8(&b, PX_GRP_JOIN);
            px_pack_str(&b, "team");
            px_pack_procs(&b, NULL, 0);
            px_pack_info(&b, NULL, 0);
            px_pack_proc(&b, &self);
            px_pack_u8(&b, 1);
            en_frame(&s, EN_RAW_SERVER, 1, PX_MSG_GROUP, 113, &b);
            en(&s, EN_RUN, 0);
            px_buf_init(&b);
            px_pack_u8(&b, PX_GRP_LEAVE);
            px_pack_str(&b, "team");
            px_pack_procs(&b, NULL, 0);
            px_pack_info(&b, NULL, 0);
            en_frame(&s, EN_RAW_SERVER, 1, PX_MSG_GROUP, 114, &b);
            en(&s, EN_KILL, 2);
            en(&s, EN_RUN, 0);
            save("engine", "raw-group", &s);
            PMIx_Info_destruct(&ctx);
        }

        /* raw replies to a client: WELCOME to its HELLO (tag 1), then a
         * fence's (tag 2) and a get's (tag 3) */
        px_store *js = job_store();
        put8(&s, 0x00);
        en(&s, EN_CONNECT, 0);
        px_buf_init(&b);
        px_pack_i32(&b, PMIX_SUCCESS);
        px_pack_u8(&b, 0);
        px_store_pack_job(js, "job", &b);
        en_frame(&s, EN_RAW_CLIENT, 0, PX_MSG_WELCOME, 1, &b);
        en(&s, EN_FENCE, 0);
        put8(&s, 0);
        put8(&s, 0x01);
        px_buf_init(&b);
        {
            px_buf rec;
            px_buf_init(&rec);
            pack_records(cs, true, &rec);
            px_pack_i32(&b, PMIX_SUCCESS);
            px_pack_u8(&b, PX_DATA_INLINE);
            px_pack_bytes(&b, rec.data, rec.size);
            px_buf_fini(&rec);
        }
        en_frame(&s, EN_RAW_CLIENT, 0, PX_MSG_FENCE_DONE, 2, &b);
        en_get(&s, 0, 1, 1, 0);
        {
            px_buf rec;
            px_buf_init(&rec);
            px_store_pack_record(cs, &peer, true, &rec);
            px_buf_init(&b);
            px_pack_i32(&b, PMIX_SUCCESS);
            px_pack_u8(&b, PX_GET_KIND_RECORDS);
            px_pack_bytes(&b, rec.data, rec.size);
            px_buf_fini(&rec);
        }
        en_frame(&s, EN_RAW_CLIENT, 0, PX_MSG_GET_DONE, 3, &b);
        px_buf_init(&b);
        px_pack_i32(&b, PMIX_ERR_PROC_ABORTED);
        px_pack_proc(&b, &peer);
        px_pack_u8(&b, PMIX_RANGE_NAMESPACE);
        px_pack_info(&b, &info, 1);
        en(&s, EN_EVENTS, 0);
        put8(&s, 1);
        en_frame(&s, EN_RAW_CLIENT, 0, PX_MSG_EVENT, 0, &b);
        en(&s, EN_JCTRL, 0);
        put8(&s, 0);
        put8(&s, 0);
        px_buf_init(&b);
        px_pack_i32(&b, PMIX_SUCCESS);
        px_pack_info(&b, &info, 1);
        en_frame(&s, EN_RAW_CLIENT, 0, PX_MSG_INFO_DONE, 4, &b);
        en(&s, EN_FENCE, 0);
        put8(&s, 0);
        put8(&s, 0x01);
        px_buf_init(&b);
        px_pack_i32(&b, PMIX_SUCCESS);
        px_pack_u8(&b, PX_DATA_REGION);
        en(&s, EN_RAW_REGION, 0);
        put8(&s, PX_MSG_FENCE_DONE);
        put8(&s, 5);
        put_buf16(&s, &b);
        px_buf_init(&b);
        pack_records(cs, true, &b);
        put_buf16(&s, &b);
        en(&s, EN_RUN, 0);
        save("engine", "raw-to-client", &s);
        px_store_destroy(js);
        px_store_destroy(cs);
        PMIx_Info_destruct(&info);
    }
}

/* ---- fuzz_hc: scripts of fuzz_hc.c's steps ---- */

enum {
    HC_FENCE,
    HC_GROUP,
    HC_DMODEX,
    HC_RAW,
    HC_MANGLE,
    HC_DELIVER,
    HC_DELIVER_ALL,
    HC_TIMER,
    HC_FAIL,
    HC_PUBSUB
};

static void hc_op(seed *s, uint8_t op, uint8_t node)
{
    put8(s, op);
    put8(s, node);
}

/* A fence on every node (procs mask, flags, algorithm index, data). */
static void hc_fences(seed *s, uint8_t mask, uint8_t flags, uint8_t algo, uint8_t nodes)
{
    for (uint8_t n = 0; n < nodes; n++) {
        hc_op(s, HC_FENCE, n);
        put8(s, mask);
        put8(s, flags);
        put8(s, algo);
        put8(s, flags & 1 ? 2 : 0);
        if (flags & 1) {
            put8(s, 'a' + n);
            put8(s, 'z');
        }
    }
}

static void hc_seeds(void)
{
    seed s = {0};

    hc_fences(&s, 0, 1, 2, 4); /* the whole job, collecting, recdbl */
    hc_op(&s, HC_DELIVER_ALL, 0);
    save("hc", "fences-all", &s);
    hc_fences(&s, 0x55, 0, 4, 4); /* even ranks, a tree:3 barrier */
    hc_op(&s, HC_DELIVER_ALL, 0);
    save("hc", "fences-subset", &s);
    for (uint8_t n = 0; n < 4; n++) { /* a group with a context id */
        hc_op(&s, HC_GROUP, n);
        put8(&s, 0);
        put8(&s, 4);
        put8(&s, 1);
        put8(&s, 'g');
    }
    hc_op(&s, HC_DELIVER_ALL, 0);
    save("hc", "groups", &s);
    hc_op(&s, HC_DMODEX, 0); /* rank 5, its request mangled on the way */
    put8(&s, 0);
    put8(&s, 5);
    hc_op(&s, HC_MANGLE, 0);
    put8(&s, 0);
    put8(&s, 3);
    put8(&s, 0x41);
    hc_op(&s, HC_DELIVER_ALL, 0);
    save("hc", "dmodex-mangled", &s);
    hc_fences(&s, 0, 0x21, 1, 3); /* node 3 never fences; then it is lost */
    hc_op(&s, HC_DELIVER, 0);
    hc_op(&s, HC_FAIL, 0);
    put8(&s, 1 + 4 * 3);
    hc_op(&s, HC_TIMER, 0);
    hc_op(&s, HC_DELIVER_ALL, 0);
    save("hc", "lost-node", &s);
    hc_op(&s, HC_FAIL, 1); /* rank 3 leaves, the news spreads */
    put8(&s, 2 + 4 * 3 + 0x80);
    hc_fences(&s, 0, 0, 0, 4);
    hc_op(&s, HC_DELIVER_ALL, 0);
    save("hc", "departed", &s);

    /* data-service bodies: a lookup request (keys and PMIX_WAIT) read on
     * node 0, an answer with two published values read on node 1 */
    char *keys[] = {"ocean", "ice", NULL};
    pmix_info_t info[2];
    bool yes = true;
    int tmo = 3;
    pmix_byte_object_t bo;
    PMIx_Info_load(&info[0], PMIX_WAIT, &yes, PMIX_BOOL);
    PMIx_Info_load(&info[1], PMIX_TIMEOUT, &tmo, PMIX_INT);
    if (px_pubsub_pack_request(keys, info, 2, &bo) != PMIX_SUCCESS)
        die("px_pubsub_pack_request");
    hc_op(&s, HC_PUBSUB, 0);
    put_blob16(&s, bo.bytes, bo.size);
    PMIx_Byte_object_destruct(&bo);
    save("hc", "pubsub-request", &s);
    pmix_pdata_t pd[2];
    PMIx_Pdata_construct(&pd[0]);
    PMIx_Pdata_construct(&pd[1]);
    PMIx_Load_procid(&pd[0].proc, "fz", 1);
    PMIx_Load_key(pd[0].key, "ocean");
    PMIx_Value_load(&pd[0].value, "tcp://10.0.0.1:5000", PMIX_STRING);
    PMIx_Load_procid(&pd[1].proc, "fz", 6);
    PMIx_Load_key(pd[1].key, "ice");
    PMIx_Value_load(&pd[1].value, &tmo, PMIX_INT);
    if (px_pubsub_pack_answer(pd, 2, &bo) != PMIX_SUCCESS)
        die("px_pubsub_pack_answer");
    hc_op(&s, HC_PUBSUB, 1);
    put_blob16(&s, bo.bytes, bo.size);
    PMIx_Byte_object_destruct(&bo);
    PMIx_Pdata_destruct(&pd[0]);
    PMIx_Pdata_destruct(&pd[1]);
    PMIx_Info_destruct(&info[0]);
    PMIx_Info_destruct(&info[1]);
    save("hc", "pubsub-answer", &s);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_seeds DIR (writes DIR/wire, DIR/store, DIR/engine, DIR/hc)\n");
        return 2;
    }
    outdir = argv[1];
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        die("cannot make the output directory");
    }
    wire_seeds();
    store_seeds();
    engine_seeds();
    hc_seeds();
    return 0;
}
