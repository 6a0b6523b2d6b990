/*
 * server_int.h - the server engine's internal state, shared by its files:
 *
 *   server.c   contexts, registration, connections, handshake, dispatch
 *   fence.c    the collective tracker
 *   get.c      Gets from clients, direct modex in both directions
 *   misc.c     abort, events, job control
 *   psets.c    process sets: the table, the host's definitions, queries
 *   group.c    groups: construct, destruct, invite/join, leave
 *   pubsub.c   publish, lookup, unpublish (handed to the host)
 *
 * A server keeps short singly linked lists: namespaces, registered
 * clients, open connections, trackers and parked requests. A node serves
 * tens to a few hundred clients, so lists are scanned; nothing here is
 * sized by the job (a 64k-rank job on a 16-process node costs 16 entries).
 */
#ifndef PX_SERVER_INT_H
#define PX_SERVER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "px_page.h"
#include "px_proto.h"
#include "server/px_server.h"
#include "store/px_store.h"
#include "wire/px_wire.h"

typedef struct px_nspace {
    struct px_nspace *next;
    char name[PMIX_MAX_NSLEN + 1];
    int nlocal;        /* local processes, from registration */
    uint32_t job_size; /* PMIX_JOB_SIZE, 0 if the host did not say */
    pmix_rank_t *dead; /* ranks known to have died */
    size_t ndead, capdead;
    /* The fence page (px_page.h), decided at the namespace's first
     * WELCOME: made then, or never (page_off). Once broken it is off for
     * good but stays mapped: the commit counts are still read. */
    px_page *page;
    px_page_hdr *pg;
    uint32_t pg_n; /* the page's participants, as written (px_page_released) */
    bool page_off;
    uint64_t half_used[2]; /* bytes of each data half written (page-rounded) */
    bool pc_wait;          /* a PCOLLECT waits for commits still on their way */
    uint32_t pc_gen;       /* ... of this generation */
} px_nspace;

typedef enum {
    PX_SC_REGISTERED, /* known, not connected */
    PX_SC_HELLO,      /* handshake waiting for the host */
    PX_SC_CONNECTED,
    PX_SC_FINALIZING, /* finalize waiting for the host */
    PX_SC_FINALIZED,
    PX_SC_DEAD,
} px_sc_state;

typedef struct px_sclient {
    struct px_sclient *next;
    px_server *srv;
    pmix_proc_t proc;
    uint32_t uid, gid;
    void *server_object;
    uint64_t conn; /* valid while connected */
    bool has_conn;
    px_sc_state state;
    bool committed;
    uint32_t ncommits;    /* commits received (see px_page.h) */
    uint32_t pending_tag; /* HELLO or FINALIZE tag while the host decides */
    bool tool;            /* a tool (tool.c): not registered, forgotten when it goes */
} px_sclient;

typedef struct px_sconn {
    struct px_sconn *next;
    uint64_t id;
    uint32_t uid, gid;
    px_sclient *client; /* NULL until HELLO */
} px_sconn;

typedef enum {
    PX_TRK_GATHERING, /* waiting for local participants */
    PX_TRK_HOST,      /* handed to the host, waiting for its callback */
    PX_TRK_ABANDONED, /* failed locally; freed when the host calls back */
} px_trk_state;

/* At most this many host directives ("pmixlab." info keys) per fence. */
#define PX_HOST_KEYS 4

typedef struct px_contrib {
    px_sclient *client;
    uint32_t tag;
} px_contrib;

typedef struct px_tracker {
    struct px_tracker *next;
    px_server *srv;
    pmix_proc_t *procs; /* sorted by (nspace, rank), duplicates removed */
    size_t nprocs;
    bool collect;
    bool all_local;
    size_t nexpected, ncontrib;
    px_contrib *contrib; /* nexpected slots */
    px_trk_state state;
    px_timer *timer;
    double timeout;
    uint64_t id;       /* for messages: "fence #id" */
    pmix_info_t *host; /* "pmixlab." directives for the host: PX_HOST_KEYS, or NULL */
    size_t nhost;
} px_tracker;

/* A failed collective's debt: the local participants that had not joined
 * it when it failed (timeout, death). The next fence with the same set
 * from each of them is that collective: it fails at once with `status`, so
 * that every process's sequence of fences stays aligned and a late joiner
 * never completes a later collective of the others. */
typedef struct px_tomb {
    struct px_tomb *next;
    pmix_proc_t *procs; /* the set, as trackers hold it */
    size_t nprocs;
    pmix_status_t status;
    px_sclient **owed;
    size_t nowed;
} px_tomb;

/* A Get parked until a local process commits, or a remote one's data
 * arrives from the host. */
