/*
 * select.c - choosing an algorithm: the `auto` rule, the parser of the
 * PMIXLAB_FENCE_ALGO / PMIXLAB_BARRIER_ALGO values (and of the fence info
 * keys, which take the same values), and resolving a choice.
 *
 * Values: "auto" (or empty), or NAME, where tree takes an optional radix
 * ("tree:4") and hier an optional leaders' algorithm and radix
 * ("hier:bruck", "hier:ring:4", "hier:auto:8"). Names are case-insensitive.
 * An unknown name, a name that does not do the kind, or a bad parameter is
 * refused with a sentence that lists the valid values for that kind.
 *
 * The auto rule (Thakur, Rabenseifner and Gropp 2005 measured the same
 * shape; the thresholds are ours):
 *   barrier    dissemination: ceil(lg n) rounds, the fewest possible.
 *   allgather  with `bytes` the expected total result size (0 = unknown):
 *              ring     if bytes >= 512 KiB and n <= 64: long messages
 *                       between neighbours only, where the ring's n - 1
 *                       latencies are few;
 *              recdbl   else if n is a power of two (lg n rounds, no extra
 *                       steps, pairwise exchanges);
 *              bruck    else (ceil(lg n) rounds for any n).
 *   with groups (px_coll_auto_groups, what px_coll_resolve applies):
 *              hier, every member a leader, for an allgather over groups
 *              of one size (more than one group of more than one member)
 *              that the host marked switched (each under one switch),
 *              unless the ring rule applies: there it is never measurably
 *              slower than flat recursive doubling or Bruck in the study
 *              of docs/collectives.md ("Where hierarchy wins") and much
 *              faster where the links between groups are tapered. Not on
 *              a torus's lines, where the study found it slower.
 * Every member must resolve to the same algorithm; `auto` is a pure
 * function of (kind, n, bytes, groups), so members agree as long as they
 * pass the same `bytes` and groups.
 *
 * hier's values: "hier[:INNER][:RADIX][:one|all]", each part optional but
 * in that order; the leaders default to all for an allgather over even
 * groups and to one otherwise; all over groups of different sizes is
 * refused at resolve time (a column would miss the short groups).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

#define AUTO_LONG ((uint64_t)512 * 1024)
#define AUTO_RING_MAX 64u

const px_coll_algo *px_coll_auto(px_coll_kind kind, uint32_t nmembers, uint64_t bytes)
{
    if (kind == PX_COLL_BARRIER) {
        return px_coll_algo_by_name("dissemination");
    }
    if (kind != PX_COLL_ALLGATHER) {
        return NULL;
    }
    if (bytes >= AUTO_LONG && nmembers <= AUTO_RING_MAX) {
        return px_coll_algo_by_name("ring");
    }
    if (nmembers > 0 && (nmembers & (nmembers - 1)) == 0) {
        return px_coll_algo_by_name("recdbl");
    }
    return px_coll_algo_by_name("bruck");
}

/* Every group the same size, more than one group, more than one member in
 * each: where every member can be a leader (each column then meets every
 * group). */
static bool groups_even(const px_coll_groups *g, uint32_t nmembers)
{
    return g != NULL && g->n == nmembers && g->ngroups > 1 && g->ncols > 1 &&
           (uint64_t)g->ncols * g->ngroups == nmembers;
}

const px_coll_algo *px_coll_auto_groups(px_coll_kind kind, uint32_t nmembers, uint64_t bytes,
                                        const px_coll_groups *groups)
{
    if (kind == PX_COLL_ALLGATHER && groups_even(groups, nmembers) && groups->switched &&
        !(bytes >= AUTO_LONG && nmembers <= AUTO_RING_MAX)) {
        return px_coll_algo_by_name("hier");
    }
    return px_coll_auto(kind, nmembers, bytes);
}

static const char *kind_name(px_coll_kind kind)
{
    return kind == PX_COLL_BARRIER ? "barrier" : "allgather";
}

__attribute__((format(printf, 3, 4))) static void say(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    va_list ap;

    if (err != NULL && errlen > 0) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
}

/* Append the valid values for `kind` to err. */
static void list_valid(px_coll_kind kind, char *err, size_t errlen)
{
    size_t at;

    if (err == NULL || errlen == 0) {
        return;
    }
    at = strlen(err);
    at += (size_t)snprintf(err + at, at < errlen ? errlen - at : 0, "; valid %s values: auto",
                           kind_name(kind));
    for (size_t i = 0; px_coll_algo_at(i) != NULL; i++) {
        const px_coll_algo *a = px_coll_algo_at(i);
        if (px_coll_algo_supports(a, kind) && at < errlen) {
            at += (size_t)snprintf(err + at, errlen - at, ", %s", a->syntax);
        }
    }
}

static bool is_leaders(const char *s)
{
    return px_coll_name_eq(s, "one") || px_coll_name_eq(s, "all");
}

