/*
 * job_info - the job-level information a launcher must provide at start of
 * execution (Standard, "Reserved Keys"), with the exact types Open MPI 4.1
 * checks (shared/abi/openmpi-4.1.md).
 *
 * Reserved keys are available right after PMIx_Init without any fence, and
 * a Get for one is answered from the client's local data: each Get here must
 * return within a couple of seconds.
 *
 * Modes:
 *   keys     every key of the job, node and process realms with its type and
 *            a value consistent with the others (sizes, local peers and local
 *            ranks, directories that exist, hostname, cpuset, locality). Keys
 *            Open MPI treats as optional are checked only when present.
 *   node     node realm with qualifiers: PMIX_NODE_INFO + PMIX_NODEID gives the
 *            hostname, PMIX_NODE_INFO + PMIX_HOSTNAME gives the node id; an
 *            unknown node is an error, not a value.
 *   app      application realm: PMIX_APP_INFO with and without PMIX_APPNUM;
 *            an unknown application number is an error.
 *   missing  a reserved key nobody provides is PMIX_ERR_NOT_FOUND, promptly,
 *            for the job (wildcard) and for a process; so is a key of a rank
 *            outside the job.
 *   nodes [K] (run with `pmixrun --nodes K`) the job spans nodes: PMIX_NUM_NODES
 *            is K, PMIX_NODE_LIST names that many nodes, every rank's
 *            PMIX_NODEID and PMIX_HOSTNAME agree with it, PMIX_LOCAL_PEERS and
 *            PMIX_LOCAL_SIZE name exactly the ranks on our node, and so does
 *            PMIx_Resolve_peers for our hostname.
 *   vhost    (run with `pmixrun --nodes K --isolate host`, as root) each
 *            virtual node looks like a host: gethostname() is PMIX_HOSTNAME,
 *            and of the files the job's ranks make in /dev/shm and /tmp each
 *            rank sees exactly those of the ranks on its node
 *            (PMIX_LOCAL_SIZE), none of another node's.
 *   query    PMIx_Query_info answers the job size and the ABI version;
 *            PMIx_Query_info_nb, PMIx_Get_nb and PMIx_Log_nb return
 *            PMIX_SUCCESS and
 *            report through their callback after they returned, errors
 *            (an unknown key, a missing key, a refused channel) included.
 *   binding  (run with `pmixrun --bind-to core`) the process is bound: its
 *            affinity is a strict subset of the machine's CPUs when there
 *            are several, and the local peers' PMIX_CPUSET strings differ
 *            when there are at least as many cores as local processes.
 */
#include "ptest.h"

#include <limits.h>
#include <dirent.h>
#include <sched.h>
#include <sys/stat.h>

#define GET_BOUND 2.0 /* seconds a local reserved-key Get may take */

static pmix_value_t *get_timed(const pmix_proc_t *proc, const char *key, const pmix_info_t *info,
                               size_t ninfo, pmix_data_type_t type)
{
    double t0 = pt_now();
    pmix_value_t *v = pt_get_typed(proc, key, info, ninfo, type);
    double dt = pt_now() - t0;
    if (dt > GET_BOUND)
        pt_fail("PMIx_Get(%s) took %.2f s; reserved keys must be answered locally", key, dt);
    return v;
}

static bool get_u32(const pmix_proc_t *proc, const char *key, uint32_t *out)
{
    pmix_value_t *v = get_timed(proc, key, NULL, 0, PMIX_UINT32);
    if (v == NULL)
        return false;
    *out = v->data.uint32;
    pt_value_free(v);
    return true;
}

static bool get_u16(const pmix_proc_t *proc, const char *key, uint16_t *out)
{
    pmix_value_t *v = get_timed(proc, key, NULL, 0, PMIX_UINT16);
    if (v == NULL)
        return false;
    *out = v->data.uint16;
    pt_value_free(v);
    return true;
}

static bool get_rank(const pmix_proc_t *proc, const char *key, pmix_rank_t *out)
{
    pmix_value_t *v = get_timed(proc, key, NULL, 0, PMIX_PROC_RANK);
    if (v == NULL)
        return false;
    *out = v->data.rank;
    pt_value_free(v);
    return true;
}

/* Returns a malloc'd copy of a string value, or NULL after a failure. */
static char *get_str(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *v = get_timed(proc, key, NULL, 0, PMIX_STRING);
    if (v == NULL)
        return NULL;
    char *s = strdup(v->data.string ? v->data.string : "");
    if (v->data.string == NULL)
        pt_fail("PMIx_Get(%s) returned a NULL string", key);
    pt_value_free(v);
    return s;
}

/* An optional key: absent is fine, present must have `type`. Returns the
 * value or NULL. */
static pmix_value_t *get_optional(const pmix_proc_t *proc, const char *key, pmix_data_type_t type)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, &v);
    if (rc == PMIX_ERR_NOT_FOUND) {
        pt_note("optional key %s not provided", key);
        return NULL;
    }
    if (rc != PMIX_SUCCESS) {
        pt_fail("PMIx_Get(optional %s) failed with %s instead of a value or PMIX_ERR_NOT_FOUND",
                key, pt_err(rc));
        return NULL;
    }
    if (v->type != type) {
        pt_fail("optional key %s has type %s, expected %s", key, pt_type_name(v->type),
                pt_type_name(type));
        pt_value_free(v);
        return NULL;
    }
    return v;
}

