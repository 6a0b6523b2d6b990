/*
 * jread.c - a small JSON reader, for the reports that pmixsim writes with
 * --json and that `pmixsim run` reads back (scenario.c).
 *
 * The whole text is parsed into a tree of jv values allocated on the heap;
 * jv_free releases it. Numbers are doubles. Strings keep their bytes with
 * the common escapes decoded (\uXXXX below 0x80 only; others become '?':
 * pmixsim's reports are ASCII). Objects keep their keys in order; lookups
 * are linear, which suits reports of a few dozen keys.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

typedef struct {
    const char *s, *end;
    const char *err;
} jp;

static jv *parse_value(jp *p, int depth);

static void skip_ws(jp *p)
{
    while (p->s < p->end && isspace((unsigned char)*p->s))
        p->s++;
}

static jv *new_value(jv_type t)
{
    jv *v = calloc(1, sizeof(*v));

    if (v != NULL)
        v->type = t;
    return v;
}

static char *parse_string(jp *p)
{
    size_t cap = 16, n = 0;
    char *out = malloc(cap);

    if (out == NULL)
        return NULL;
    p->s++; /* the opening quote */
    while (p->s < p->end && *p->s != '"') {
        char c = *p->s++;
        if (c == '\\') {
            if (p->s >= p->end)
                break;
            c = *p->s++;
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned code = 0;
                for (int i = 0; i < 4 && p->s < p->end; i++, p->s++)
                    code = code * 16 + (unsigned)(isdigit((unsigned char)*p->s)
                                                      ? *p->s - '0'
                                                      : (tolower((unsigned char)*p->s) - 'a' + 10));
                c = code < 0x80 ? (char)code : '?';
                break;
            }
            default: break; /* \" \\ \/ */
            }
        }
        if (n + 2 > cap) {
            char *bigger = realloc(out, cap *= 2);
            if (bigger == NULL) {
                free(out);
                return NULL;
            }
            out = bigger;
        }
        out[n++] = c;
    }
    if (p->s >= p->end) {
        free(out);
        p->err = "a string is not closed";
        return NULL;
    }
    p->s++;
    out[n] = '\0';
    return out;
}

static bool append(jv *v, jv *item, char *key)
{
    if (v->n % 8 == 0) {
        jv **items = realloc(v->items, (v->n + 8) * sizeof(*items));
        char **keys = v->type == JV_OBJ ? realloc(v->keys, (v->n + 8) * sizeof(*keys)) : NULL;
        if (items != NULL)
            v->items = items;
        if (keys != NULL)
            v->keys = keys;
        if (items == NULL || (v->type == JV_OBJ && keys == NULL))
            return false;
    }
    v->items[v->n] = item;
    if (v->type == JV_OBJ)
        v->keys[v->n] = key;
    v->n++;
    return true;
}

static jv *parse_container(jp *p, int depth)
{
    bool obj = *p->s == '{';
    char close = obj ? '}' : ']';
    jv *v = new_value(obj ? JV_OBJ : JV_ARR);

    if (v == NULL)
        return NULL;
    p->s++;
    skip_ws(p);
    if (p->s < p->end && *p->s == close) {
        p->s++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        jv *item;
        skip_ws(p);
        if (obj) {
            if (p->s >= p->end || *p->s != '"') {
                p->err = "expected a key in quotes";
                break;
            }
            if ((key = parse_string(p)) == NULL)
                break;
            skip_ws(p);
            if (p->s >= p->end || *p->s != ':') {
                free(key);
                p->err = "expected ':' after a key";
                break;
            }
            p->s++;
        }
        item = parse_value(p, depth + 1);
        if (item == NULL || !append(v, item, key)) {
            free(key);
            jv_free(item);
            break;
        }
        skip_ws(p);
        if (p->s < p->end && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->end && *p->s == close) {
            p->s++;
            return v;
        }
        p->err = obj ? "expected ',' or '}'" : "expected ',' or ']'";
        break;
    }
    jv_free(v);
    return NULL;
}

static jv *parse_value(jp *p, int depth)
{
    jv *v;

    skip_ws(p);
    if (p->s >= p->end) {
        p->err = "the text ends early";
        return NULL;
    }
    if (depth > 64) {
        p->err = "nested too deeply";
        return NULL;
    }
    if (*p->s == '{' || *p->s == '[')
        return parse_container(p, depth);
    if (*p->s == '"') {
        char *s = parse_string(p);
        if (s == NULL || (v = new_value(JV_STR)) == NULL) {
            free(s);
            return NULL;
        }
        v->str = s;
        return v;
    }
    static const struct {
        const char *word;
        jv_type type;
        bool b;
    } words[] = {{"true", JV_BOOL, true}, {"false", JV_BOOL, false}, {"null", JV_NULL, false}};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        size_t len = strlen(words[i].word);
        if ((size_t)(p->end - p->s) >= len && memcmp(p->s, words[i].word, len) == 0) {
            p->s += len;
            if ((v = new_value(words[i].type)) != NULL)
                v->b = words[i].b;
            return v;
        }
    }
    {
        char buf[64], *end;
        size_t len = 0;
        while (p->s + len < p->end && len < sizeof(buf) - 1 && strchr("+-0123456789.eE", p->s[len]))
            len++;
        memcpy(buf, p->s, len);
        buf[len] = '\0';
        errno = 0;
        double d = strtod(buf, &end);
        if (len == 0 || end != buf + len) {
            p->err = "not a JSON value";
            return NULL;
        }
        p->s += len;
        if ((v = new_value(JV_NUM)) != NULL)
            v->num = d;
        return v;
    }
}

jv *jv_parse(const char *text, size_t len, char *err, size_t errlen)
{
    jp p = {text, text + len, NULL};
    jv *v = parse_value(&p, 0);

    if (v != NULL) {
        skip_ws(&p);
        if (p.s != p.end) {
            p.err = "text after the value";
            jv_free(v);
            v = NULL;
        }
    }
    if (v == NULL && err != NULL)
        snprintf(err, errlen, "%s at byte %zu", p.err != NULL ? p.err : "out of memory",
                 (size_t)(p.s - text));
    return v;
}

void jv_free(jv *v)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < v->n; i++) {
        jv_free(v->items[i]);
        if (v->keys != NULL)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

const jv *jv_get(const jv *obj, const char *key)
{
    if (obj == NULL || obj->type != JV_OBJ)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    return NULL;
}

double jv_num(const jv *v, double dflt)
{
    return v != NULL && v->type == JV_NUM ? v->num : dflt;
}

const char *jv_str(const jv *v, const char *dflt)
{
    return v != NULL && v->type == JV_STR ? v->str : dflt;
}

void jv_format(const jv *v, char *buf, size_t len)
{
    if (v == NULL)
        snprintf(buf, len, "(absent)");
    else if (v->type == JV_NUM)
        snprintf(buf, len, "%.9g", v->num);
    else if (v->type == JV_STR)
        snprintf(buf, len, "%s", v->str);
    else if (v->type == JV_BOOL)
        snprintf(buf, len, "%s", v->b ? "true" : "false");
    else if (v->type == JV_NULL)
        snprintf(buf, len, "null");
    else
        snprintf(buf, len, "(%s of %zu)", v->type == JV_OBJ ? "object" : "array", v->n);
}
