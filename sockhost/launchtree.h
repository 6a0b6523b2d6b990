/*
 * launchtree.h - starting daemons on other hosts with a launch agent (ssh),
 * in a tree: pmixrun starts at most F daemons (the fan-out), and each
 * daemon it started starts its share of the rest the same way
 * (docs/pmixd.md, "A launch tree"). Shared by pmixrun and pmixd.
 *
 * A daemon so started gets, on its standard input (never on a command
 * line), the job's secret and what it needs to start its own share:
 *
 *     KEY                  64 hexadecimal digits (px_auth_key_hex)
 *     agent WORDS          the launch agent, split at blanks
 *     pmixd PATH           the daemon's path, the same on every host
 *     fanout F             the fan-out
 *     host ID NAME         one line per node of its share, in order
 *     end
 *
 * A share of n nodes is split into min(F, n) runs of consecutive nodes
 * (the first n % F runs one node longer); the first node of a run is
 * started directly and gets the rest of the run as its own share. So the
 * tree has depth ceil(log_F(K)) or so, and every daemon knows only its
 * own share.
 */
#ifndef LAUNCHTREE_H
#define LAUNCHTREE_H

#include <stddef.h>
#include <sys/types.h>

#define LT_FANOUT_DEFAULT 32
#define LT_FANOUT_MAX 1024

/* What a daemon started over the agent needs to start its own share. */
typedef struct lt_conf {
    char *agent;   /* the launch agent's words, blank-separated */
    char *pmixd;   /* the daemon's path */
    char *connect; /* ADDR:PORT of pmixrun's listener */
    int fanout;
    char *ifinclude; /* --if-include LIST for the daemons started (NULL: none) */
} lt_conf;

/* A share: n nodes, their ids and host names, in order. */
typedef struct lt_share {
    int n;
    int *node;
    char **host;
} lt_share;

/* How many runs a share of n nodes splits into, and run c's first index
 * and length. */
int lt_nruns(int n, int fanout);
void lt_run(int n, int fanout, int c, int *first, int *count);

/* Start node share->node[first]'s daemon on its host: `AGENT... HOST PMIXD
 * --connect C --node ID --key-stdin [--if-include LIST]`, with the secret and the rest of the
 * run (first+1 .. first+count-1) written to its stdin. The child gets its
 * own process group and dies with us (PR_SET_PDEATHSIG); its stdout and
 * stderr are ours. Returns the agent's pid, or -1 (errno). */
pid_t lt_start(const lt_conf *c, const lt_share *share, int first, int count, const char *keyhex);

/* Read the lines after the key from fd (up to "end" or the end of the
 * input) into c (agent, pmixd, fanout) and share. 0, or -1 with the reason
 * in err. Without any such lines (a daemon pmixrun started itself) c and
 * share stay empty. */
int lt_read(int fd, lt_conf *c, lt_share *share, char *err, size_t errlen);

void lt_conf_free(lt_conf *c);
void lt_share_free(lt_share *s);

#endif /* LAUNCHTREE_H */
