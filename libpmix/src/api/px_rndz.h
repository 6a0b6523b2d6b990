/*
 * px_rndz.h - rendezvous files: how a tool finds a server it was not
 * started by (api/rendezvous.c).
 *
 * A server that accepts tools writes small files that hold its URI (one
 * line, "unix:<socket path>"), named as OpenPMIx names them:
 *
 *   pmix.<host>.tool.<pid>      in the server's own directory (mode 0700,
 *   pmix.<host>.tool.<nspace>   the one its socket is in): by pid and by
 *                               the server's namespace (a host may add
 *                               others: pmixrun adds its job's); mode 0600
 *   pmix.sys.<host>             in the system directory: the machine's
 *                               system server; mode 0644
 *
 * The server's directory lies under the session directory: the
 * environment's PMIX_SERVER_TMPDIR, else TMPDIR, else /tmp. The system
 * directory is PMIX_SYSTEM_TMPDIR, else TMPDIR, else /tmp. A tool looks
 * in the session directory and in each directory right under it that is
 * its user's and private (mode 0700), the way pmixrun's job directory
 * is. It trusts a file only if it is a regular file (never a symbolic
 * link), owned by the tool's user (or by root, for the system file), and
 * writable by nobody else; the server then checks the tool's uid again.
 */
#ifndef PX_RNDZ_H
#define PX_RNDZ_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <pmix_common.h>

/* The session and system directories (see above), into buf. */
void px_rndz_session_dir(char *buf, size_t len);
void px_rndz_system_dir(char *buf, size_t len);

/* The file name for a key ("pmix.<host>.tool.<key>"; key NULL:
 * "pmix.sys.<host>"). */
void px_rndz_name(const char *key, char *buf, size_t len);

/* Write `uri` into dir/name with `mode`, replacing an older file of that
 * name atomically (a private temporary file renamed over it). 0 or -1
 * with errno. */
int px_rndz_write(const char *dir, const char *name, const char *uri, mode_t mode);
void px_rndz_remove(const char *dir, const char *name);

/* Find file `name` in `base` or a private directory of ours right under
 * it, and read the URI it holds into uri. `root_ok`: a file of root's is
 * trusted too. PMIX_SUCCESS, or PMIX_ERR_NOT_FOUND. */
pmix_status_t px_rndz_find(const char *base, const char *name, bool root_ok, char *uri, size_t len);

/* Every server's pid file ("pmix.<host>.tool.<digits>") under `base` (as
 * px_rndz_find looks), newest first; fn(uri, arg) for each until it
 * returns true. PMIX_SUCCESS if one did, PMIX_ERR_NOT_FOUND otherwise. */
pmix_status_t px_rndz_each(const char *base, bool (*fn)(const char *uri, void *arg), void *arg);

#endif /* PX_RNDZ_H */