typedef struct px_pget {
    struct px_pget *next;
    px_server *srv;
    px_sclient *requester; /* NULL for a host's dmodex request */
    uint32_t tag;
    pmix_proc_t target;
    px_timer *timer;
    pmix_dmodex_response_fn_t host_cb; /* host's request */
    void *host_cbdata;
} px_pget;

/* A client to drop from a timer (server.c, drop_later): a send to it
 * failed. Kept on the server's list until the timer fires, so that
 * px_server_destroy can cancel it. */
typedef struct px_drop {
    struct px_drop *next;
    px_server *srv;
    pmix_proc_t proc; /* looked up again when the timer fires */
    px_timer *timer;
} px_drop;

/* One direct-modex upcall in flight for a remote process. */
typedef struct px_dmx {
    struct px_dmx *next;
    px_server *srv;
    pmix_proc_t target;
    bool abandoned; /* the server went on; free when the host calls back */
} px_dmx;

typedef struct px_pset px_pset;
/* A group this server knows: constructed, with a member here. */
typedef struct px_sgroup {
    struct px_sgroup *next;
    char name[PMIX_MAX_NSLEN + 1];
    pmix_proc_t *members; /* group-rank order */
    size_t nmembers;
    bool has_ctxid;
    uint64_t ctxid;
    bool notify_termination; /* PMIX_GROUP_NOTIFY_TERMINATION at construct */
} px_sgroup;

/* A local member that called a group operation (or accepted an
 * invitation), waiting for its reply. */
typedef struct px_gslot {
    px_sclient *client; /* NULL once deregistered */
    uint32_t tag;
    bool joiner; /* answered an invitation (PMIx_Group_join) */
} px_gslot;

/* A group operation being gathered on this node (group.c). */
typedef struct px_gtrk {
    struct px_gtrk *next;
    px_server *srv;
    pmix_group_operation_t op; /* PMIX_GROUP_CONSTRUCT or PMIX_GROUP_DESTRUCT */
    char name[PMIX_MAX_NSLEN + 1];
    pmix_proc_t *procs; /* members, group-rank order */
    size_t nprocs;
    bool invite;    /* built by PMIx_Group_invite: members answer with join */
    bool *answered; /* invite: procs[i] accepted, declined or died */
    /* An invitation of processes of other nodes (group.c, "Invitations
     * across nodes"). On the leader's node: `accepted` says which remote
     * procs[i] accepted, `nremote` how many remote ones have not answered
     * yet, and `has_remote` that they still await the outcome. On an
     * invited process's node, `awaiting_go`: its local members accepted a
     * remote leader's invitation and wait for the outcome (procs holds the
     * leader and them until it comes with the group). */
    bool *accepted;
    size_t nremote;
    bool has_remote;
    bool awaiting_go;
    px_sclient *inviter;  /* invite: a leader that is not a member, or NULL */
    uint32_t inviter_tag; /* ... and its request's tag */
    bool has_leader;
    pmix_proc_t leader;
    bool assign_ctxid, optional, notify_termination;
    bool all_local; /* every member is a client of this server */
    bool partial;   /* a member dropped out (declined, died, timed out) */
    double timeout;
    px_timer *timer;
    px_trk_state state;
    size_t nexpected; /* local members still expected */
    px_gslot *slots;  /* local members that joined; room for every local member */
    size_t nslots;
    uint64_t id; /* for messages: "group op #id" */
    /* A construct's group information (PMIX_GROUP_LOCAL_CID,
     * PMIX_GROUP_INFO) of the local members that gave some: for each, its
     * proc then its infos (px_pack_proc, px_pack_info). */
    px_buf ginfo;
    /* A construct the host holds (HOST): members of other nodes whose
     * PMIX_GROUP_LEFT came before the host's answer (their nodes had it
     * first). The group kept here is made without them. */
    pmix_proc_t *left;
    size_t nleft;
} px_gtrk;

typedef struct px_siof px_siof; /* an output subscription (iof.c) */

struct px_server {
    const px_server_host *hops;
    void *hctx;
    const px_platform_ops *pops;
    void *pctx;
    px_store *store;
    px_nspace *nspaces;
    px_sclient *clients;
    px_siof *iofs; /* output subscriptions of clients and tools (iof.c) */
    px_sconn *conns;
    px_tracker *trackers;
    px_tomb *tombs;
    px_pget *pgets;
    px_dmx *dmxs;
    px_drop *drops; /* timers that will drop a client */
    px_pset *psets; /* process sets, in the order they were defined (psets.c) */
    uint64_t next_fence_id;
    px_gtrk *gtrks;     /* group operations being gathered */
    px_sgroup *sgroups; /* groups with a member here */
    /* Invitations of remote leaders that ended before any local process
     * accepted (group.c): a later accept is refused at once rather than
     * left waiting for an outcome that has come already. A ring of the
     * latest PX_GCLOSED_MAX. */
#define PX_GCLOSED_MAX 32
    struct px_gclosed {
        char name[PMIX_MAX_NSLEN + 1];
        pmix_proc_t leader;
    } * gclosed; /* PX_GCLOSED_MAX of them once one is noted (NULL before:
                  * 16 kB that most servers never need, and pmixsim has
                  * one server per simulated node) */
    size_t ngclosed;
    /* Tools (tool.c): allowed at all, of which uid, the server's name. */
    bool tools_on;
    uint32_t tool_uid;
    pmix_proc_t self;
    size_t ntools; /* tools in `clients`, connected or waiting for the host */
};

