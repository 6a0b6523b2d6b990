/*
 * regex.c - PMIx_generate_regex and PMIx_generate_ppn: compact forms of
 * node lists and per-node rank lists, and their expansion.
 *
 * The Standard leaves the format to the implementation; the only promise
 * is that the library that made a "regex" can read it back. Ours:
 *
 *   node list   "pmixlab:" followed by comma-separated items; an item is
 *               either a plain name or PREFIX[W:RANGES], the names PREFIX
 *               followed by each number of RANGES printed with at least W
 *               digits (zero-padded). RANGES is "a-b" or "a" items joined
 *               by '.'. Example: "n01,n02,n03,n07,login" becomes
 *               "pmixlab:n[2:1-3.7],login".
 *   rank lists  "pmixlab:" followed by one range list per node, nodes
 *               separated by ';'; a range list is "a-b" or "a" items
 *               joined by ','. "0,1,2,3;4,5,6,7;9,11" becomes
 *               "pmixlab:0-3;4-7;9,11".
 *
 * A name that contains '[' or ']' is never compressed; a list with such a
 * name is stored as "pmixlab-raw:" plus the list itself.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/px_regex.h"

#define TAG "pmixlab:"
#define RAW "pmixlab-raw:"

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int err;
} sbuf;

static void sb_add(sbuf *b, const char *p, size_t n)
{
    if (b->err)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        char *s;
        while (cap < b->len + n + 1)
            cap *= 2;
        s = realloc(b->s, cap);
        if (s == NULL) {
            b->err = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_num(sbuf *b, unsigned long v, int width)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%0*lu", width, v);
    sb_add(b, tmp, (size_t)n);
}

static pmix_status_t sb_done(sbuf *b, char **out)
{
    if (b->err) {
        free(b->s);
        return PMIX_ERR_NOMEM;
    }
    if (b->s == NULL) {
        b->s = strdup("");
        if (b->s == NULL)
            return PMIX_ERR_NOMEM;
    }
    *out = b->s;
    return PMIX_SUCCESS;
}

/* Split "name" into a prefix and a trailing number; false if none. */
static bool split(const char *name, size_t len, size_t *plen, unsigned long *num, int *width)
{
    size_t i = len;

    while (i > 0 && isdigit((unsigned char)name[i - 1]))
        i--;
    if (i == len || len - i > 9)
        return false;
    *plen = i;
    *width = (int)(len - i);
    *num = strtoul(name + i, NULL, 10);
    return true;
}

/* Append the ranges of nums[0..n) (sorted as given) joined by `sep`. */
static void ranges(sbuf *b, const unsigned long *nums, size_t n, int width, char sep)
{
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && nums[j + 1] == nums[j] + 1)
            j++;
        if (i > 0)
            sb_add(b, &sep, 1);
        sb_num(b, nums[i], width);
        if (j > i) {
            sb_add(b, "-", 1);
            sb_num(b, nums[j], width);
        }
        i = j + 1;
    }
}