static bool is_dir(const char *path, bool writable)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return false;
    return !writable || access(path, W_OK | X_OK) == 0;
}

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Same host: equal names, or equal up to the first dot of either. */
static bool same_host(const char *a, const char *b)
{
    size_t la = strcspn(a, "."), lb = strcspn(b, ".");
    return strcmp(a, b) == 0 || (la == lb && strncmp(a, b, la) == 0);
}

/* Is `name` one of the comma-separated entries of `list`? */
static bool in_list(const char *list, const char *name)
{
    const char *p = list;
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        char item[256];
        snprintf(item, sizeof item, "%.*s", (int)len, p);
        if (same_host(item, name))
            return true;
        p += len;
        if (*p == ',')
            p++;
    }
    return false;
}

/* Parse "0,1,3" into ranks; returns the count or -1 if malformed. */
static int parse_peers(const char *s, pmix_rank_t *out, int max)
{
    int n = 0;
    const char *p = s;
    if (*p == '\0')
        return -1;
    while (*p != '\0') {
        char *end;
        errno = 0;
        unsigned long r = strtoul(p, &end, 10);
        if (end == p || errno != 0 || r >= PMIX_RANK_VALID || n == max)
            return -1;
        out[n++] = (pmix_rank_t)r;
        if (*end == ',')
            end++;
        else if (*end != '\0')
            return -1;
        p = end;
    }
    return n;
}

