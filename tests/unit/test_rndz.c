/*
 * test_rndz.c - rendezvous files (api/rendezvous.c): written atomically
 * with their mode, found in the session directory or a private directory
 * under it, and not trusted when a link, writable by others, or in a
 * directory others may enter.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "api/px_rndz.h"

typedef struct dirs {
    char base[256];
    char priv[300]; /* base/job: 0700 */
} dirs;

static int setup(void **state)
{
    dirs *d = calloc(1, sizeof(*d));
    const char *t = getenv("TMPDIR");

    snprintf(d->base, sizeof(d->base), "%s/test_rndz.XXXXXX", t != NULL && *t ? t : "/tmp");
    if (mkdtemp(d->base) == NULL)
        return -1;
    snprintf(d->priv, sizeof(d->priv), "%s/job", d->base);
    if (mkdir(d->priv, 0700) != 0)
        return -1;
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    dirs *d = *state;
    char cmd[400];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->base);
    if (system(cmd) != 0)
        return -1;
    free(d);
    return 0;
}

static void test_names(void **state)
{
    char name[300], host[256];

    gethostname(host, sizeof(host));
    px_rndz_name("1234", name, sizeof(name));
    char want[300];
    snprintf(want, sizeof(want), "pmix.%s.tool.1234", host);
    assert_string_equal(name, want);
    px_rndz_name(NULL, name, sizeof(name));
    snprintf(want, sizeof(want), "pmix.sys.%s", host);
    assert_string_equal(name, want);
}

static void test_write_find_remove(void **state)
{
    dirs *d = *state;
    char uri[512], path[600];
    struct stat st;

    assert_int_equal(px_rndz_write(d->priv, "pmix.h.tool.42", "unix:/x/pmix.sock", 0600), 0);
    snprintf(path, sizeof(path), "%s/pmix.h.tool.42", d->priv);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* under the base: in a private directory of ours */
    assert_int_equal(px_rndz_find(d->base, "pmix.h.tool.42", false, uri, sizeof(uri)),
                     PMIX_SUCCESS);
    assert_string_equal(uri, "unix:/x/pmix.sock");
    /* replaced whole */
    assert_int_equal(px_rndz_write(d->priv, "pmix.h.tool.42", "unix:/y/pmix.sock", 0600), 0);
    assert_int_equal(px_rndz_find(d->base, "pmix.h.tool.42", false, uri, sizeof(uri)),
                     PMIX_SUCCESS);
    assert_string_equal(uri, "unix:/y/pmix.sock");
    px_rndz_remove(d->priv, "pmix.h.tool.42");
    assert_int_equal(px_rndz_find(d->base, "pmix.h.tool.42", false, uri, sizeof(uri)),
                     PMIX_ERR_NOT_FOUND);
}

static void test_untrusted(void **state)
{
    dirs *d = *state;
    char uri[512], path[600], open_dir[300], target[600];

    /* writable by others */
    assert_int_equal(px_rndz_write(d->priv, "pmix.h.tool.1", "unix:/a", 0666), 0);
    assert_int_equal(px_rndz_find(d->base, "pmix.h.tool.1", false, uri, sizeof(uri)),
                     PMIX_ERR_NOT_FOUND);
    /* a symbolic link to a good file */
    assert_int_equal(px_rndz_write(d->priv, "pmix.h.tool.2", "unix:/b", 0600), 0);
    snprintf(path, sizeof(path), "%s/pmix.h.tool.3", d->priv);
    snprintf(target, sizeof(target), "%s/pmix.h.tool.2", d->priv);
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(px_rndz_find(d->base, "pmix.h.tool.3", false, uri, sizeof(uri)),
                     PMIX_ERR_NOT_FOUND);
    /* in a directory others may enter */
    snprintf(open_dir, sizeof(open_dir), "%s/open", d->base);
    assert_int_equal(mkdir(open_dir, 0755), 0);
    assert_int_equal(px_rndz_write(open_dir, "pmix.h.tool.4", "unix:/c", 0600), 0);
    assert_int_equal(px_rndz_find(d->base, "pmix.h.tool.4", false, uri, sizeof(uri)),
                     PMIX_ERR_NOT_FOUND);
    /* not a URI of ours */
    assert_int_equal(px_rndz_write(d->priv, "pmix.h.tool.5", "tcp4://1.2.3.4:5", 0600), 0);
    assert_int_equal(px_rndz_find(d->base, "pmix.h.tool.5", false, uri, sizeof(uri)),
                     PMIX_ERR_NOT_FOUND);
}

typedef struct seen {
    char uris[8][64];
    int n;
    int accept_at; /* the call that returns true */
} seen;

static bool each_cb(const char *uri, void *arg)
{
    seen *s = arg;

    snprintf(s->uris[s->n], sizeof(s->uris[0]), "%s", uri);
    return ++s->n == s->accept_at;
}

static void test_each_newest_first(void **state)
{
    dirs *d = *state;
    char name[300], path[600];
    struct timeval tv[2] = {{1000, 0}, {1000, 0}};
    seen s = {.accept_at = 99};

    px_rndz_name("100", name, sizeof(name));
    assert_int_equal(px_rndz_write(d->priv, name, "unix:/old", 0600), 0);
    snprintf(path, sizeof(path), "%s/%s", d->priv, name);
    assert_int_equal(utimes(path, tv), 0);
    px_rndz_name("200", name, sizeof(name));
    assert_int_equal(px_rndz_write(d->priv, name, "unix:/new", 0600), 0);
    px_rndz_name("nspace.x", name, sizeof(name)); /* not a pid file */
    assert_int_equal(px_rndz_write(d->priv, name, "unix:/ns", 0600), 0);
    assert_int_equal(px_rndz_each(d->base, each_cb, &s), PMIX_ERR_NOT_FOUND);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.uris[0], "unix:/new");
    assert_string_equal(s.uris[1], "unix:/old");
    /* stops at the first server that accepts */
    memset(&s, 0, sizeof(s));
    s.accept_at = 1;
    assert_int_equal(px_rndz_each(d->base, each_cb, &s), PMIX_SUCCESS);
    assert_int_equal(s.n, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test_setup_teardown(test_write_find_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_untrusted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_newest_first, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
