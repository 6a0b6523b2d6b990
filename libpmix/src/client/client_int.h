/*
 * client_int.h - the client engine's internal state, shared by its files:
 *
 *   client.c   context, connection, handshake, dispatch of replies,
 *              put/commit, finalize, abort, job control
 *   get.c      PMIx_Get: local answers first, the server otherwise
 *   fence.c    PMIx_Fence
 *   events.c   event handler chains
 *   group.c    PMIx groups
 *   pubsub.c   publish, lookup, unpublish
 *
 * Requests to the server are kept in a list keyed by tag. A reply with an
 * unknown tag is dropped: its request timed out and was already answered.
 */
#ifndef PX_CLIENT_INT_H
#define PX_CLIENT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "client/px_client.h"
#include "px_page.h"
#include "px_proto.h"
#include "store/px_store.h"
#include "wire/px_wire.h"

typedef struct px_req {
    struct px_req *next;
    px_client *c;
    uint32_t tag;
    uint16_t reply_type; /* the message type that answers it */
    px_timer *timer;
    pmix_op_cbfunc_t opcb;
    pmix_value_cbfunc_t valcb;
    pmix_info_cbfunc_t infocb;
    pmix_lookup_cbfunc_t lookupcb;
    pmix_spawn_cbfunc_t spawncb;
    void *cbdata;
    pmix_proc_t proc; /* GET: whose data */
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_info_t *qual; /* GET: qualifiers for job-level lookups */
    size_t nqual;
    bool page;                    /* FENCE: arrived on the fence page (counted in page_open) */
    uint8_t gop;                  /* GROUP: the operation (PX_GRP_*) */
    char grp[PMIX_MAX_NSLEN + 1]; /* GROUP: the group's name */
    uint16_t fwd;                 /* SPAWN: PMIX_FWD_*_CHANNEL asked (iof.c's sink) */
    bool fwd_tag;                 /* SPAWN: and PMIX_IOF_TAG_OUTPUT */
} px_req;

typedef struct px_cgroup px_cgroup; /* a group this process is a member of (group.c) */
typedef struct px_cginfo px_cginfo; /* a member's group information (group.c) */
typedef struct px_ciof px_ciof;     /* an output pull of this process (iof.c) */

typedef struct px_evh {
    struct px_evh *next;
    size_t id;
    pmix_status_t *codes;
    size_t ncodes;
    pmix_notification_fn_t fn;
    char *name;   /* PMIX_EVENT_HDLR_NAME, or NULL */
    int position; /* 0 first, 1 in a group, 2 last */
    int category; /* the group: 0 one code, 1 several, 2 default (none) */
    int in_group; /* -1 first in its group, 1 last in it, 0 neither */
    bool prepend; /* PMIX_EVENT_HDLR_PREPEND */
    bool has_obj; /* PMIX_EVENT_RETURN_OBJECT given: `obj` goes to each call */
    void *obj;
} px_evh;

/* An event kept for handlers registered after it was raised: the
 * programming models declared (PMIX_MODEL_DECLARED), so that a runtime
 * that starts later (OpenMP after MPI, the hybrid use case) still learns
 * them; and the debugger's releases (PMIX_DEBUGGER_RELEASE), so that one
 * that reaches a process after it connected but before its PMIx_Init
 * waits for it (a debugger daemon sees it connected) still releases it.
 * At most PX_EVCACHE_MAX are kept, the first ones. */
#define PX_EVCACHE_MAX 8
typedef struct px_evcache {
    struct px_evcache *next;
    pmix_status_t status;
    pmix_proc_t source;
    pmix_data_range_t range;
    pmix_info_t *info;
    size_t ninfo;
} px_evcache;

typedef struct px_evrun {
    struct px_evrun *next;
    px_client *c;
    pmix_status_t status;
    pmix_proc_t source;
    pmix_data_range_t range;
    pmix_info_t *info;
    size_t ninfo;
    size_t *ids; /* matching handlers, in order, when the event arrived */
    size_t nids, next_handler;
    px_timer *timer;
    bool running;         /* a handler holds it */
    pmix_info_t *results; /* what the handlers so far returned, in order */
    size_t nresults;
    pmix_info_t *hinfo; /* info + PMIX_EVENT_RETURN_OBJECT for the running handler */
    size_t nhinfo;
} px_evrun;

