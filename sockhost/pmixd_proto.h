/*
 * pmixd_proto.h - the frames between pmixrun and the daemons, and between
 * daemons (tcplink.h frames; docs/pmixd.md describes them in prose).
 *
 * Integers are little-endian, strings and byte strings a u32 length and the
 * bytes. Node ids are 0..K-1, ranks are the job's ranks.
 */
#ifndef PMIXD_PROTO_H
#define PMIXD_PROTO_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    /* daemon -> pmixrun */
    PD_HELLO = 1,        /* u32 node, u32 port[, str addr]: up, and listening for its peers
                          * on port (of addr: a daemon that connected back says where) */
    PD_EXIT = 2,         /* u32 rank, u32 pid, u32 code (exit status or 128+signal), u8 flags */
    PD_NICS = 8,         /* u8 fabric, u32 n, n x (str name, str alias): this node's NICs
                          * (px_nics; pmixrun_net.c net_node_nics), sent once, before PD_HELLO;
                          * pmixrun makes the job's planes from every node's (net_planes) */
    PD_ABORT = 3,        /* u32 rank, u32 status, str message: a rank called PMIx_Abort */
    PD_LOST = 4,         /* u32 node, u32 ms: that node's daemon sent nothing for ms (heartbeat) */
    PD_PUBSUB = 5,       /* u32 id, str nspace, u32 rank, u8 op (1 publish, 2 lookup, 3 unpublish),
                          * bytes body: a process's request to the data service (pmixrun_pubsub.c) */
    PD_EVENT = 6,        /* bytes event (pmixrun_events.c): a client's event for the other nodes */
    PD_SPAWN = 7,        /* u32 id, bytes request: a client's PMIx_Spawn (pmixd_spawn.c: the
                          * request packed with PMIx_Data_pack: PMIX_PROC requestor, u32 ninfo,
                          * ninfo PMIX_INFO job directives, u32 napps, napps PMIX_APP) */
    PD_SPAWN_STATE = 16, /* u32 job (N of ".sN"), u8 what: 1 started, u32 status (this node's
                          * ranks of the job are started, or why not); 2 exited, then as
                          * PD_EXIT (u32 rank, u32 pid, u32 code, u8 flags) */
    PD_AGENT_EXIT = 28,  /* u32 node, u32 wait status: the launch agent this daemon ran to
                          * start that node's daemon (launchtree.h) ended */
    PD_TOOL_REP = 24,    /* u32 id, str host, u32 n, n x (u32 rank, u32 pid, u32 state, u32 code,
                          * str exe), u8 has-text, [str text]: the answer to PD_TOOL
                          * (pmixrun_ntool.c, pmixd_tool.c) */
    PD_STDIN_ACK = 9,    /* (empty): the last PD_STDIN data reached every local target (or
                          * they are gone): pmixrun may send the next (pmixrun_nodes.c) */
    PD_IOF = 31,         /* u8 kind: PD_IOF_ON (empty): the answer to PD_IOF_PULL, output from
                          * now on comes; PD_IOF_DATA str nspace, u32 rank, u32 channel (a
                          * PMIX_FWD_*_CHANNEL bit), bytes: a piece of a rank's output,
                          * untagged, for the tools that pulled it (pmixrun_nodes.c); also
                          * pmixrun -> daemon, data only: a spawned job's output from
                          * another node, for its spawner on this one (PMIX_FWD_STDOUT) */

    /* pmixrun -> daemon */
    PD_JOB = 10,        /* the job: see pmixrun_nodes.c send_job() and pmixd.c read_job(); its
                         * application contexts: pmixrun.h apps_write(); then the
                         * network's coordinates: pmixrun_net.c net_write() */
    PD_STOP = 11,       /* u8 now: stop the ranks (SIGTERM then SIGKILL; now: SIGKILL), exit */
    PD_PUBSUB_REP = 12, /* u32 id, u32 status, bytes body (a lookup's pdata): the answer */
    PD_EVENT_FWD = 13,  /* bytes event: deliver it to this node's clients in its range */
    PD_SPAWN_JOB = 15,  /* u32 job (N), str nspace, u32 nprocs, nprocs x u32 node, u8
                         * stop_in_init, bytes extra (u32 n, n PMIX_INFO packed: PMIX_SPAWNED,
                         * PMIX_PARENT_ID...), then apps as in PD_JOB: a spawned job, to
                         * every daemon (each registers it and starts its own ranks) */
    PD_SPAWN_REP = 22,  /* u8 what: 1 answer: u32 id, u32 status, str nspace (a PD_SPAWN's);
                         * 2 job end: str nspace, str spawner nspace, u32 spawner rank, u32
                         * worst exit status (PMIX_NOTIFY_COMPLETION); 3 kill: str nspace
                         * [, u32 signal] (a spawn that failed: SIGKILL its ranks; with a
                         * signal, a system server's job that lost a rank: signal them) */
    PD_JCTRL = 14,      /* both ways: u32 signal, u32 n, n x u32 rank (pmixrun_jctrl.c): a
                         * daemon asks pmixrun to signal those ranks; pmixrun tells
                         * every daemon to signal those of its own */
    PD_SIGNAL = 29,     /* u32 signal: one pmixrun forwards (SIGUSR1, SIGUSR2, SIGCONT,
                         * SIGTSTP) to a daemon it did not fork; as if the daemon got it */
    PD_TOOL = 19,       /* u32 id, u8 op (1 table, 2 table and stacks), u32 seconds: a tool's
                         * question about this node's ranks (pmixrun_ntool.c) */
    PD_IOF_PULL = 30,   /* (empty): a tool pulled output at pmixrun: from now on send the
                         * ranks' output as PD_IOF too (answered by PD_IOF_ON) */
    PD_STDIN = 18,      /* u8 kind: PD_STDIN_OPEN u32 target (a rank, or PD_STDIN_ALL), before
                         * PD_JOB: those of this node's ranks get a stdin pipe; PD_STDIN_DATA
                         * bytes: pmixrun's --stdin, for them (answered by PD_STDIN_ACK);
                         * PD_STDIN_EOF: the end of it (their pipes close) */

    /* daemon <-> daemon */
    PD_PEER = 20, /* u32 node, bytes nc (16): the first frame of a connection, from the
                   * connector; then PD_AUTH_CHAL and PD_AUTH_PROOF (below) */
    PD_HC = 21,   /* a host core message (hostcore/hc.c): fences, failures, direct modex */
    PD_BEAT = 25, /* (empty) still here: sent when nothing else went for a beat */

    /* the handshake of a daemon connection (hostcore px_auth; docs/pmixd.md,
     * "Who may join"): nothing else is read from, or sent to, the other end
     * before it completes */
    PD_AUTH_CHAL = 26,  /* acceptor -> connector: bytes na (16), bytes tag(ACCEPTOR) */
    PD_AUTH_PROOF = 27, /* connector -> acceptor: bytes tag(CONNECTOR) */
};

