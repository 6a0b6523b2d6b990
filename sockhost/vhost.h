/* vhost.h - virtual nodes that look like hosts: the namespaces a pmixd of
 * `pmixrun --nodes K` runs in (docs/user-guide.md, "Virtual nodes").
 *
 * With isolation, each virtual node has its own host name (the node's name:
 * node0, node1, ...), its own empty /dev/shm and its own /tmp, so that
 * programs which key shared memory or session files on the host name (Open
 * MPI's shared-memory transport, for one) do not collide across virtual
 * nodes. Isolation needs root (CAP_SYS_ADMIN); without it the node shares
 * the machine's, and pmixrun or pmixd says so once. */
#ifndef PMIXLAB_VHOST_H
#define PMIXLAB_VHOST_H

#include <stddef.h>

typedef enum {
    VHOST_AUTO, /* pmixrun's default: VHOST_HOST when root, VHOST_NONE otherwise */
    VHOST_NONE, /* share the machine's host name, /dev/shm and /tmp */
    VHOST_HOST, /* own host name, /dev/shm and /tmp */
    VHOST_NET,  /* VHOST_HOST and a network namespace of its own, joined to the other
                 * nodes' by veth pairs on a bridge (pmixrun_nodes.c, vnet_*) */
} vhost_mode;

/* "auto", "none", "host" or "net" into *mode; -1 for anything else. */
int vhost_parse(const char *s, vhost_mode *mode);

/* Moves the calling process, which must have one thread, into new UTS and
 * mount namespaces with a private /dev/shm and, where the kernel can make
 * the overlay, a private /tmp (*tmp_private set to 1). Returns 0, or -1
 * with the reason in err: then the process may have new namespaces but
 * still sees the machine's /dev/shm, /tmp and host name. */
int vhost_isolate(int *tmp_private, char *err, size_t errlen);

/* Moves the calling process, which must have one thread, into a new
 * network namespace (empty: loopback down, no other interface; pmixrun
 * adds its veth end and addresses). Returns 0, or -1 with the reason. */
int vhost_isolate_net(char *err, size_t errlen);

/* Sets the host name of the process's UTS namespace (after vhost_isolate
 * returned 0). Returns 0, or -1 with the reason in err. */
int vhost_set_hostname(const char *name, char *err, size_t errlen);

#endif
