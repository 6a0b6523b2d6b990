/*
 * argv.c: NULL-terminated string arrays ("argv") and environment arrays.
 *
 * Every function copies the strings it stores, so the caller's strings may be
 * freed afterwards. A failing function leaves the array it was given as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "px_common.h"

extern char **environ;

int PMIx_Argv_count(char **argv)
{
    int n = 0;
    if (argv != NULL) {
        while (argv[n] != NULL) {
            n++;
        }
    }
    return n;
}

void PMIx_Argv_free(char **argv)
{
    if (argv == NULL) {
        return;
    }
    for (size_t i = 0; argv[i] != NULL; i++) {
        free(argv[i]);
    }
    free(argv);
}

/* Inserts a copy of arg at index `at` (0..count). */
static pmix_status_t insert(char ***argv, const char *arg, size_t at)
{
    if (argv == NULL || arg == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    size_t n = (size_t)PMIx_Argv_count(*argv);
    char *copy = strdup(arg);
    if (copy == NULL) {
        return PMIX_ERR_NOMEM;
    }
    char **v = realloc(*argv, (n + 2) * sizeof(char *));
    if (v == NULL) {
        free(copy);
        return PMIX_ERR_NOMEM;
    }
    if (at > n) {
        at = n;
    }
    memmove(&v[at + 1], &v[at], (n - at) * sizeof(char *));
    v[at] = copy;
    v[n + 1] = NULL;
    *argv = v;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Argv_append_nosize(char ***argv, const char *arg)
{
    return insert(argv, arg, SIZE_MAX);
}

pmix_status_t PMIx_Argv_prepend_nosize(char ***argv, const char *arg)
{
    return insert(argv, arg, 0);
}

pmix_status_t PMIx_Argv_append_unique_nosize(char ***argv, const char *arg)
{
    if (argv == NULL || arg == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; *argv != NULL && (*argv)[i] != NULL; i++) {
        if (strcmp((*argv)[i], arg) == 0) {
            return PMIX_SUCCESS;
        }
    }
    return insert(argv, arg, SIZE_MAX);
}

/* Splits src at delimiter; empty fields are kept only if keep_empty. */
static char **split(const char *src, int delimiter, bool keep_empty)
{
    char **out = NULL;
    if (src == NULL) {
        return NULL;
    }
    const char *p = src;
    for (;;) {
        const char *end = strchr(p, delimiter);
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len > 0 || keep_empty) {
            char *field = strndup(p, len);
            if (field == NULL || PMIx_Argv_append_nosize(&out, field) != PMIX_SUCCESS) {
                free(field);
                PMIx_Argv_free(out);
                return NULL;
            }
            free(field);
        }
        if (end == NULL) {
            break;
        }
        p = end + 1;
    }
    return out;
}

char **PMIx_Argv_split(const char *src_string, int delimiter)
{
    return split(src_string, delimiter, false);
}

char **PMIx_Argv_split_with_empty(const char *src_string, int delimiter)
{
    return split(src_string, delimiter, true);
}

char *PMIx_Argv_join(char **argv, int delimiter)
{
    size_t len = 0;
    size_t n = (size_t)PMIx_Argv_count(argv);
    for (size_t i = 0; i < n; i++) {
        len += strlen(argv[i]) + 1;
    }
    char *s = malloc(len > 0 ? len : 1);
    if (s == NULL) {
        return NULL;
    }
    char *p = s;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(argv[i]);
        memcpy(p, argv[i], l);
        p += l;
        if (i + 1 < n) {
            *p++ = (char)delimiter;
        }
    }
    *p = '\0';
    return s;
}

char **PMIx_Argv_copy(char **argv)
{
    if (argv == NULL) {
        return NULL;
    }
    char **out = calloc((size_t)PMIx_Argv_count(argv) + 1, sizeof(char *));
    if (out == NULL) {
        return NULL;
    }
    for (size_t i = 0; argv[i] != NULL; i++) {
        out[i] = strdup(argv[i]);
        if (out[i] == NULL) {
            PMIx_Argv_free(out);
            return NULL;
        }
    }
    return out;
}

/* The process's own environment (environ) is not an array this library
 * allocated: setenv and unsetenv change it. */
pmix_status_t PMIx_Setenv(const char *name, const char *value, bool overwrite, char ***env)
{
    if (name == NULL || env == NULL || strchr(name, '=') != NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (*env == environ) {
        if (!overwrite && value != NULL && getenv(name) != NULL) {
            return PMIX_ERR_EXISTS;
        }
        int rc = value != NULL ? setenv(name, value, 1) : unsetenv(name);
        return rc == 0 ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    }
    size_t nl = strlen(name);
    size_t vl = value != NULL ? strlen(value) : 0;
    char *entry = malloc(nl + vl + 2);
    if (entry == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(entry, name, nl);
    entry[nl] = '=';
    if (vl > 0) {
        memcpy(entry + nl + 1, value, vl);
    }
    entry[nl + 1 + vl] = '\0';

    for (size_t i = 0; *env != NULL && (*env)[i] != NULL; i++) {
        char *e = (*env)[i];
        if (strncmp(e, name, nl) == 0 && e[nl] == '=') {
            if (!overwrite) {
                free(entry);
                return PMIX_ERR_EXISTS;
            }
            free(e);
            (*env)[i] = entry;
            return PMIX_SUCCESS;
        }
    }
    pmix_status_t rc = PMIx_Argv_append_nosize(env, entry);
    free(entry);
    return rc;
}