static void mode_keys(void)
{
    uint32_t job_size = 0, univ = 0, maxp = 0, appnum = 1, local_size = 0, nodeid = 0, nnodes = 0;
    pmix_rank_t rank = PMIX_RANK_INVALID, grank = PMIX_RANK_INVALID;
    uint16_t lrank = 0, nrank = 0;

    /* Job realm (wildcard rank). */
    if (get_u32(&pt.wild, PMIX_JOB_SIZE, &job_size) && job_size != pt.size)
        pt_fail("PMIX_JOB_SIZE %u changed between two Gets (%u)", job_size, pt.size);
    if (get_u32(&pt.wild, PMIX_UNIV_SIZE, &univ) && univ < job_size)
        pt_fail("PMIX_UNIV_SIZE %u < PMIX_JOB_SIZE %u", univ, job_size);
    if (get_u32(&pt.wild, PMIX_MAX_PROCS, &maxp) && maxp < job_size)
        pt_fail("PMIX_MAX_PROCS %u < PMIX_JOB_SIZE %u", maxp, job_size);
    if (get_u32(&pt.wild, PMIX_LOCAL_SIZE, &local_size) &&
        (local_size == 0 || local_size > job_size))
        pt_fail("PMIX_LOCAL_SIZE %u is not in 1..%u", local_size, job_size);
    if (get_u32(&pt.wild, PMIX_NUM_NODES, &nnodes) && (nnodes == 0 || nnodes > job_size))
        pt_fail("PMIX_NUM_NODES %u is not in 1..%u", nnodes, job_size);

    /* Process realm (our own rank). */
    if (get_rank(&pt.me, PMIX_RANK, &rank) && rank != pt.me.rank)
        pt_fail("PMIX_RANK is %u, PMIx_Init said %u", (unsigned)rank, (unsigned)pt.me.rank);
    if (get_rank(&pt.me, PMIX_GLOBAL_RANK, &grank) && grank < pt.me.rank)
        pt_fail("PMIX_GLOBAL_RANK %u < PMIX_RANK %u", (unsigned)grank, (unsigned)pt.me.rank);
    if (get_u32(&pt.me, PMIX_APPNUM, &appnum) && appnum != 0)
        pt_fail("PMIX_APPNUM is %u for a single-application job", appnum);
    get_u16(&pt.me, PMIX_LOCAL_RANK, &lrank);
    get_u16(&pt.me, PMIX_NODE_RANK, &nrank);
    if (get_u32(&pt.me, PMIX_NODEID, &nodeid) && nnodes != 0 && nodeid >= nnodes)
        pt_fail("PMIX_NODEID %u >= PMIX_NUM_NODES %u", nodeid, nnodes);

    /* Local peers: "0,1,..." in rank order, us included, LOCAL_SIZE entries,
     * and each peer's local rank is its position in the list. */
    char *peers = get_str(&pt.wild, PMIX_LOCAL_PEERS);
    if (peers != NULL) {
        pmix_rank_t list[1024];
        int n = parse_peers(peers, list, 1024);
        if (n < 0) {
            pt_fail("PMIX_LOCAL_PEERS \"%s\" is not a comma-separated list of ranks", peers);
        } else {
            bool self_seen = false;
            uint16_t nranks[1024];
            for (int i = 0; i < n; i++) {
                if (i > 0 && list[i] <= list[i - 1])
                    pt_fail("PMIX_LOCAL_PEERS \"%s\" is not in increasing rank order", peers);
                if (list[i] == pt.me.rank) {
                    self_seen = true;
                    if (lrank != i)
                        pt_fail("PMIX_LOCAL_RANK is %u but we are entry %d of PMIX_LOCAL_PEERS",
                                lrank, i);
                }
                pmix_proc_t peer;
                pt_proc(&peer, pt.me.nspace, list[i]);
                uint16_t plr = 0;
                if (get_u16(&peer, PMIX_LOCAL_RANK, &plr) && plr != i)
                    pt_fail("peer %u: PMIX_LOCAL_RANK %u, expected %d", (unsigned)list[i], plr, i);
                nranks[i] = 0xffff;
                get_u16(&peer, PMIX_NODE_RANK, &nranks[i]);
                for (int j = 0; j < i; j++)
                    if (nranks[j] == nranks[i])
                        pt_fail("peers %u and %u have the same PMIX_NODE_RANK %u",
                                (unsigned)list[j], (unsigned)list[i], nranks[i]);
                char *loc = get_str(&peer, PMIX_LOCALITY_STRING);
                free(loc);
            }
            if (!self_seen)
                pt_fail("PMIX_LOCAL_PEERS \"%s\" does not contain our rank %u", peers,
                        (unsigned)pt.me.rank);
            if ((uint32_t)n != local_size)
                pt_fail("PMIX_LOCAL_PEERS has %d entries, PMIX_LOCAL_SIZE is %u", n, local_size);
            if (nnodes == 1) {
                for (int i = 0; i < n; i++)
                    if (list[i] != (pmix_rank_t)i)
                        pt_fail("single node: PMIX_LOCAL_PEERS \"%s\" should be 0..%u", peers,
                                job_size - 1);
            }
        }
        free(peers);
    }

    /* Node and map information. */
    char host[HOST_NAME_MAX + 1] = "";
    gethostname(host, sizeof host);
    char *hname = get_str(&pt.me, PMIX_HOSTNAME);
    uint32_t num_nodes = 1;
    get_u32(&pt.wild, PMIX_NUM_NODES, &num_nodes);
    if (hname != NULL && num_nodes == 1 && !same_host(hname, host)) /* else virtual nodes */
        pt_fail("PMIX_HOSTNAME \"%s\" is not this host (gethostname: \"%s\")", hname, host);
    char *nlist = get_str(&pt.wild, PMIX_NODE_LIST);
    if (nlist != NULL && hname != NULL && !in_list(nlist, hname))
        pt_fail("PMIX_NODE_LIST \"%s\" does not name our host \"%s\"", nlist, hname);
    free(nlist);
    free(hname);

    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&pt.wild, PMIX_PROC_MAP, NULL, 0, &v);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Get(PMIX_PROC_MAP) failed: %s", pt_err(rc));
    else if (v->type != PMIX_STRING && v->type != PMIX_REGEX)
        pt_fail("PMIX_PROC_MAP has type %s, expected a string or a regex", pt_type_name(v->type));
    pt_value_free(v);

    /* Directories: exist, nest as the Standard says, and are ours to use. */
    char *tmpdir = get_str(&pt.wild, PMIX_TMPDIR);
    char *nsdir = get_str(&pt.wild, PMIX_NSDIR);
    char *procdir = get_str(&pt.me, PMIX_PROCDIR);
    if (tmpdir != NULL && !is_dir(tmpdir, false))
        pt_fail("PMIX_TMPDIR \"%s\" is not a directory", tmpdir);
    if (nsdir != NULL && !is_dir(nsdir, true))
        pt_fail("PMIX_NSDIR \"%s\" is not a writable directory", nsdir);
    if (procdir != NULL && !is_dir(procdir, true))
        pt_fail("PMIX_PROCDIR \"%s\" is not a writable directory", procdir);
    if (tmpdir != NULL && nsdir != NULL && !has_prefix(nsdir, tmpdir))
        pt_fail("PMIX_NSDIR \"%s\" is not under PMIX_TMPDIR \"%s\"", nsdir, tmpdir);
    if (nsdir != NULL && procdir != NULL && !has_prefix(procdir, nsdir))
        pt_fail("PMIX_PROCDIR \"%s\" is not under PMIX_NSDIR \"%s\"", procdir, nsdir);
    free(tmpdir);
    free(nsdir);
    free(procdir);

    /* Binding and locality. */
    char *loc = get_str(&pt.me, PMIX_LOCALITY_STRING);
    char *cpuset = get_str(&pt.me, PMIX_CPUSET);
    if (cpuset != NULL) {
        /* The Standard's form is "<library>:<bitmap>" ("hwloc:0-3"); Open MPI
         * 4.1 parses a bare hwloc list ("0-3"). Accept both, check the list. */
        const char *colon = strchr(cpuset, ':');
        const char *list = colon ? colon + 1 : cpuset;
        if (colon == NULL)
            pt_note("PMIX_CPUSET \"%s\" has no \"<library>:\" prefix (Open MPI 4.1's form)",
                    cpuset);
        if (list[0] == '\0' || strspn(list, "0123456789,-") != strlen(list))
            pt_fail("PMIX_CPUSET \"%s\" is not a cpu list such as \"0-3\" or \"hwloc:0,2\"",
                    cpuset);
    }
    pt_note("locality \"%s\" cpuset \"%s\"", loc ? loc : "?", cpuset ? cpuset : "?");
    free(loc);
    free(cpuset);

    /* Optional keys: absent is fine, present must be right. */
    if ((v = get_optional(&pt.wild, PMIX_TDIR_RMCLEAN, PMIX_BOOL)) != NULL)
        pt_value_free(v);
    if ((v = get_optional(&pt.wild, PMIX_MAPBY, PMIX_STRING)) != NULL)
        pt_value_free(v);
    if ((v = get_optional(&pt.wild, PMIX_NSPACE, PMIX_STRING)) != NULL) {
        if (strcmp(v->data.string, pt.me.nspace) != 0)
            pt_fail("PMIX_NSPACE \"%s\" is not our namespace \"%s\"", v->data.string, pt.me.nspace);
        pt_value_free(v);
    }
    if ((v = get_optional(&pt.me, PMIX_PROC_PID, PMIX_PID)) != NULL) {
        if (v->data.pid != getpid())
            pt_fail("PMIX_PROC_PID %d is not our pid %d", (int)v->data.pid, (int)getpid());
        pt_value_free(v);
    }
    if ((v = get_optional(&pt.me, PMIX_APP_SIZE, PMIX_UINT32)) != NULL) {
        if (v->data.uint32 != job_size)
            pt_fail("PMIX_APP_SIZE %u != PMIX_JOB_SIZE %u (one application)", v->data.uint32,
                    job_size);
        pt_value_free(v);
    }
    if ((v = get_optional(&pt.wild, PMIX_JOB_NUM_APPS, PMIX_UINT32)) != NULL) {
        if (v->data.uint32 != 1)
            pt_fail("PMIX_JOB_NUM_APPS is %u, expected 1", v->data.uint32);
        pt_value_free(v);
    }
    pt_note("job_size %u univ %u max_procs %u local_size %u num_nodes %u nodeid %u lrank %u "
            "nrank %u grank %u",
            job_size, univ, maxp, local_size, nnodes, nodeid, lrank, nrank, (unsigned)grank);
}

