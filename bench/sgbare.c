/*
 * sgbare.c - a dissemination barrier in bare SimGrid: the yardstick for
 * pmixsim's speed (issue: a barrier through the real library must cost at
 * most 1.5 times the wall time of this one, at 16,384 nodes).
 *
 *   sgbare NODES [ITERS [STACK_KIB]]
 *
 * One actor per node on the platform pmixsim generates for a crossbar
 * (one FLAT cluster, node-0 .. node-N-1, 1 us and 12.5 GB/s links, CM02
 * without cross-traffic), one mailbox per actor for the whole run (a
 * mailbox per round would never be freed). Round k of a barrier: actor i
 * sends a 32-byte message (the size of a px_coll header) to i + 2^k and
 * waits for the one from i - 2^k; a message of a later round that comes
 * first is remembered. No PMIx code runs: what is left is SimGrid's own
 * cost. Stacks follow pmixsim's rule for the same number of actors (128
 * KiB; 64 KiB and no guard pages past 30,000; 32 KiB past 100,000) unless
 * STACK_KIB is given.
 *
 * It prints one line: nodes, iterations, simulated seconds, wall seconds.
 * bench/sim_speed.sh runs it beside pmixsim.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <xbt/config.h>

#define MSG_BYTES 32
#define MAX_ROUNDS 32

typedef struct bare {
    uint32_t nodes, iters;
    sg_mailbox_t *boxes;
} bare;

/* The payload is the (iteration, round) pair itself: nothing to free. */
static void *tag(uint32_t it, uint32_t round)
{
    return (void *)(uintptr_t)(((uint64_t)it << 8 | round) + 1);
}

static void node_main(int argc, char **argv)
{
    bare *b = sg_actor_self_get_data();
    uint32_t me = (uint32_t)strtoul(argv[1], NULL, 10), n = b->nodes;
    /* Messages seen ahead of their round: per iteration, a bit per round. */
    uint64_t *seen = calloc(b->iters + 1, sizeof(*seen));

    if (seen == NULL)
        abort();
    for (uint32_t it = 0; it < b->iters; it++) {
        for (uint32_t k = 0; ((uint32_t)1 << k) < n; k++) {
            uint32_t to = (me + ((uint32_t)1 << k)) % n;
            sg_comm_t send = sg_mailbox_put_async(b->boxes[to], tag(it, k), MSG_BYTES);
            while (!(seen[it] >> k & 1)) {
                uint64_t t = (uint64_t)(uintptr_t)sg_mailbox_get(b->boxes[me]) - 1;
                seen[t >> 8] |= (uint64_t)1 << (t & 0xff);
            }
            sg_comm_wait(send);
        }
    }
    free(seen);
}

static double wall(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    bare b = {0};
    char path[4096];
    const char *tmp = getenv("TMPDIR");
    char *sgargv[] = {argv[0], "--log=xbt_cfg.thres:warning", NULL};
    int sgargc = 2, fd;
    unsigned stack;
    double t0 = wall();
    FILE *f;

    if (argc < 2 || (b.nodes = (uint32_t)strtoul(argv[1], NULL, 10)) < 2 || b.nodes > 1u << 20) {
        fprintf(stderr, "usage: sgbare NODES [ITERS [STACK_KIB]] (NODES from 2)\n");
        return 2;
    }
    b.iters = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 1;
    if (b.iters < 1)
        b.iters = 1;
    stack = argc > 3           ? (unsigned)strtoul(argv[3], NULL, 10)
            : b.nodes > 100000 ? 32
            : b.nodes > 30000  ? 64
                               : 128;
    simgrid_init(&sgargc, sgargv);
    sg_cfg_set_string("network/model", "CM02");
    sg_cfg_set_boolean("network/crosstraffic", "no");
    sg_cfg_set_int("contexts/stack-size", (int)stack);
    if (b.nodes > 30000)
        sg_cfg_set_int("contexts/guard-size", 0);
    snprintf(path, sizeof(path), "%s/sgbare-%s.xml", tmp != NULL && *tmp ? tmp : "/tmp",
             "XXXXXX"); /* mkstemps' template */
    fd = mkstemps(path, 4);
    if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
        perror("sgbare: platform file");
        return 1;
    }
    fprintf(
        f,
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        "<platform version=\"4.1\">\n  <cluster id=\"bare\" prefix=\"node-\" suffix=\"\" "
        "radical=\"0-%u\" speed=\"1Gf\" bw=\"12.5GBps\" lat=\"1us\" "
        "sharing_policy=\"SPLITDUPLEX\" loopback_bw=\"50GBps\" loopback_lat=\"100ns\" "
        "topology=\"FLAT\"/>\n</platform>\n",
        b.nodes - 1);
    fclose(f);
    simgrid_load_platform(path);
    unlink(path);
    b.boxes = calloc(b.nodes, sizeof(*b.boxes));
    if (b.boxes == NULL)
        return 1;
    for (uint32_t i = 0; i < b.nodes; i++) {
        char name[32], arg[16];
        const char *av[] = {"node", arg};
        sg_actor_t a;
        snprintf(name, sizeof(name), "node-%u", i);
        snprintf(arg, sizeof(arg), "%u", i);
        b.boxes[i] = sg_mailbox_by_name(name);
        a = sg_actor_init(name, sg_host_by_name(name));
        sg_actor_set_data(a, &b);
        sg_actor_start(a, node_main, 2, (char **)av);
    }
    simgrid_run();
    printf("sgbare: nodes=%u iters=%u sim_s=%.9f wall_s=%.3f\n", b.nodes, b.iters,
           simgrid_get_clock(), wall() - t0);
    free(b.boxes);
    return 0;
}
