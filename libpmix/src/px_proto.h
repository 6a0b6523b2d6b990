/*
 * px_proto.h - the client/server protocol: message types and payloads.
 *
 * Every message is one frame (wire/px_wire.h). A request carries a tag
 * chosen by the client (never 0); its reply carries the same tag. Messages
 * without a reply (COMMIT, NOTIFY, NOPAGE, PCOLLECT) use tag 0. Payloads, in order:
 *
 *   HELLO     c->s  u32 protocol, proc self, u32 pid, info directives,
 *                   then optionally u8 role: PX_ROLE_TOOL says the peer is
 *                   a tool (server/tool.c); absent, a client. A tool's proc
 *                   is the identity it asks for (PMIX_TOOL_NSPACE and
 *                   PMIX_TOOL_RANK), or an empty namespace for "the host
 *                   assigns one"
 *   WELCOME   s->c  i32 status; on success u8 page (1: the fence page,
 *                   px_page.h, came with it), the job data (px_store_pack_job);
 *                   to a tool then proc assigned (its identity from now
 *                   on), proc server (the server's own)
 *   NOPAGE    c->s  (empty): the client cannot use the fence page
 *   PCOLLECT  c->s  u32 generation: everyone arrived on the fence page for
 *                   a collect; the server answers through the page
 *   FINALIZE  c->s  (empty)                           reply: REPLY
 *   ABORT     c->s  i32 status, str msg, procs        reply: REPLY
 *   COMMIT    c->s  px_store_pack_commit of the sender
 *   FENCE     c->s  procs, info, u8 arrived (on the    reply: FENCE_DONE
 *                   fence page, px_page.h)
 *   FENCE_DONE s->c i32 status; on success u8 how, then with how INLINE
 *                   bytes records (empty unless collected), with how
 *                   REGION nothing: the records are the frame's region;
 *                   with how GROUPS (data from the host: every node's
 *                   records, as groups) u64 glen, bytes groups, bytes
 *                   records: a region, if attached, holds glen bytes of
 *                   groups then records; the frame's groups are empty
 *                   then, and its records (the node's own, cut for local
 *                   readers) come after the region's
 *   GET       c->s  proc, str key, info               reply: GET_DONE
 *   GET_DONE  s->c  i32 status, u8 kind, bytes        kind 0: records,
 *                                                     kind 1: job data
 *   NOTIFY    c->s  i32 status, proc source, u8 range, info
 *   EVENT     s->c  i32 status, proc source, u8 range, info
 *   JCTRL     c->s  procs targets, info directives    reply: INFO_DONE
 *   QUERY     c->s  u32 n, then n x (argv keys,      reply: INFO_DONE
 *                   info qualifiers): queries only the
 *                   server answers: the process-set keys
 *                   (answered by the server), the keys
 *                   only a host knows (PMIX_QUERY_PROC_TABLE
 *                   ...: passed to its query upcall); one
 *                   INFO_DONE holds both's answers
 *   INFO_DONE s->c  i32 status, info results
 *   REPLY     s->c  i32 status
 *   GROUP     c->s  u8 op (PX_GRP_*), str grp, procs, info directives;
 *                   with op JOIN also proc leader, u8 accept
 *                                                     reply: GROUP_DONE
 *                                                     (LEAVE: REPLY)
 *   GROUP_DONE s->c i32 status; on PMIX_SUCCESS or PMIX_ERR_PARTIAL_SUCCESS
 *                   u8 has_ctxid, u64 ctxid, procs members (group-rank
 *                   order), bytes groups (every node's records from the
 *                   host, as groups: may be empty), bytes records (this
 *                   node's members, cut for local readers)
 *   PUBLISH   c->s  info (the data and the directives) reply: REPLY
 *   LOOKUP    c->s  argv keys, info directives      reply: LOOKUP_DONE
 *   LOOKUP_DONE s->c i32 status, u64 n, n x pdata (the keys found)
 *   UNPUBLISH c->s  argv keys (NULL: every key of the sender),
 *                   info directives                   reply: REPLY
 *   SPAWN     c->s  info job directives, u32 napps,   reply: SPAWN_DONE
 *                   napps x (str cmd, argv, argv env,
 *                   str cwd, i32 maxprocs, info)
 *   SPAWN_DONE s->c i32 status, str nspace (the new
 *                   job's, "" on failure)
 *
 *   IOF_PULL  c->s  u32 id (the asker's handler), procs, u16 channels
 *                   (PMIX_FWD_*), info directives     reply: REPLY
 *   IOF_DATA  s->c  (tag 0) proc source, u16 channel, bytes: output of a
 *                   process some pull of the receiver matches (once per
 *                   receiver, whatever number of its pulls match)
 *   IOF_DEREG c->s  u32 id: that pull ends               reply: REPLY
 *   IOF_PUSH  c->s  procs targets, info directives, u8 eof, bytes data:
 *                   input for the targets' stdin, or (eof, no data) its
 *                   end; answered once the host delivered it  reply: REPLY
 *
 * A server that does not understand a message drops the client (protocol
 * error); a client that receives a reply with an unknown tag ignores it
 * (the request timed out and was forgotten).
 */