static void mode_node(void)
{
    uint32_t nodeid = 0, nnodes = 0;
    char *host = get_str(&pt.me, PMIX_HOSTNAME);
    bool have_id = get_u32(&pt.me, PMIX_NODEID, &nodeid);
    get_u32(&pt.wild, PMIX_NUM_NODES, &nnodes);
    char *nlist = get_str(&pt.wild, PMIX_NODE_LIST);
    if (host == NULL || !have_id || nlist == NULL) {
        pt_fail("cannot test node-realm qualifiers without PMIX_HOSTNAME, PMIX_NODEID, "
                "PMIX_NODE_LIST");
        free(host);
        free(nlist);
        return;
    }

    /* Our node by id -> its hostname. */
    pmix_info_t q[2];
    pt_info_bool(&q[0], PMIX_NODE_INFO, true);
    pt_info_u32(&q[1], PMIX_NODEID, nodeid);
    pmix_value_t *v = get_timed(&pt.wild, PMIX_HOSTNAME, q, 2, PMIX_STRING);
    if (v != NULL && strcmp(v->data.string, host) != 0)
        pt_fail("PMIX_HOSTNAME of node %u is \"%s\", ours is \"%s\"", nodeid, v->data.string, host);
    pt_value_free(v);
    pt_info_free(q, 2);

    /* Our node by hostname -> its id. */
    pt_info_bool(&q[0], PMIX_NODE_INFO, true);
    pt_info_str(&q[1], PMIX_HOSTNAME, host);
    v = get_timed(&pt.wild, PMIX_NODEID, q, 2, PMIX_UINT32);
    if (v != NULL && v->data.uint32 != nodeid)
        pt_fail("PMIX_NODEID of host \"%s\" is %u, ours is %u", host, v->data.uint32, nodeid);
    pt_value_free(v);
    pt_info_free(q, 2);

    /* Every node of the job by id: a hostname from PMIX_NODE_LIST. */
    for (uint32_t id = 0; id < nnodes && id < 64; id++) {
        pt_info_bool(&q[0], PMIX_NODE_INFO, true);
        pt_info_u32(&q[1], PMIX_NODEID, id);
        v = get_timed(&pt.wild, PMIX_HOSTNAME, q, 2, PMIX_STRING);
        if (v != NULL && !in_list(nlist, v->data.string))
            pt_fail("node %u is \"%s\", not in PMIX_NODE_LIST \"%s\"", id, v->data.string, nlist);
        pt_value_free(v);
        pt_info_free(q, 2);
    }

    /* Unknown nodes are errors, promptly. */
    pt_info_bool(&q[0], PMIX_NODE_INFO, true);
    pt_info_u32(&q[1], PMIX_NODEID, 4000000u);
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Get(&pt.wild, PMIX_HOSTNAME, q, 2, &v);
    if (rc == PMIX_SUCCESS) {
        pt_fail("PMIX_HOSTNAME of node id 4000000 returned a value");
        pt_value_free(v);
    } else if (pt_now() - t0 > GET_BOUND) {
        pt_fail("PMIX_HOSTNAME of an unknown node took %.2f s to fail", pt_now() - t0);
    }
    pt_info_free(q, 2);

    pt_info_bool(&q[0], PMIX_NODE_INFO, true);
    pt_info_str(&q[1], PMIX_HOSTNAME, "no-such-host.invalid");
    t0 = pt_now();
    rc = PMIx_Get(&pt.wild, PMIX_NODEID, q, 2, &v);
    if (rc == PMIX_SUCCESS) {
        pt_fail("PMIX_NODEID of host \"no-such-host.invalid\" returned a value");
        pt_value_free(v);
    } else if (pt_now() - t0 > GET_BOUND) {
        pt_fail("PMIX_NODEID of an unknown host took %.2f s to fail", pt_now() - t0);
    }
    pt_info_free(q, 2);
    free(host);
    free(nlist);
}