/* The job's secret (64 hexadecimal digits, px_auth_key_hex) reaches pmixd
 * in this environment variable, which pmixd removes from its environment
 * at once, or on its stdin with --key-stdin; never on a command line. */
#define PD_KEY_ENV "PMIXLAB_PMIXD_KEY"
/* Before a connection proved it knows the secret: its frames are at most
 * PD_AUTH_FRAME_MAX bytes, it has PD_AUTH_S seconds to finish, and a
 * daemon holds at most K - 1 + PD_AUTH_PENDING_EXTRA such connections
 * (K nodes; more are closed at once). */
#define PD_AUTH_FRAME_MAX 256u
#define PD_AUTH_S 5.0
#define PD_AUTH_PENDING_EXTRA 8
/* A daemon's control connection to pmixrun over TCP (srun or ssh started
 * it) runs the same handshake, with pmixrun as the acceptor of this node
 * id and this name in place of the namespace. */
#define PD_AUTH_LAUNCHER UINT32_MAX
#define PD_AUTH_CONTROL "pmixrun-control"

/* PD_STDIN kinds, and its target "every rank" */
#define PD_STDIN_OPEN 0
#define PD_STDIN_DATA 1
#define PD_STDIN_EOF 2
#define PD_STDIN_ALL UINT32_MAX

/* PD_IOF kinds */
#define PD_IOF_ON 0
#define PD_IOF_DATA 1

/* PD_EXIT flags */
#define PD_EXIT_SIGNALED 0x01
#define PD_EXIT_CONNECTED 0x02
#define PD_EXIT_FINALIZED 0x04
#define PD_EXIT_STOPPED 0x08  /* still running when the daemon was told to stop */
#define PD_EXIT_NOLAUNCH 0x10 /* could not be started; code is pmixrun's exit status */

/* The daemons' heartbeat (docs/pmixd.md, "Faults"): a daemon sends
 * PD_BEAT to a connected peer it sent nothing else to for `beat` seconds,
 * and, once the mesh is complete, counts a peer it heard nothing from for
 * `lost` seconds as lost, as if its connection had ended. */
#define PD_HEARTBEAT_ENV "PMIXLAB_PMIXD_HEARTBEAT"
#define PD_BEAT_S 1.0
#define PD_LOST_S 10.0

/* Read PMIXLAB_PMIXD_HEARTBEAT's value `v` ("BEAT,LOST" in seconds, or
 * "off"; NULL or empty: the defaults) into *beat and *lost (both 0: off).
 * Returns 0, or -1 with the reason in err. */
static inline int pd_heartbeat_parse(const char *v, double *beat, double *lost, char *err,
                                     size_t errlen)
{
    char *end;
    *beat = PD_BEAT_S;
    *lost = PD_LOST_S;
    if (v == NULL || *v == '\0')
        return 0;
    if (strcmp(v, "off") == 0) {
        *beat = *lost = 0;
        return 0;
    }
    *beat = strtod(v, &end);
    if (end != v && *end == ',')
        *lost = strtod(end + 1, &end);
    if (end == v || *end != '\0' || !(*beat >= 0.01) || !(*lost > *beat) || !(*lost <= 3600)) {
        snprintf(err, errlen,
                 "%s=%s: expected BEAT,LOST in seconds with 0.01 <= BEAT < LOST <= 3600 "
                 "(default %g,%g), or off",
                 PD_HEARTBEAT_ENV, v, PD_BEAT_S, PD_LOST_S);
        return -1;
    }
    return 0;
}

#endif /* PMIXD_PROTO_H */
