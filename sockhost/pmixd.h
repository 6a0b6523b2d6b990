/*
 * pmixd.h - what the parts of pmixd, the node daemon, share.
 *
 *   pmixd.c        options, the control connection to pmixrun, the mesh of
 *                  daemon connections, the ranks of this node, the loop
 *   pmixd_coll.c   the host core's px_hc on the mesh: fences across
 *                  nodes, failures, direct modex (the server's cross-node
 *                  upcalls)
 *
 * The node's job is a pmixrun `job` (pmixrun.h) whose map spans nodes: the
 * job data, the server engine and its other upcalls, process launch and
 * output forwarding are pmixrun's (pmixrun_job.c, pmixrun_launch.c,
 * pmixrun_iof.c).
 *
 * One thread, one loop (as pmixrun, pmixrun.h). The daemon's descriptors
 * (signalfd, the control connection, the listener, the peers' and the
 * ranks' pipes) are watches on the job's platform, made for external
 * progress, whose loop also serves the server engine's clients and
 * timers; run() turns it with px_posix_run_once. The engine's cross-node
 * upcalls (fence_nb, direct_modex: pmixd_coll.c, context the daemon) and
 * the answers of job_dmodex_request run on the main thread inside a turn
 * and do their work at once: no queue, no lock, no global.
 */
#ifndef PMIXD_H
#define PMIXD_H

#include <stdbool.h>
#include <stdint.h>

#include <px_coll.h>

#include "launchtree.h"
#include "pmixrun.h"
#include "tcplink.h"
#include "px_hostcore.h"

struct px_coll_timer {
    struct px_coll_timer *next;
    double at;
    void (*cb)(void *arg);
    void *arg;
};

typedef struct pmixd_ctx {
    job j;
    int node;
    tl_link parent;
    int lfd;
    uint16_t port;

    /* The mesh: peers[n] is the link to node n (fd -1: not yet, or lost). */
    tl_link *peers;
    bool *peer_lost;
    double *heard, *said;  /* when the last bytes came from / went to each node */
    double beat_s, lost_s; /* the heartbeat (pmixd_proto.h); 0: off */
    /* Connections accepted whose other end has not yet proved it knows
     * the job's secret (npend slots, pmixd_proto.h): pend_node[s] is the
     * node it claims once its PD_PEER came (-1 before), pend_until[s] its
     * deadline, pend_nc/pend_na the handshake's nonces. */
    tl_link *pend;
    int npend;
    int *pend_node;
    double *pend_until;
    uint8_t (*pend_nc)[PX_AUTH_NONCELEN], (*pend_na)[PX_AUTH_NONCELEN];
    struct pmixd_io *pend_io;
    uint8_t key[PX_AUTH_KEYLEN]; /* the job's secret (PD_KEY_ENV) */
    int npeers;                  /* identified links */
    char **addrs;
    uint16_t *ports;

    iof_relay relay; /* the ranks' output to pmixrun once it asked (PD_IOF_PULL) */

    bool have_job;
    bool job_read; /* ... and it was well formed: j.ranks lists this node's ranks */
    bool launched;
    bool stopping;
    bool stop_now;
    bool failed; /* the job could not be set up here: exit 1 */
    double kill_at;
    double join_s, join_until; /* the mesh must be complete by join_until */

    bool isolated;          /* --isolate host took: own UTS and mount namespaces (vhost.h) */
    bool trace;             /* PMIXLAB_PMIXD_TRACE: a line per cross-node fence on stderr */
    size_t frame_max;       /* PMIXLAB_PMIXD_FRAME_MAX, a test hook; 0 = TL_FRAME_MAX */
    unsigned nomem_replies; /* PMIXLAB_PMIXD_NOMEM_REPLIES, a test hook */
    unsigned dmdx_tries;    /* PMIXLAB_PMIXD_DMDX_TRIES, a test hook; 0 = the default */
    px_jobmap map;          /* the job as the host core sees it */
    px_hc *hc;              /* fences, failures, direct modex (host core; pmixd_coll.c) */
    px_ctxid_gen ctxids;    /* the groups' context ids this daemon makes */
    struct spawn_wait *spawn_waits; /* PMIx_Spawn requests sent to pmixrun (pmixd_spawn.c) */
    uint32_t spawn_next;            /* the last request id given */
    struct px_coll_timer *timers;

    /* The launch tree (launchtree.h): the nodes this daemon starts with
     * the launch agent (its share, from its stdin), and the agents it ran:
     * agent_pid[i] starts node agent_node[i]'s daemon (0 once reaped).
     * Stopping, it waits for them until agents_until: their daemons'
     * output comes through them. */
    lt_conf lt;
    lt_share share;
    int nagents;
    pid_t *agent_pid;
    int *agent_node;
    double agents_until;

    /* The watches of the daemon's connections on the job's loop: the
     * control connection, the listener, and per node its identified link
     * (peer_w), and per pending slot a connection accepted but not yet
     * authenticated (pend_w); `io` is each node's callback context,
     * `pend_io` each slot's. */
    px_posix_watch *parent_w, *listen_w;
    px_posix_watch **peer_w, **pend_w;
    struct pmixd_io *io;

    struct dtool_collector *tools; /* stack collectors running (pmixd_tool.c) */
} pmixd_ctx;