static void mode_nodes(int want)
{
    uint32_t size = 0, nnodes = 0, myid = 0, lsize = 0, nlocal = 0;
    get_u32(&pt.wild, PMIX_JOB_SIZE, &size);
    get_u32(&pt.wild, PMIX_NUM_NODES, &nnodes);
    get_u32(&pt.me, PMIX_NODEID, &myid);
    get_u32(&pt.wild, PMIX_LOCAL_SIZE, &lsize);
    char *nlist = get_str(&pt.wild, PMIX_NODE_LIST), *peers = get_str(&pt.wild, PMIX_LOCAL_PEERS);
    char *me = get_str(&pt.me, PMIX_HOSTNAME);
    char *names[256] = {0};
    uint32_t count = 0;
    if (nlist == NULL || peers == NULL || me == NULL || size == 0) {
        pt_fail("PMIX_NODE_LIST, PMIX_LOCAL_PEERS, PMIX_HOSTNAME and PMIX_JOB_SIZE are needed");
        goto out;
    }
    if (want > 0 && nnodes != (uint32_t)want)
        pt_fail("PMIX_NUM_NODES is %u, the job was started on %d nodes", nnodes, want);
    for (char *save = NULL, *tok = strtok_r(nlist, ",", &save); tok != NULL && count < 256;
         tok = strtok_r(NULL, ",", &save))
        names[count++] = tok;
    if (count != nnodes)
        pt_fail("PMIX_NODE_LIST names %u nodes, PMIX_NUM_NODES is %u", count, nnodes);
    if (myid >= count || strcmp(names[myid], me) != 0)
        pt_fail("our PMIX_NODEID %u and PMIX_HOSTNAME \"%s\" disagree with PMIX_NODE_LIST", myid,
                me);
    for (uint32_t r = 0; r < size; r++) {
        pmix_proc_t p;
        uint32_t id = UINT32_MAX;
        char rs[16];
        pt_proc(&p, pt.me.nspace, r);
        if (!get_u32(&p, PMIX_NODEID, &id) || id >= count) {
            pt_fail("rank %u: no valid PMIX_NODEID (%u)", r, id);
            continue;
        }
        char *h = get_str(&p, PMIX_HOSTNAME);
        if (h == NULL || strcmp(h, names[id]) != 0)
            pt_fail("rank %u: PMIX_HOSTNAME \"%s\" is not node %u \"%s\"", r, h ? h : "(none)", id,
                    names[id]);
        free(h);
        snprintf(rs, sizeof rs, "%u", r);
        bool listed = in_list(peers, rs);
        if (id == myid)
            nlocal++;
        if (listed != (id == myid))
            pt_fail("rank %u on node %u is %sin our PMIX_LOCAL_PEERS \"%s\"", r, id,
                    listed ? "" : "not ", peers);
    }
    if (nlocal != lsize)
        pt_fail("PMIX_LOCAL_SIZE is %u, %u ranks are on our node", lsize, nlocal);
    pmix_proc_t *procs = NULL;
    size_t np = 0;
    pmix_status_t rc = PMIx_Resolve_peers(me, pt.me.nspace, &procs, &np);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Resolve_peers(\"%s\"): %s", me, pt_err(rc));
    else if (np != nlocal)
        pt_fail("PMIx_Resolve_peers(\"%s\") gave %zu processes, %u are there", me, np, nlocal);
    if (procs != NULL)
        PMIx_Proc_free(procs, np);
    pt_note("node %u of %u (%s) with %u of %u processes", myid, nnodes, me, nlocal, size);
out:
    free(nlist);
    free(peers);
    free(me);
}

static void mode_app(void)
{
    pmix_info_t q[2];
    pmix_value_t *v;

    uint32_t appnum = 99;
    if (get_u32(&pt.me, PMIX_APPNUM, &appnum) && appnum != 0)
        pt_fail("PMIX_APPNUM is %u, expected 0", appnum);

    /* Our application, explicitly numbered. */
    pt_info_bool(&q[0], PMIX_APP_INFO, true);
    pt_info_u32(&q[1], PMIX_APPNUM, 0);
    v = get_timed(&pt.wild, PMIX_APP_SIZE, q, 2, PMIX_UINT32);
    if (v != NULL && v->data.uint32 != pt.size)
        pt_fail("PMIX_APP_SIZE of app 0 is %u, job size %u", v->data.uint32, pt.size);
    pt_value_free(v);
    v = get_timed(&pt.wild, PMIX_APPLDR, q, 2, PMIX_PROC_RANK);
    if (v != NULL && v->data.rank != 0)
        pt_fail("PMIX_APPLDR of app 0 is %u, expected 0", (unsigned)v->data.rank);
    pt_value_free(v);
    pt_info_free(q, 2);

    /* The application of the given process (no PMIX_APPNUM). */
    pt_info_bool(&q[0], PMIX_APP_INFO, true);
    v = get_timed(&pt.me, PMIX_APP_SIZE, q, 1, PMIX_UINT32);
    if (v != NULL && v->data.uint32 != pt.size)
        pt_fail("PMIX_APP_SIZE of our app is %u, job size %u", v->data.uint32, pt.size);
    pt_value_free(v);
    pt_info_free(q, 1);

    /* An application that does not exist. */
    pt_info_bool(&q[0], PMIX_APP_INFO, true);
    pt_info_u32(&q[1], PMIX_APPNUM, 7);
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Get(&pt.wild, PMIX_APP_SIZE, q, 2, &v);
    if (rc == PMIX_SUCCESS) {
        pt_fail("PMIX_APP_SIZE of application 7 (there is only 0) returned %u",
                v->type == PMIX_UINT32 ? v->data.uint32 : 0);
        pt_value_free(v);
    } else if (pt_now() - t0 > GET_BOUND) {
        pt_fail("PMIX_APP_SIZE of an unknown application took %.2f s to fail", pt_now() - t0);
    }
    pt_info_free(q, 2);
}