/* server.c */
px_nspace *px_srv_nspace(px_server *s, const char *name);
px_sclient *px_srv_client(px_server *s, const pmix_proc_t *proc);
bool px_srv_is_dead(px_server *s, const pmix_proc_t *proc);
/* `proc` (or, for a wildcard, any local process of its namespace)
 * finalized and closed its connection: it will join no fence until it
 * connects again. */
bool px_srv_is_departed(px_server *s, const pmix_proc_t *proc);
/* Collected data at least this large is shared with a node's clients as
 * one region (px_platform.h) rather than copied into each reply. */
#define PX_REGION_MIN ((size_t)32 << 10)

/* Finish frame `b` and send it to `c` (with `region` attached, if not
 * NULL); dropped if `c` has no connection. */
void px_srv_send(px_server *s, px_sclient *c, px_buf *b);
void px_srv_send_region(px_server *s, px_sclient *c, px_buf *b, px_region *region);
/* iof.c: IOF_PULL and IOF_DEREG, and a client's subscriptions when it goes */
pmix_status_t px_srv_iof_pull(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);
pmix_status_t px_srv_iof_dereg(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);
void px_srv_iof_client_gone(px_server *s, px_sclient *c);
/* IOF_PUSH: input for ranks' stdin, handed to the host (push_stdin) */
pmix_status_t px_srv_iof_push(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);
/* A subscription of `c` made by the server itself (id 0: a spawn's
 * PMIX_FWD_STDOUT / _STDERR); procs are copied. -1 when out of memory. */
int px_srv_iof_subscribe(px_server *s, px_sclient *c, uint32_t id, const pmix_proc_t *procs,
                         size_t nprocs, uint16_t channels);

void px_srv_reply_status(px_server *s, px_sclient *c, uint16_t type, uint32_t tag,
                         pmix_status_t status);
