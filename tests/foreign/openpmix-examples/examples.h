/*
 * examples.h: the helpers OpenPMIx's example programs share.
 *
 * The example programs Debian ships with libpmix-dev
 * (/usr/share/doc/libpmix-dev/examples) include "examples.h", which the
 * package leaves out. This file is our own version of what they expect from
 * it: a lock (a mutex, a condition and an `active` flag) through which a
 * thread waits for a callback, the structures the examples collect query
 * results and job-end notices in, and a macro that marks main's parameters
 * as used. run-openpmix-examples.sh puts it next to the unchanged example
 * sources; it is not part of the library.
 */
#ifndef PMIXLAB_OPENPMIX_EXAMPLES_H
#define PMIXLAB_OPENPMIX_EXAMPLES_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <pmix_common.h>

/* A callback sets `active` to false and wakes the waiting thread. */
typedef struct {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    volatile bool active;
    pmix_status_t status;
    int count;
    size_t evhandler_ref;
} mylock_t;

#define DEBUG_CONSTRUCT_LOCK(l)                \
    do {                                       \
        pthread_mutex_init(&(l)->mutex, NULL); \
        pthread_cond_init(&(l)->cond, NULL);   \
        (l)->active = true;                    \
        (l)->status = PMIX_SUCCESS;            \
        (l)->count = 0;                        \
        (l)->evhandler_ref = 0;                \
    } while (0)

#define DEBUG_DESTRUCT_LOCK(l)              \
    do {                                    \
        pthread_cond_destroy(&(l)->cond);   \
        pthread_mutex_destroy(&(l)->mutex); \
    } while (0)

/* Blocks until DEBUG_WAKEUP_THREAD clears the lock's `active` flag. */
#define DEBUG_WAIT_THREAD(l)                            \
    do {                                                \
        pthread_mutex_lock(&(l)->mutex);                \
        while ((l)->active)                             \
            pthread_cond_wait(&(l)->cond, &(l)->mutex); \
        pthread_mutex_unlock(&(l)->mutex);              \
    } while (0)

#define DEBUG_WAKEUP_THREAD(l)              \
    do {                                    \
        pthread_mutex_lock(&(l)->mutex);    \
        (l)->active = false;                \
        pthread_cond_broadcast(&(l)->cond); \
        pthread_mutex_unlock(&(l)->mutex);  \
    } while (0)

/* The results of a query, handed over by its callback. */
typedef struct {
    mylock_t lock;
    pmix_info_t *info;
    size_t ninfo;
    volatile bool active; /* debuggerd.c waits on this instead of the lock */
} myquery_data_t;

#define DEBUG_CONSTRUCT_MYQUERY(q)        \
    do {                                  \
        DEBUG_CONSTRUCT_LOCK(&(q)->lock); \
        (q)->info = NULL;                 \
        (q)->ninfo = 0;                   \
    } while (0)

#define DEBUG_DESTRUCT_MYQUERY(q)                  \
    do {                                           \
        DEBUG_DESTRUCT_LOCK(&(q)->lock);           \
        if ((q)->info != NULL)                     \
            PMIX_INFO_FREE((q)->info, (q)->ninfo); \
    } while (0)

/* What a job-end notice carries: the namespace and its exit code. */
typedef struct {
    mylock_t lock;
    char *nspace;
    int exit_code;
    bool exit_code_given;
} myrel_t;

#define DEBUG_CONSTRUCT_MYREL(r)          \
    do {                                  \
        DEBUG_CONSTRUCT_LOCK(&(r)->lock); \
        (r)->nspace = NULL;               \
        (r)->exit_code = 0;               \
        (r)->exit_code_given = false;     \
    } while (0)

#define DEBUG_DESTRUCT_MYREL(r)          \
    do {                                 \
        DEBUG_DESTRUCT_LOCK(&(r)->lock); \
        free((r)->nspace);               \
    } while (0)

/* Uses its arguments (main's argc and argv) so that no warning names them. */
static inline void examples_use_params(int n, ...)
{
    (void)n;
}
#define EXAMPLES_HIDE_UNUSED_PARAMS(...) examples_use_params(0, __VA_ARGS__)

#endif /* PMIXLAB_OPENPMIX_EXAMPLES_H */
