/*
 * pmixrun_apps.c - the application contexts of a job.
 *
 * A job is one or more application contexts, as mpirun's and prterun's
 * `-n 2 --pset ocean ./a : -n 3 --pset ice ./b`: each has its ranks (the
 * contexts take consecutive ranks in command-line order), its program and
 * arguments, its -x environment, its working directory and its process
 * set. pmixrun.c parses them, pmixrun_launch.c starts each rank with its
 * app's program, environment and directory, pmixrun_job.c describes them
 * in the job data (through the host core's builder: PMIX_APPNUM,
 * PMIX_APP_SIZE, PMIX_APPLDR, PMIX_APP_ARGV, PMIX_WDIR, PMIX_PSET_NAME per
 * app), and with --nodes pmixrun sends them to the daemons in PD_JOB
 * (apps_write here, apps_read in pmixd).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "pmixrun.h"
#include "tcplink.h"

job_app *job_app_of(job *j, int rank)
{
    for (int a = 0; a < j->napps; a++)
        if (rank < j->apps[a].first + j->apps[a].size)
            return &j->apps[a];
    return &j->apps[j->napps - 1];
}

static void free_argv(char **v)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

void job_apps_free(job *j)
{
    for (int a = 0; j->apps != NULL && a < j->napps; a++) {
        free_argv(j->apps[a].argv);
        free_argv(j->apps[a].env_set);
        free(j->apps[a].prog);
        free(j->apps[a].wdir);
        free(j->apps[a].pset);
    }
    free(j->apps);
    j->apps = NULL;
    j->napps = 0;
}

static void put_argv(tl_buf *b, char *const *v)
{
    uint32_t n = 0;
    while (v != NULL && v[n] != NULL)
        n++;
    tl_put_u32(b, n);
    for (uint32_t i = 0; i < n; i++)
        tl_put_str(b, v[i]);
}

void apps_write(const job *j, tl_buf *b)
{
    tl_put_u32(b, (uint32_t)j->napps);
    for (int a = 0; a < j->napps; a++) {
        const job_app *p = &j->apps[a];
        tl_put_u32(b, (uint32_t)p->size);
        tl_put_str(b, p->wdir);
        tl_put_str(b, p->pset);
        tl_put_str(b, p->prog);
        put_argv(b, p->argv);
        put_argv(b, p->env_set);
    }
}

/* A NULL-terminated array of `min` or more strings; NULL if malformed. */
static char **get_argv(tl_reader *r, uint32_t min)
{
    uint32_t n = tl_get_u32(r);
    char **v;
    if (r->bad || n < min || n > r->left) /* each string takes 4 bytes at least */
        return NULL;
    if ((v = calloc((size_t)n + 1, sizeof(*v))) == NULL)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        if ((v[i] = tl_get_str(r)) == NULL) {
            free_argv(v);
            return NULL;
        }
    return v;
}

/* "" means none. */
static char *get_opt_str(tl_reader *r)
{
    char *s = tl_get_str(r);
    if (s != NULL && s[0] == '\0') {
        free(s);
        s = NULL;
    }
    return s;
}

int apps_read(job *j, tl_reader *r)
{
    uint32_t n = tl_get_u32(r);
    int first = 0;

    /* none for a job of no rank (a system server's first job) */
    if (r->bad || (n == 0 && j->nprocs > 0) || n > (uint32_t)j->nprocs ||
        (j->apps = calloc(n > 0 ? n : 1, sizeof(*j->apps))) == NULL)
        return -1;
    j->napps = (int)n;
    for (uint32_t a = 0; a < n; a++) {
        job_app *p = &j->apps[a];
        uint32_t size = tl_get_u32(r);
        if (r->bad || size == 0 || size > (uint32_t)(j->nprocs - first))
            return -1;
        p->first = first;
        p->size = (int)size;
        first += (int)size;
        p->wdir = get_opt_str(r);
        p->pset = get_opt_str(r);
        p->prog = tl_get_str(r);
        if (p->prog == NULL || (p->argv = get_argv(r, 1)) == NULL ||
            (p->env_set = get_argv(r, 0)) == NULL)
            return -1;
    }
    return r->bad || first != j->nprocs ? -1 : 0;
}