static void expect_not_found(const pmix_proc_t *proc, const char *key, const char *what)
{
    pmix_value_t *v = NULL;
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, &v);
    double dt = pt_now() - t0;
    if (rc == PMIX_SUCCESS) {
        pt_fail("%s: PMIx_Get(%s) returned a value of type %s", what, key, pt_type_name(v->type));
        pt_value_free(v);
    } else if (rc != PMIX_ERR_NOT_FOUND) {
        pt_fail("%s: PMIx_Get(%s) returned %s, expected PMIX_ERR_NOT_FOUND", what, key, pt_err(rc));
    }
    if (dt > GET_BOUND)
        pt_fail("%s: PMIx_Get(%s) took %.2f s (a missing reserved key is known locally)", what, key,
                dt);
}

static void mode_missing(void)
{
    expect_not_found(&pt.wild, "pmix.no.such.job.key", "job realm");
    expect_not_found(&pt.me, "pmix.no.such.proc.key", "our own process");
    pmix_proc_t peer;
    pt_proc(&peer, pt.me.nspace, (pt.me.rank + 1) % pt.size);
    expect_not_found(&peer, "pmix.no.such.proc.key", "a peer");

    /* A rank outside the job has no data at all. */
    pmix_proc_t ghost;
    pt_proc(&ghost, pt.me.nspace, pt.size + 5);
    pmix_value_t *v = NULL;
    pmix_info_t to;
    pt_info_int(&to, PMIX_TIMEOUT, 3);
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Get(&ghost, PMIX_LOCAL_RANK, &to, 1, &v);
    if (rc == PMIX_SUCCESS) {
        pt_fail("PMIX_LOCAL_RANK of rank %u (outside a job of %u) returned a value", pt.size + 5,
                pt.size);
        pt_value_free(v);
    } else {
        pt_note("rank outside the job: %s after %.2f s", pt_err(rc), pt_now() - t0);
    }
    if (pt_now() - t0 > 4.0)
        pt_fail("PMIx_Get for a rank outside the job took %.2f s", pt_now() - t0);
}

/* Hardware threads per core, from sysfs (1 if unknown). */
static long threads_per_core(void)
{
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "r");
    char line[128] = "";
    if (f == NULL)
        return 1;
    if (fgets(line, sizeof line, f) == NULL)
        line[0] = '\0';
    fclose(f);
    long n = 0;
    for (char *p = line; *p != '\0' && *p != '\n';) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            break;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        n += b - a + 1;
        p = *end == ',' ? end + 1 : end;
    }
    return n > 0 ? n : 1;
}

static void mode_binding(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        pt_fail("sched_getaffinity: %s", strerror(errno));
        return;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int mine = CPU_COUNT(&set);
    char *cpuset = get_str(&pt.me, PMIX_CPUSET);
    pt_note("bound to %d of %ld online CPUs; PMIX_CPUSET \"%s\"", mine, online,
            cpuset ? cpuset : "?");
    if (online > 1 && mine >= online)
        pt_fail("--bind-to core: the process may run on all %d CPUs", mine);

    /* Local peers on distinct cores, if there are enough cores. */
    uint32_t local_size = 0;
    get_u32(&pt.wild, PMIX_LOCAL_SIZE, &local_size);
    char *peers = get_str(&pt.wild, PMIX_LOCAL_PEERS);
    pmix_rank_t list[1024];
    int n = peers ? parse_peers(peers, list, 1024) : -1;
    long cores = online / threads_per_core();
    if (cpuset != NULL && n > 0 && cores >= (long)local_size) {
        for (int i = 0; i < n; i++) {
            if (list[i] == pt.me.rank)
                continue;
            pmix_proc_t peer;
            pt_proc(&peer, pt.me.nspace, list[i]);
            char *other = get_str(&peer, PMIX_CPUSET);
            if (other != NULL && strcmp(other, cpuset) == 0)
                pt_fail("rank %u has the same PMIX_CPUSET \"%s\" as we do", (unsigned)list[i],
                        other);
            free(other);
        }
    }
    free(peers);
    free(cpuset);
}

/* What a callback of PMIx_Query_info_nb or PMIx_Log_nb saw. */
struct cb_seen {
    pt_waiter w;
    pthread_t caller;
    volatile bool in_call;
    volatile bool from_inside;
    uint32_t size;
};

static void query_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                     pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    struct cb_seen *s = cbdata;
    if (s->in_call && pthread_equal(pthread_self(), s->caller))
        s->from_inside = true;
    for (size_t i = 0; i < ninfo; i++)
        if (PMIx_Check_key(info[i].key, PMIX_JOB_SIZE) && info[i].value.type == PMIX_UINT32)
            s->size = info[i].value.data.uint32;
    if (release_fn != NULL)
        release_fn(release_cbdata);
    pt_waiter_signal(&s->w, status);
}

static void log_cb(pmix_status_t status, void *cbdata)
{
    struct cb_seen *s = cbdata;
    if (s->in_call && pthread_equal(pthread_self(), s->caller))
        s->from_inside = true;
    pt_waiter_signal(&s->w, status);
}

static void get_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    struct cb_seen *s = cbdata;
    if (s->in_call && pthread_equal(pthread_self(), s->caller))
        s->from_inside = true;
    if (status == PMIX_SUCCESS && kv != NULL && kv->type == PMIX_UINT32)
        s->size = kv->data.uint32;
    pt_waiter_signal(&s->w, status);
}