static bool parse_radix(const char *s, unsigned *radix)
{
    char *end;
    unsigned long v;

    if (*s < '0' || *s > '9') {
        return false;
    }
    v = strtoul(s, &end, 10);
    if (*end != '\0' || v < 2 || v > PX_COLL_RADIX_MAX) {
        return false;
    }
    *radix = (unsigned)v;
    return true;
}

pmix_status_t px_coll_parse(px_coll_kind kind, const char *value, px_coll_choice *out, char *err,
                            size_t errlen)
{
    char buf[128], *tok[4] = {NULL, NULL, NULL, NULL};
    px_coll_choice ch = {NULL, NULL, 0, 0};
    int ntok = 0;

    if (err != NULL && errlen > 0) {
        err[0] = '\0';
    }
    if (out != NULL) {
        memset(out, 0, sizeof(*out));
    }
    if (out == NULL || (kind != PX_COLL_BARRIER && kind != PX_COLL_ALLGATHER)) {
        say(err, errlen, "bad arguments");
        return PMIX_ERR_BAD_PARAM;
    }
    if (value == NULL || value[0] == '\0' || px_coll_name_eq(value, "auto")) {
        return PMIX_SUCCESS;
    }
    if (strlen(value) >= sizeof(buf)) {
        say(err, errlen, "%s algorithm value too long", kind_name(kind));
        list_valid(kind, err, errlen);
        return PMIX_ERR_BAD_PARAM;
    }
    strcpy(buf, value);
    /* NAME[:P1[:P2]]: every part non-empty. */
    tok[ntok++] = buf;
    for (char *q = buf; *q != '\0'; q++) {
        if (*q != ':') {
            continue;
        }
        if (ntok == 4) {
            say(err, errlen, "too many ':' parameters in \"%s\"", value);
            list_valid(kind, err, errlen);
            return PMIX_ERR_BAD_PARAM;
        }
        *q = '\0';
        tok[ntok++] = q + 1;
    }
    for (int i = 0; i < ntok; i++) {
        if (tok[i][0] == '\0') {
            say(err, errlen, "empty parameter in \"%s\"", value);
            list_valid(kind, err, errlen);
            return PMIX_ERR_BAD_PARAM;
        }
    }
    ch.algo = px_coll_algo_by_name(tok[0]);
    if (ch.algo == NULL) {
        say(err, errlen, "unknown %s algorithm \"%s\"", kind_name(kind), tok[0]);
        list_valid(kind, err, errlen);
        return PMIX_ERR_BAD_PARAM;
    }
    if (!px_coll_algo_supports(ch.algo, kind)) {
        say(err, errlen, "%s does not do %s %s", ch.algo->name,
            kind == PX_COLL_BARRIER ? "a" : "an", kind_name(kind));
        list_valid(kind, err, errlen);
        return PMIX_ERR_BAD_PARAM;
    }
    if (ch.algo->drv == &px_coll_hier_driver) {
        /* hier[:INNER][:RADIX][:one|all], in that order, each optional. */
        int i = 1;
        if (i < ntok && !(tok[i][0] >= '0' && tok[i][0] <= '9') && !is_leaders(tok[i])) {
            if (!px_coll_name_eq(tok[i], "auto")) {
                ch.inner = px_coll_algo_by_name(tok[i]);
                if (ch.inner == NULL || !ch.inner->lateral ||
                    !px_coll_algo_supports(ch.inner, kind)) {
                    say(err, errlen, "hier cannot run \"%s\" among group leaders for a %s", tok[i],
                        kind_name(kind));
                    list_valid(kind, err, errlen);
                    return PMIX_ERR_BAD_PARAM;
                }
            }
            i++;
        }
        if (i < ntok && !is_leaders(tok[i])) {
            if (!parse_radix(tok[i], &ch.radix)) {
                say(err, errlen, "bad radix \"%s\" (2..255) in \"%s\"", tok[i], value);
                list_valid(kind, err, errlen);
                return PMIX_ERR_BAD_PARAM;
            }
            i++;
        }
        if (i < ntok && is_leaders(tok[i])) {
            ch.leaders = px_coll_name_eq(tok[i], "one") ? PX_COLL_LEADERS_ONE : PX_COLL_LEADERS_ALL;
            i++;
        }
        if (i < ntok) {
            say(err, errlen, "bad parameter \"%s\" in \"%s\"", tok[i], value);
            list_valid(kind, err, errlen);
            return PMIX_ERR_BAD_PARAM;
        }
    } else if (ch.algo->radix) {
        if (ntok >= 3 || (ntok == 2 && !parse_radix(tok[1], &ch.radix))) {
            say(err, errlen, "bad radix in \"%s\" (a number 2..255)", value);
            list_valid(kind, err, errlen);
            return PMIX_ERR_BAD_PARAM;
        }
    } else if (ntok > 1) {
        say(err, errlen, "%s takes no parameter (\"%s\")", ch.algo->name, value);
        list_valid(kind, err, errlen);
        return PMIX_ERR_BAD_PARAM;
    }
    *out = ch;
    return PMIX_SUCCESS;
}