void px_srv_logf(px_server *s, px_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void px_srv_forget_conn(px_server *s, uint64_t id);

/* tool.c */
bool px_srv_tool_uid_ok(const px_server *s, uint32_t uid);
/* HELLO from a tool on connection `k`, asking for name `want` (empty
 * namespace: any). The tool is kept and the host asked; PMIX_SUCCESS even
 * when the tool is refused (it hears so in its WELCOME). */
pmix_status_t px_srv_tool_hello(px_server *s, px_sconn *k, uint32_t tag, const pmix_proc_t *want);
/* Forget tool `t` (its connection is closed or being closed). */
void px_srv_tool_gone(px_server *s, px_sclient *t);
/* True if the host has a query upcall (version 4 on). */
bool px_srv_host_queries(const px_server *s);
/* The rest of a QUERY from `c` (psets.c): `q` (nq queries, nkeys keys in
 * all; taken) to the host's query upcall for its keys, `pres` (npres;
 * taken) the process-set answers found already. The INFO_DONE carries
 * both. */
pmix_status_t px_srv_query_host(px_server *s, px_sclient *c, uint32_t tag, pmix_query_t *q,
                                size_t nq, size_t nkeys, pmix_info_t *pres, size_t npres);

/* fence.c */
pmix_status_t px_srv_fence(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);
void px_srv_fence_proc_died(px_server *s, const pmix_proc_t *proc, pmix_status_t why);
/* Client `c` finalized and closed its connection: fail the fences it has
 * not joined (fence.c). */
void px_srv_fence_departed(px_server *s, const px_sclient *c);
void px_srv_fence_client_gone(px_server *s, const px_sclient *c);
void px_srv_fence_destroy_all(px_server *s);
/* The fence page of `ns` for a client being welcomed: made at the first
 * WELCOME if the namespace qualifies, else NULL (and never later). */
px_page *px_srv_page_for(px_server *s, px_nspace *ns);
/* Stop using the page of `ns` (if any) for good: sleepers go to the server. */
void px_srv_page_break(px_server *s, px_nspace *ns, const char *why);
/* Unmap the page of `ns` (deregistration, destroy). */
void px_srv_page_free(px_server *s, px_nspace *ns);
/* True if `c` has sent commits the server has not read yet. */
bool px_srv_commit_pending(px_server *s, const px_sclient *c);
/* PCOLLECT from `c`; and a commit from `c` arrived (a PCOLLECT may have
 * waited for it). */
pmix_status_t px_srv_page_collect(px_server *s, px_sclient *c, px_buf *b);
void px_srv_page_committed(px_server *s, px_sclient *c);

/* group.c */
pmix_status_t px_srv_group(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);
void px_srv_group_proc_died(px_server *s, const pmix_proc_t *proc, pmix_status_t why);
/* A server's private event (never delivered to a client, refused from
 * one): the outcome of an invitation, from the leader's node to the nodes
 * of the processes it invited (group.c). */
#define PX_GROUP_INVITE_DONE (PMIX_EXTERNAL_ERR_BASE - 1601)
/* The last info of a client's event that a server hands its host for the
 * other nodes (px_srv_notify): the servers there deliver it without this
 * key and never act on it as on their peers' group answers, so a process
 * cannot answer an invitation or leave a group in another's name. */
#define PX_KEY_CLIENT_EVENT "pmixlab.event.from_client"
/* An event the host delivered from another node (px_server_notify): the
 * group code takes what concerns its invitations and groups. True if the
 * event was the server's own and goes no further. */
bool px_srv_group_heard(px_server *s, pmix_status_t status, const pmix_proc_t *source,
                        const pmix_info_t *info, size_t ninfo);
/* Local client `c` finalized and exited: the group operations it has not
 * joined fail (or, optional ones and invitations, go on without it) as for
 * a member that died. */
void px_srv_group_departed(px_server *s, const px_sclient *c);
void px_srv_group_client_gone(px_server *s, const px_sclient *c);
void px_srv_group_destroy_all(px_server *s);
/* Replace the entries of *procs that name a group this server knows
 * ({group, wildcard}: every member; {group, r}: its member of group rank
 * r) by its members; *procs is reallocated. PMIX_ERR_BAD_PARAM for a rank
 * the group does not have; the array is unchanged on failure. */
pmix_status_t px_srv_group_expand(px_server *s, pmix_proc_t **procs, size_t *n);

/* get.c */
pmix_status_t px_srv_get(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);
void px_srv_get_committed(px_server *s, const pmix_proc_t *proc);
void px_srv_get_proc_died(px_server *s, const pmix_proc_t *proc, pmix_status_t why);
void px_srv_get_client_gone(px_server *s, px_sclient *c);
void px_srv_get_destroy_all(px_server *s);

/* misc.c */
pmix_status_t px_srv_abort(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);
pmix_status_t px_srv_notify(px_server *s, px_sclient *c, px_buf *b);
pmix_status_t px_srv_jctrl(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);
/* Send event `status` to client `c` alone. */
void px_srv_event_to(px_server *s, px_sclient *c, pmix_status_t status, const pmix_proc_t *source,
                     pmix_data_range_t range, const pmix_info_t *info, size_t ninfo);
/* Whether process `p` is in `range` of an event from `source` (px_server.h,
 * px_server_notify, lists the rules). */
bool px_srv_in_range(const pmix_proc_t *p, const pmix_proc_t *source, pmix_data_range_t range,
                     const pmix_info_t *info, size_t ninfo);
void px_srv_event_to_clients(px_server *s, pmix_status_t status, const pmix_proc_t *source,
                             pmix_data_range_t range, const pmix_info_t *info, size_t ninfo,
                             const px_sclient *except);

/* pubsub.c */
pmix_status_t px_srv_publish(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);
pmix_status_t px_srv_lookup(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);
/* spawn.c: a SPAWN, handed to the host's spawn upcall */
pmix_status_t px_srv_spawn(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);
pmix_status_t px_srv_unpublish(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);
/* psets.c */
/* The sets the job data of `nspace` defines (its PMIX_APP_INFO_ARRAYs),
 * replacing those an earlier registration of it defined. On failure the
 * namespace defines none. */
pmix_status_t px_srv_psets_register(px_server *s, const char *nspace, const pmix_info_t info[],
                                    size_t ninfo);
void px_srv_psets_drop_nspace(px_server *s, const char *nspace); /* its job data's sets go */
void px_srv_psets_destroy(px_server *s);
/* The names of every set `p` is a member of, in the table's order, joined
 * with commas, into `out` (a PMIX_STRING); PMIX_ERR_NOT_FOUND if none. */
pmix_status_t px_srv_pset_names(px_server *s, const pmix_proc_t *p, pmix_value_t *out);
/* QUERY from `c`: the process-set keys answered here, the others passed
 * to the host's query upcall (tool.c); one INFO_DONE with the answers. */
pmix_status_t px_srv_query(px_server *s, px_sclient *c, uint32_t tag, px_buf *b);

#endif /* PX_SERVER_INT_H */
