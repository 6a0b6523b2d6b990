/*
 * toolcommon.c - see toolcommon.h.
 */
#include "toolcommon.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

int tc_server_opt(const char *prog, bool system, int c, const char *arg, pmix_info_t *attr,
                  size_t *nattr)
{
    bool yes = true;

    if (c != 'p' && c != 'u' && c != 'n' && (c != 's' || !system))
        return 0;
    if (*nattr > 0) {
        fprintf(stderr, "%s: give at most one of --pid, --uri, --nspace%s\n", prog,
                system ? ", --system" : "");
        return 2;
    }
    switch (c) {
    case 'p': {
        char *end;
        long v = strtol(arg, &end, 10);
        pid_t pid = (pid_t)v;
        if (*arg == '\0' || *end != '\0' || v <= 0) {
            fprintf(stderr, "%s: --pid needs a process id, not '%s'\n", prog, arg);
            return 2;
        }
        PMIx_Info_load(&attr[(*nattr)++], PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
        break;
    }
    case 'u': PMIx_Info_load(&attr[(*nattr)++], PMIX_SERVER_URI, arg, PMIX_STRING); break;
    case 'n': PMIx_Info_load(&attr[(*nattr)++], PMIX_SERVER_NSPACE, arg, PMIX_STRING); break;
    default: PMIx_Info_load(&attr[(*nattr)++], PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL); break;
    }
    return 1;
}

char **tc_namespaces(void)
{
    pmix_query_t *q = PMIx_Query_create(1);
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    char **names = NULL;
    pmix_status_t rc;

    if (q == NULL)
        return NULL;
    PMIx_Argv_append_nosize(&q->keys, PMIX_QUERY_NAMESPACES);
    rc = PMIx_Query_info(q, 1, &info, &ninfo);
    PMIx_Query_free(q, 1);
    if (rc == PMIX_SUCCESS && ninfo >= 1 && info[0].value.type == PMIX_STRING)
        names = PMIx_Argv_split(info[0].value.data.string, ',');
    PMIx_Info_free(info, ninfo);
    return names;
}

pmix_status_t tc_proc_table(const char *ns, pmix_info_t **info, size_t *ninfo,
                            const pmix_proc_info_t **pi, size_t *n)
{
    pmix_query_t *q = PMIx_Query_create(1);
    pmix_status_t rc;

    if (q == NULL)
        return PMIX_ERR_NOMEM;
    PMIx_Argv_append_nosize(&q->keys, PMIX_QUERY_PROC_TABLE);
    q->qualifiers = PMIx_Info_create(1);
    q->nqual = 1;
    PMIx_Info_load(&q->qualifiers[0], PMIX_NSPACE, ns, PMIX_STRING);
    rc = PMIx_Query_info(q, 1, info, ninfo);
    PMIx_Query_free(q, 1);
    if (rc != PMIX_SUCCESS)
        return rc;
    if (*ninfo < 1 || (*info)[0].value.type != PMIX_DATA_ARRAY ||
        (*info)[0].value.data.darray == NULL ||
        (*info)[0].value.data.darray->type != PMIX_PROC_INFO) {
        PMIx_Info_free(*info, *ninfo);
        return PMIX_ERR_BAD_PARAM;
    }
    *pi = (*info)[0].value.data.darray->array;
    *n = (*info)[0].value.data.darray->size;
    return PMIX_SUCCESS;
}

void tc_json_str(const char *s)
{
    putchar('"');
    for (; s != NULL && *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}