static void cb_start(struct cb_seen *s)
{
    pt_waiter_init(&s->w);
    s->caller = pthread_self();
    s->from_inside = false;
    s->in_call = true;
    s->size = 0;
}

/* Waits for one callback and checks it came after the call returned. */
static bool cb_wait(struct cb_seen *s, const char *what)
{
    if (!pt_waiter_wait(&s->w, 5.0)) {
        pt_fail("%s: callback not called within 5 s", what);
        return false;
    }
    if (s->from_inside)
        pt_fail("%s: callback ran before the call returned", what);
    return true;
}

static void mode_query(void)
{
    pmix_query_t *q = PMIx_Query_create(1);
    pmix_info_t *info = NULL;
    size_t ninfo = 0;

    PMIx_Argv_append_nosize(&q[0].keys, PMIX_JOB_SIZE);
    PMIx_Argv_append_nosize(&q[0].keys, PMIX_QUERY_STABLE_ABI_VERSION);
    pmix_status_t rc = PMIx_Query_info(q, 1, &info, &ninfo);
    if (rc != PMIX_SUCCESS || ninfo != 2)
        pt_fail("PMIx_Query_info of the job size and ABI version: %s, %zu answers", pt_err(rc),
                ninfo);
    else if (info[0].value.type != PMIX_UINT32 || info[0].value.data.uint32 != pt.size)
        pt_fail("PMIx_Query_info: PMIX_JOB_SIZE is not %u", (unsigned)pt.size);
    else if (info[1].value.type != PMIX_STRING)
        pt_fail("PMIx_Query_info: PMIX_QUERY_STABLE_ABI_VERSION is not a string");
    PMIx_Info_free(info, ninfo);

    /* Non-blocking: PMIX_SUCCESS, the answer comes after the call returned. */
    struct cb_seen s;
    cb_start(&s);
    rc = PMIx_Query_info_nb(q, 1, query_cb, &s);
    s.in_call = false;
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Query_info_nb returned %s", pt_err(rc));
    else if (cb_wait(&s, "PMIx_Query_info_nb") && (s.w.status != PMIX_SUCCESS || s.size != pt.size))
        pt_fail("PMIx_Query_info_nb reported %s and job size %u", pt_err(s.w.status),
                (unsigned)s.size);
    PMIx_Query_free(q, 1);

    /* What the host answers (pmixrun and pmixd alike): the job's state,
     * and what it supports of spawn and debugging, blocking
     * and, through the server, with the callback after the call returned. */
    q = PMIx_Query_create(1);
    PMIx_Argv_append_nosize(&q[0].keys, PMIX_QUERY_JOB_STATUS);
    PMIx_Argv_append_nosize(&q[0].keys, PMIX_QUERY_SPAWN_SUPPORT);
    PMIx_Argv_append_nosize(&q[0].keys, PMIX_QUERY_DEBUG_SUPPORT);
    info = NULL;
    ninfo = 0;
    rc = PMIx_Query_info(q, 1, &info, &ninfo);
    if (rc != PMIX_SUCCESS || ninfo != 3)
        pt_fail("PMIx_Query_info of job status, spawn and debug support: %s, %zu answers",
                pt_err(rc), ninfo);
    else if (strcmp(info[0].key, PMIX_QUERY_JOB_STATUS) != 0 ||
             info[0].value.type != PMIX_JOB_STATE ||
             info[0].value.data.jstate != PMIX_JOB_STATE_RUNNING)
        pt_fail("PMIX_QUERY_JOB_STATUS is not PMIX_JOB_STATE_RUNNING (key %s, type %s)",
                info[0].key, pt_type_name(info[0].value.type));
    else if (strcmp(info[1].key, PMIX_QUERY_SPAWN_SUPPORT) != 0 ||
             info[1].value.type != PMIX_STRING ||
             strcmp(info[2].key, PMIX_QUERY_DEBUG_SUPPORT) != 0 ||
             info[2].value.type != PMIX_STRING)
        pt_fail("PMIX_QUERY_SPAWN_SUPPORT / _DEBUG_SUPPORT are not strings");
    else
        pt_note("job status %s, spawn support [%s], debug support [%s]",
                PMIx_Job_state_string(info[0].value.data.jstate), info[1].value.data.string,
                info[2].value.data.string);
    PMIx_Info_free(info, ninfo);
    cb_start(&s);
    rc = PMIx_Query_info_nb(q, 1, query_cb, &s);
    s.in_call = false;
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Query_info_nb of the job status returned %s", pt_err(rc));
    else if (cb_wait(&s, "PMIx_Query_info_nb of the job status") && s.w.status != PMIX_SUCCESS)
        pt_fail("PMIx_Query_info_nb of the job status reported %s", pt_err(s.w.status));
    PMIx_Query_free(q, 1);

    /* A key nobody has: the callback reports it. */
    q = PMIx_Query_create(1);
    PMIx_Argv_append_nosize(&q[0].keys, "pmixlab.test.no-such-key");
    cb_start(&s);
    rc = PMIx_Query_info_nb(q, 1, query_cb, &s);
    s.in_call = false;
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Query_info_nb of an unknown key returned %s", pt_err(rc));
    else if (cb_wait(&s, "PMIx_Query_info_nb of an unknown key") &&
             s.w.status != PMIX_ERR_NOT_FOUND)
        pt_fail("PMIx_Query_info_nb of an unknown key reported %s", pt_err(s.w.status));
    PMIx_Query_free(q, 1);

    /* PMIx_Get_nb of a job key, and of a key nobody has. */
    cb_start(&s);
    rc = PMIx_Get_nb(&pt.wild, PMIX_JOB_SIZE, NULL, 0, get_cb, &s);
    s.in_call = false;
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Get_nb of PMIX_JOB_SIZE returned %s", pt_err(rc));
    else if (cb_wait(&s, "PMIx_Get_nb") && (s.w.status != PMIX_SUCCESS || s.size != pt.size))
        pt_fail("PMIx_Get_nb of PMIX_JOB_SIZE reported %s, size %u", pt_err(s.w.status),
                (unsigned)s.size);
    cb_start(&s);
    rc = PMIx_Get_nb(&pt.wild, "pmix.no.such.key", NULL, 0, get_cb, &s);
    s.in_call = false;
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Get_nb of a missing job key returned %s", pt_err(rc));
    else if (cb_wait(&s, "PMIx_Get_nb of a missing key") && s.w.status != PMIX_ERR_NOT_FOUND)
        pt_fail("PMIx_Get_nb of a missing job key reported %s", pt_err(s.w.status));

    /* PMIx_Log_nb: PMIX_SUCCESS, then the outcome through the callback, a
     * channel refused included. */
    pmix_info_t entry;
    pt_info_str(&entry, PMIX_LOG_STDOUT, "job_info: logged through PMIx_Log_nb\n");
    cb_start(&s);
    rc = PMIx_Log_nb(&entry, 1, NULL, 0, log_cb, &s);
    s.in_call = false;
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Log_nb returned %s", pt_err(rc));
    else if (cb_wait(&s, "PMIx_Log_nb") && s.w.status != PMIX_SUCCESS)
        pt_fail("PMIx_Log_nb reported %s", pt_err(s.w.status));
    pt_info_free(&entry, 1);
    pt_info_str(&entry, PMIX_LOG_SYSLOG, "job_info: no syslog here");
    cb_start(&s);
    rc = PMIx_Log_nb(&entry, 1, NULL, 0, log_cb, &s);
    s.in_call = false;
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Log_nb to a refused channel returned %s", pt_err(rc));
    else if (cb_wait(&s, "PMIx_Log_nb to a refused channel") && s.w.status == PMIX_SUCCESS)
        pt_fail("PMIx_Log_nb to a refused channel reported success");
    pt_info_free(&entry, 1);
}