pmix_status_t px_coll_choose(px_coll_kind kind, const char *info_value, const char *env_value,
                             px_coll_choice *out, char *err, size_t errlen)
{
    const char *value = info_value != NULL ? info_value : env_value;
    const char *source;
    pmix_status_t rc;
    char msg[512];

    if (info_value != NULL) {
        source = kind == PX_COLL_BARRIER ? "info key " PX_COLL_KEY_BARRIER
                                         : "info key " PX_COLL_KEY_FENCE;
    } else {
        source = kind == PX_COLL_BARRIER ? PX_COLL_ENV_BARRIER : PX_COLL_ENV_FENCE;
    }
    rc = px_coll_parse(kind, value, out, msg, sizeof(msg));
    if (rc != PMIX_SUCCESS) {
        say(err, errlen, "%s: %s", source, msg);
    } else if (err != NULL && errlen > 0) {
        err[0] = '\0';
    }
    return rc;
}

void px_coll_choice_format(const px_coll_choice *ch, char *buf, size_t len)
{
    if (buf == NULL || len == 0) {
        return;
    }
    if (ch == NULL || ch->algo == NULL) {
        snprintf(buf, len, "auto");
    } else if (ch->algo->drv == &px_coll_hier_driver) {
        const char *lead = ch->leaders == PX_COLL_LEADERS_ALL   ? ":all"
                           : ch->leaders == PX_COLL_LEADERS_ONE ? ":one"
                                                                : "";
        if (ch->radix != 0) {
            snprintf(buf, len, "hier:%s:%u%s", px_coll_algo_name(ch->inner), ch->radix, lead);
        } else if (ch->inner != NULL) {
            snprintf(buf, len, "hier:%s%s", ch->inner->name, lead);
        } else {
            snprintf(buf, len, "hier%s", lead);
        }
    } else if (ch->algo->radix && ch->radix != 0) {
        snprintf(buf, len, "%s:%u", ch->algo->name, ch->radix);
    } else {
        snprintf(buf, len, "%s", ch->algo->name);
    }
}

pmix_status_t px_coll_resolve(const px_coll_choice *in, px_coll_kind kind, uint32_t nmembers,
                              uint64_t size_hint, const px_coll_groups *groups, px_coll_choice *out)
{
    px_coll_choice ch = {NULL, NULL, 0, 0};

    if (in == NULL || out == NULL || nmembers == 0 ||
        (kind != PX_COLL_BARRIER && kind != PX_COLL_ALLGATHER)) {
        return PMIX_ERR_BAD_PARAM;
    }
    ch.algo = in->algo;
    if (ch.algo == NULL) {
        ch.algo = px_coll_auto_groups(kind, nmembers, size_hint, groups);
    }
    if (!px_coll_algo_supports(ch.algo, kind)) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (ch.algo->radix) {
        ch.radix = in->radix != 0 ? in->radix : PX_COLL_RADIX_DEFAULT;
        if (ch.radix < 2 || ch.radix > PX_COLL_RADIX_MAX) {
            return PMIX_ERR_BAD_PARAM;
        }
    }
    if (ch.algo->drv == &px_coll_hier_driver) {
        uint32_t ngroups = groups != NULL ? groups->ngroups : 1;
        ch.leaders = in->leaders;
        if (ch.leaders == PX_COLL_LEADERS_DEFAULT) {
            ch.leaders = kind == PX_COLL_ALLGATHER && groups_even(groups, nmembers)
                             ? PX_COLL_LEADERS_ALL
                             : PX_COLL_LEADERS_ONE;
        }
        if (ch.leaders == PX_COLL_LEADERS_ALL && groups != NULL &&
            (uint64_t)groups->ncols * groups->ngroups != nmembers) {
            return PMIX_ERR_BAD_PARAM; /* a column would miss the groups that are short */
        }
        if (ch.leaders == PX_COLL_LEADERS_ALL) {
            /* the columns: as many members as there are groups; no trees
             * but a tree among the columns, so no radix otherwise (members
             * that name one or not agree) */
            ch.inner = in->inner != NULL ? in->inner : px_coll_auto(kind, ngroups, 0);
            if (!ch.inner->radix) {
                ch.radix = 0;
            }
        } else {
            ch.inner = in->inner != NULL ? in->inner : px_coll_auto(kind, ngroups, size_hint);
        }
        if (ch.leaders != PX_COLL_LEADERS_ONE && ch.leaders != PX_COLL_LEADERS_ALL) {
            return PMIX_ERR_BAD_PARAM;
        }
        if (!ch.inner->lateral || !px_coll_algo_supports(ch.inner, kind)) {
            return PMIX_ERR_BAD_PARAM;
        }
    }
    *out = ch;
    return PMIX_SUCCESS;
}