/* pmixd.c */
/* Queue one frame to node `n`: 0, -1 if it is unreachable, or TL_ENOMEM or
 * TL_ETOOBIG if this daemon could not queue it (tcplink.h). */
int pmixd_peer_send(pmixd_ctx *d, int n, uint8_t type, const tl_buf *b);
/* Close the connection to node `n` and count it lost (coll_peer_lost),
 * as if it had dropped: what this daemon does when it cannot keep its
 * side of the protocol with that node (it then sees us lost too). */
void pmixd_peer_drop(pmixd_ctx *d, int n);

/* pmixd_tool.c: pmixrun's questions for its tools about this node's
 * ranks (pmixrun_ntool.c). dtool_frame answers a PD_TOOL, at once or when
 * its stack collector ends; dtool_fini kills the collectors still running
 * (before the platform goes). */
void dtool_frame(pmixd_ctx *d, const uint8_t *p, size_t len);
void dtool_fini(pmixd_ctx *d);

/* pmixd_coll.c */
/* Before job_server_start, once the job is read: makes the core and
 * installs the upcalls. 0, or -1 with a message on stderr. */
int coll_init(pmixd_ctx *d);
void coll_fini(pmixd_ctx *d); /* after the server stopped: frees, calls nothing */
/* A frame from node `from`'s daemon (PD_HC: for the core). */
void coll_frame(pmixd_ctx *d, int from, uint8_t type, const uint8_t *p, size_t len);
void coll_peer_lost(pmixd_ctx *d, int node);
/* A rank of this node died (rank >= 0) or something else broke the job:
 * fail every pending and later fence, and tell the other daemons. */
void coll_break(pmixd_ctx *d, int rank, bool tell);
/* A rank of this node finalized and exited: the fences that name it fail
 * on every node (px_hc_departed). */
void coll_departed(pmixd_ctx *d, int rank);
int coll_timeout_ms(pmixd_ctx *d); /* until the next timer; -1 if none */
void coll_timers(pmixd_ctx *d);

/* pmixd_spawn.c: PMIx_Spawn over the daemons. A client's request goes to
 * pmixrun (PD_SPAWN), which places the new job and sends it to every
 * daemon (PD_SPAWN_JOB): each registers the namespace with its server,
 * adds its map to the host core (px_hc_job_add: its fences, direct modex
 * and groups across nodes), starts its own ranks of it and says so
 * (PD_SPAWN_STATE); pmixrun answers the requestor's daemon (PD_SPAWN_REP).
 * The spawned jobs are d->j.children; their ranks are reaped, reported
 * (PD_SPAWN_STATE) and stopped like the first job's. */
pmix_status_t spawnd_up(void *hctx, const pmix_proc_t *proc, const pmix_info_t job_info[],
                        size_t ninfo, const pmix_app_t apps[], size_t napps,
                        pmix_spawn_cbfunc_t cbfunc, void *cbdata);
void spawnd_job(pmixd_ctx *d, const uint8_t *p, size_t len);   /* a PD_SPAWN_JOB */
void spawnd_reply(pmixd_ctx *d, const uint8_t *p, size_t len); /* a PD_SPAWN_REP */
/* A child was reaped (waitpid's pid and status): true if it was a rank of
 * a spawned job (reported, and judged as the first job's are). */
bool spawnd_reaped(pmixd_ctx *d, pid_t pid, int wstatus);
void spawnd_signal(pmixd_ctx *d, int sig); /* to every spawned rank that was started */
int spawnd_live(const pmixd_ctx *d);       /* spawned ranks started and not reaped */
bool spawnd_output_open(const pmixd_ctx *d);
/* After the server stopped: answer what still waits (PMIX_ERR_UNREACH: no,
 * the server answered its clients), free the spawned jobs. */
void spawnd_fini(pmixd_ctx *d);

#endif /* PMIXD_H */
