/*
 * pmixd_proto.h - the frames between pmixrun and the daemons, and between
 * daemons (tcplink.h frames; docs/pmixd.md describes them in prose).
 *
 * Integers are little-endian, strings and byte strings a u32 length and the
 * bytes. Node ids are 0..K-1, ranks are the job's ranks.
 */
#ifndef PMIXD_PROTO_H
#define PMIXD_PROTO_H

enum {
    /* daemon -> pmixrun */
    PD_HELLO = 1, /* u32 node, u32 port: up, and listening for its peers on port */
    PD_EXIT = 2,  /* u32 rank, u32 pid, u32 code (exit status or 128+signal), u8 flags */
    PD_ABORT = 3, /* u32 rank, u32 status, str message: a rank called PMIx_Abort */

    /* pmixrun -> daemon */
    PD_JOB = 10,  /* the job: see pmixrun_nodes.c send_job() and pmixd.c read_job() */
    PD_STOP = 11, /* u8 now: stop the ranks (SIGTERM then SIGKILL; now: SIGKILL), exit */

    /* daemon <-> daemon */
    PD_PEER = 20,     /* u32 node: the first frame of a connection, from the connector */
    PD_COLL = 21,     /* u32 n, n x u32 member node, bytes px_coll message */
    PD_BROKEN = 22,   /* u32 rank, u32 node: a rank died; every fence of the job fails */
    PD_DMDX_REQ = 23, /* u32 request id, u32 rank: direct modex of a rank of the receiver */
    PD_DMDX_REP = 24, /* u32 request id, u32 status, bytes record */
};

/* PD_EXIT flags */
#define PD_EXIT_SIGNALED 0x01
#define PD_EXIT_CONNECTED 0x02
#define PD_EXIT_FINALIZED 0x04
#define PD_EXIT_STOPPED 0x08  /* still running when the daemon was told to stop */
#define PD_EXIT_NOLAUNCH 0x10 /* could not be started; code is pmixrun's exit status */

#endif /* PMIXD_PROTO_H */