struct px_client {
    const px_platform_ops *pops;
    void *pctx;
    pmix_proc_t self;
    bool connected; /* WELCOME received and the connection is up */
    bool lost;      /* the connection went away */
    px_store *store;
    uint32_t next_tag;
    px_req *reqs;
    px_evh *handlers;
    size_t next_evid;
    px_evrun *runs;
    px_evcache *evcache; /* oldest first */
    /* The fence page (px_page.h), if the server shared one: */
    px_page_hdr *page;     /* NULL once the page is off for this client */
    px_page_hdr *page_map; /* the mapping itself, kept while the client lives */
    size_t page_len;       /* mapped */
    uint32_t page_n;       /* participants, read once when the page came (px_page_released) */
    bool page_bound;       /* the platform's page_bound: sleep with no deadline */
    uint32_t ncommits;     /* commits sent, mirrored in page->commits[rank] */
    unsigned page_open;    /* arrivals on the page whose fence has not ended */
    /* collects taken from the page whose records the store still holds,
     * and the newest one taken (see px_page_released) */
    uint32_t pheld[8];
    unsigned npheld;
    uint32_t plast;
    /* this process's record as of its last commit, cut for local readers
     * (what the server would write for it), for its slot on the page;
     * empty before the first commit or if it could not be built */
    px_buf prec;
    px_cgroup *groups; /* the groups this process is a member of */
    /* The group information members gave in the constructs this process
     * was a member of, newest first; kept after the groups' destruct */
    px_cginfo *ginfos;
    /* A tool (tool.c): its HELLO says so, its WELCOME names it and the
     * server. */
    bool tool;
    pmix_proc_t server;
    px_ciof *iofs; /* output pulls, in pull order (iof.c) */
    size_t next_iofid;
};

/* client.c */
px_req *px_cli_req_new(px_client *c, uint16_t reply_type, double timeout);
void px_cli_req_free(px_client *c, px_req *r);
/* Send a frame built with px_buf_init_frame; on failure the request (if
 * any) is forgotten without its callback and an error returned. */
pmix_status_t px_cli_send(px_client *c, px_buf *b, px_req *r);
double px_cli_timeout(const pmix_info_t *info, size_t ninfo);

/* get.c / fence.c: reply handlers (payload after the status) */
void px_cli_get_reply(px_client *c, px_req *r, pmix_status_t status, px_buf *b);
/* pubsub.c: LOOKUP_DONE (payload after the status) */
void px_cli_lookup_reply(px_client *c, px_req *r, pmix_status_t status, px_buf *b);
void px_cli_spawn_reply(px_client *c, px_req *r, pmix_status_t status, px_buf *b);
/* A region that came with a frame (px_platform.h), or none (data NULL). */
typedef struct px_cli_region {
    const void *data;
    size_t len;
    void (*release)(void *arg);
    void *arg;
} px_cli_region;

/* `region`, if not NULL, is consumed: kept (released later) or released. */
void px_cli_fence_reply(px_client *c, px_req *r, pmix_status_t status, px_buf *b,
                        px_cli_region *region);

/* fence.c: the fence page is no longer to be trusted (this client's own
 * misuse, or it cannot use the page): every participant goes to the server
 * from now on. */
void px_cli_page_break(px_client *c, const char *why);

/* group.c */
void px_cli_group_reply(px_client *c, px_req *r, pmix_status_t status, px_buf *b);
/* True for the keys px_cli_group_get answers. */
bool px_cli_group_key(const char *key);
/* PMIX_GROUP_MEMBERSHIP, PMIX_GROUP_CONTEXT_ID of {group, wildcard}, and
 * PMIX_GROUP_NAMES of a process, from the groups this process is a member
 * of: PMIX_SUCCESS with a new value in *out; PMIX_ERR_NOT_FOUND when the
 * group is known and has no such value (no context id: a final answer);
 * PMIX_ERR_NOT_SUPPORTED when it knows nothing of the process or group. */
pmix_status_t px_cli_group_get(px_client *c, const pmix_proc_t *proc, const char *key,
                               pmix_value_t **out);
/* A member's group information (PMIX_GROUP_LOCAL_CID, PMIX_GROUP_INFO's
 * entries) for `key`: with a PMIX_GROUP_CONTEXT_ID among `qual`, what
 * `proc` gave in the construct of that id, else in the newest construct
 * where it gave `key`. PMIX_SUCCESS with a new value in *out;
 * PMIX_ERR_NOT_FOUND when the context id is one this process knows
 * group information of but `proc` gave no `key` there (a final answer);
 * PMIX_ERR_NOT_SUPPORTED when nothing here answers. */
pmix_status_t px_cli_group_info_get(px_client *c, const pmix_proc_t *proc, const char *key,
                                    const pmix_info_t *qual, size_t nqual, pmix_value_t **out);
void px_cli_groups_destroy(px_client *c);
/* tool.c: the tool's part of WELCOME (after the job data). */
pmix_status_t px_cli_tool_welcome(px_client *c, px_buf *b);

/* events.c */
void px_cli_event_raise(px_client *c, pmix_status_t status, const pmix_proc_t *source,
                        pmix_data_range_t range, const pmix_info_t *info, size_t ninfo);
pmix_status_t px_cli_event_msg(px_client *c, px_buf *b);
void px_cli_events_destroy(px_client *c);
/* iof.c: an IOF_DATA frame (payload), and the pulls when the client goes */
pmix_status_t px_cli_iof_msg(px_client *c, px_buf *b);
void px_cli_iof_destroy(px_client *c);
/* A spawn with PMIX_FWD_STDOUT/_STDERR/_STDDIAG succeeded: the output of
 * `nspace` that no handler of this process takes is written to its own
 * stdout/stderr (tagged if `tag`). -1 when out of memory. */
int px_cli_iof_sink(px_client *c, const char *nspace, uint16_t channels, bool tag);

#endif /* PX_CLIENT_INT_H */