#ifndef PX_PROTO_H
#define PX_PROTO_H

/* 4: the fence page's header grew the clients' collect (cseq, fill, hw,
 * the slot arrays); a client of an older build is refused at HELLO.
 * 5: QUERY (process sets), which a server of version 4 would take for a
 * protocol error. 6: SPAWN, IOF_PULL, IOF_DATA and IOF_DEREG (the same
 * reason). 7: IOF_PUSH (the same reason). */
#define PX_PROTOCOL 7

enum px_msg_type {
    PX_MSG_HELLO = 1,
    PX_MSG_WELCOME = 2,
    PX_MSG_FINALIZE = 3,
    PX_MSG_ABORT = 4,
    PX_MSG_COMMIT = 5,
    PX_MSG_FENCE = 6,
    PX_MSG_FENCE_DONE = 7,
    PX_MSG_GET = 8,
    PX_MSG_GET_DONE = 9,
    PX_MSG_NOTIFY = 10,
    PX_MSG_EVENT = 11,
    PX_MSG_JCTRL = 12,
    PX_MSG_INFO_DONE = 13,
    PX_MSG_REPLY = 14,
    PX_MSG_NOPAGE = 15,
    PX_MSG_PCOLLECT = 16,
    PX_MSG_GROUP = 17,
    PX_MSG_GROUP_DONE = 18,
    PX_MSG_PUBLISH = 19,
    PX_MSG_LOOKUP = 20,
    PX_MSG_LOOKUP_DONE = 21,
    PX_MSG_UNPUBLISH = 22,
    PX_MSG_QUERY = 23,
    PX_MSG_SPAWN = 24,
    PX_MSG_SPAWN_DONE = 25,
    PX_MSG_IOF_PULL = 28,
    PX_MSG_IOF_DATA = 29,
    PX_MSG_IOF_DEREG = 30,
    PX_MSG_IOF_PUSH = 31,
};

/* Most application contexts in one SPAWN; more is a protocol error. */
#define PX_SPAWN_MAX_APPS 1024

/* The operations of a GROUP message. */
#define PX_GRP_CONSTRUCT 0
#define PX_GRP_DESTRUCT 1
#define PX_GRP_INVITE 2
#define PX_GRP_JOIN 3
#define PX_GRP_LEAVE 4

/* HELLO's optional last byte: who connects. */
#define PX_ROLE_CLIENT 0
#define PX_ROLE_TOOL 1

/* Most queries in one QUERY message; more is a protocol error. */
#define PX_QUERY_MAX 64

/* How FENCE_DONE carries the collected records. */
#define PX_DATA_INLINE 0
#define PX_DATA_REGION 1
#define PX_DATA_GROUPS 2

#define PX_GET_KIND_RECORDS 0
#define PX_GET_KIND_JOB 1
/* One value the server answers itself (PMIX_PSET_NAMES of a process, from
 * its table of process sets): a packed pmix_value_t. */
#define PX_GET_KIND_VALUE 2

#endif /* PX_PROTO_H */