PMIX_EXPORT pmix_status_t PMIx_generate_regex(const char *input, char **regex)
{
    sbuf b = {0};
    const char *p;
    unsigned long *nums;
    size_t cap;

    if (input == NULL || regex == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (strchr(input, '[') != NULL || strchr(input, ']') != NULL) {
        sb_str(&b, RAW);
        sb_str(&b, input);
        return sb_done(&b, regex);
    }
    cap = strlen(input) / 2 + 2;
    nums = malloc(cap * sizeof(*nums));
    if (nums == NULL)
        return PMIX_ERR_NOMEM;
    sb_str(&b, TAG);
    p = input;
    while (*p != '\0') {
        size_t len = strcspn(p, ","), plen, n = 0;
        unsigned long num;
        int width;

        if (!split(p, len, &plen, &num, &width)) {
            sb_add(&b, p, len);
        } else {
            /* gather following names with the same prefix and width */
            const char *q = p;
            size_t qlen = len;
            nums[n++] = num;
            for (;;) {
                const char *r = q + qlen + (q[qlen] == ',');
                size_t rlen, rplen;
                unsigned long rnum;
                int rwidth;
                if (q[qlen] == '\0' || *r == '\0')
                    break;
                rlen = strcspn(r, ",");
                if (!split(r, rlen, &rplen, &rnum, &rwidth) || rplen != plen || rwidth != width ||
                    strncmp(r, p, plen) != 0 || rnum <= nums[n - 1])
                    break;
                nums[n++] = rnum;
                q = r;
                qlen = rlen;
            }
            sb_add(&b, p, plen);
            sb_add(&b, "[", 1);
            sb_num(&b, (unsigned long)width, 0);
            sb_add(&b, ":", 1);
            ranges(&b, nums, n, 0, '.');
            sb_add(&b, "]", 1);
            len = (size_t)(q + qlen - p);
        }
        p += len;
        if (*p == ',') {
            sb_add(&b, ",", 1);
            p++;
        }
    }
    free(nums);
    return sb_done(&b, regex);
}

PMIX_EXPORT pmix_status_t PMIx_generate_ppn(const char *input, char **ppn)
{
    sbuf b = {0};
    const char *p;
    unsigned long *nums;

    if (input == NULL || ppn == NULL)
        return PMIX_ERR_BAD_PARAM;
    nums = malloc((strlen(input) / 2 + 2) * sizeof(*nums));
    if (nums == NULL)
        return PMIX_ERR_NOMEM;
    sb_str(&b, TAG);
    p = input;
    for (;;) {
        size_t n = 0;
        while (*p != '\0' && *p != ';') {
            char *end;
            if (!isdigit((unsigned char)*p)) {
                free(nums);
                free(b.s);
                return PMIX_ERR_BAD_PARAM;
            }
            nums[n++] = strtoul(p, &end, 10);
            p = end;
            if (*p == ',')
                p++;
        }
        ranges(&b, nums, n, 0, ',');
        if (*p != ';')
            break;
        sb_add(&b, ";", 1);
        p++;
    }
    free(nums);
    return sb_done(&b, ppn);
}

/* Expand one RANGES list ("a-b" / "a" joined by `sep`) into `out`, each
 * number printed after `prefix` with `width` digits, joined by `join`. */
static pmix_status_t expand_ranges(const char *s, size_t len, char sep, sbuf *out,
                                   const char *prefix, size_t plen, int width, char join)
{
    const char *end = s + len;
    bool first = true;

    while (s < end) {
        char *e;
        unsigned long a, z;

        if (!isdigit((unsigned char)*s))
            return PMIX_ERR_BAD_PARAM;
        a = strtoul(s, &e, 10);
        z = a;
        if (e < end && *e == '-') {
            if (!isdigit((unsigned char)e[1]))
                return PMIX_ERR_BAD_PARAM;
            z = strtoul(e + 1, &e, 10);
        }
        if (z < a || z - a > 10000000 || e > end)
            return PMIX_ERR_BAD_PARAM;
        for (unsigned long v = a; v <= z; v++) {
            if (!first)
                sb_add(out, &join, 1);
            first = false;
            sb_add(out, prefix, plen);
            sb_num(out, v, width);
        }
        s = e;
        if (s < end) {
            if (*s != sep)
                return PMIX_ERR_BAD_PARAM;
            s++;
        }
    }
    return out->err ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

pmix_status_t px_regex_expand_nodes(const char *regex, char **list)
{
    sbuf b = {0};
    const char *p;

    if (strncmp(regex, RAW, strlen(RAW)) == 0) {
        *list = strdup(regex + strlen(RAW));
        return *list ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    }
    if (strncmp(regex, TAG, strlen(TAG)) != 0)
        return PMIX_ERR_BAD_PARAM;
    p = regex + strlen(TAG);
    while (*p != '\0') {
        const char *br = strchr(p, '[');
        const char *comma = strchr(p, ',');
        if (br != NULL && (comma == NULL || br < comma)) {
            const char *colon = strchr(br, ':'), *close = strchr(br, ']');
            int width;
            pmix_status_t rc;
            if (colon == NULL || close == NULL || colon > close) {
                free(b.s);
                return PMIX_ERR_BAD_PARAM;
            }
            width = atoi(br + 1);
            if (width < 0 || width > 9) {
                free(b.s);
                return PMIX_ERR_BAD_PARAM;
            }
            rc = expand_ranges(colon + 1, (size_t)(close - colon - 1), '.', &b, p, (size_t)(br - p),
                               width, ',');
            if (rc != PMIX_SUCCESS) {
                free(b.s);
                return rc;
            }
            p = close + 1;
        } else {
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            sb_add(&b, p, len);
            p += len;
        }
        if (*p == ',') {
            sb_add(&b, ",", 1);
            p++;
        } else if (*p != '\0') {
            free(b.s);
            return PMIX_ERR_BAD_PARAM;
        }
    }
    return sb_done(&b, list);
}

pmix_status_t px_regex_expand_ppn(const char *regex, char **list)
{
    sbuf b = {0};
    const char *p;

    if (strncmp(regex, TAG, strlen(TAG)) != 0)
        return PMIX_ERR_BAD_PARAM;
    p = regex + strlen(TAG);
    for (;;) {
        size_t len = strcspn(p, ";");
        pmix_status_t rc = expand_ranges(p, len, ',', &b, "", 0, 0, ',');
        if (rc != PMIX_SUCCESS) {
            free(b.s);
            return rc;
        }
        p += len;
        if (*p != ';')
            break;
        sb_add(&b, ";", 1);
        p++;
    }
    return sb_done(&b, list);
}