/* How many entries of DIR start with PREFIX. */
static int count_prefixed(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        pt_fail("cannot read %s: %s", dir, strerror(errno));
        return -1;
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    closedir(d);
    return n;
}

static void mode_vhost(void)
{
    char host[HOST_NAME_MAX + 1] = "";
    gethostname(host, sizeof host);
    char *hname = get_str(&pt.me, PMIX_HOSTNAME);
    if (hname == NULL || strcmp(hname, host) != 0)
        pt_fail("PMIX_HOSTNAME \"%s\" is not the host name \"%s\"", hname ? hname : "(none)", host);
    free(hname);
    uint32_t local = 0;
    if (!get_u32(&pt.wild, PMIX_LOCAL_SIZE, &local))
        pt_fail("no PMIX_LOCAL_SIZE");
    /* every rank makes a file in both directories, all wait, all count */
    char prefix[PMIX_MAX_NSLEN + 32], path[PMIX_MAX_NSLEN + 64];
    snprintf(prefix, sizeof prefix, "pmixlab-vhost.%s.", pt.me.nspace);
    const char *dirs[] = {"/dev/shm", "/tmp"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s%u", dirs[i], prefix, (unsigned)pt.me.rank);
        FILE *f = fopen(path, "w");
        if (f == NULL)
            pt_fail("cannot create %s: %s", path, strerror(errno));
        else
            fclose(f);
    }
    pt_barrier("PMIx_Fence after making the files");
    for (int i = 0; i < 2; i++) {
        int n = count_prefixed(dirs[i], prefix);
        if (n >= 0 && (uint32_t)n != local)
            pt_fail("%s holds %d of the job's files, want this node's %u", dirs[i], n,
                    (unsigned)local);
    }
    pt_barrier("PMIx_Fence after counting the files");
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s%u", dirs[i], prefix, (unsigned)pt.me.rank);
        unlink(path);
    }
}

int main(int argc, char **argv)
{
    const char *modes = "keys node app missing nodes [K] binding query vhost";
    if (argc < 2)
        pt_usage(argv[0], modes);
    pt_watchdog(40);
    pt_start("job_info", argv[1], NULL, 0);
    if (strcmp(argv[1], "keys") == 0)
        mode_keys();
    else if (strcmp(argv[1], "node") == 0)
        mode_node();
    else if (strcmp(argv[1], "app") == 0)
        mode_app();
    else if (strcmp(argv[1], "missing") == 0)
        mode_missing();
    else if (strcmp(argv[1], "nodes") == 0)
        mode_nodes(argc > 2 ? atoi(argv[2]) : 0);
    else if (strcmp(argv[1], "binding") == 0)
        mode_binding();
    else if (strcmp(argv[1], "query") == 0)
        mode_query();
    else if (strcmp(argv[1], "vhost") == 0)
        mode_vhost();
    else
        pt_usage(argv[0], modes);
    pt_barrier("final PMIx_Fence");
    return pt_result();
}
