/*
 * netmap.c - network shapes and coordinates from a description
 * (px_netmap.h): SimGrid's generated topologies (the parameters pmixsim
 * writes), Slurm's topology.conf and SimGrid platform files, fitted to a
 * job's nodes, and the hier groups they make.
 *
 * SimGrid's topologies (docs/simulation.md gives the table): coordinates
 * depend only on the topology, its parameters and the node's index:
 *
 *   crossbar   logical (node)                 physical the same
 *   fattree    logical (leaf switch, port)    physical the same (the
 *              for two levels; one digit per  cabling is the addressing)
 *              level, top first, in general
 *   torus      logical (x, y, z), x fastest   physical the same
 *   dragonfly  logical (group, router, port)  physical (group, chassis,
 *              router = chassis x routers +   blade, port)
 *              blade
 *
 * A Slurm tree is stored as a table of logical coordinates, one per node
 * (a tree need not be regular); its physical view is the logical one.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "px_netmap.h"

typedef enum net_kind {
    NET_NONE,
    NET_CROSSBAR,
    NET_FATTREE,
    NET_TORUS,
    NET_DRAGONFLY
} net_kind;

/* pmixsim's names and SimGrid's. */
static net_kind kind_of(const char *k)
{
    if (k == NULL || strcmp(k, "crossbar") == 0 || strcmp(k, "FLAT") == 0)
        return NET_CROSSBAR;
    if (strcmp(k, "fattree") == 0 || strcmp(k, "FAT_TREE") == 0)
        return NET_FATTREE;
    if (strcmp(k, "torus") == 0 || strcmp(k, "TORUS") == 0)
        return NET_TORUS;
    if (strcmp(k, "dragonfly") == 0 || strcmp(k, "DRAGONFLY") == 0)
        return NET_DRAGONFLY;
    return NET_NONE;
}

static const char *kind_name(net_kind t)
{
    static const char *const names[] = {"?", "crossbar", "fattree", "torus", "dragonfly"};
    return names[t];
}

/* ---- shapes ---- */

/* Parse "a,b,c" into v[]: returns the count, or -1. */
static int parse_list(const char *s, uint32_t *v, int max)
{
    int n = 0;
    char *end;

    for (;;) {
        unsigned long x = strtoul(s, &end, 10);
        if (end == s || x == 0 || x > UINT32_MAX || n == max)
            return -1;
        v[n++] = (uint32_t)x;
        if (*end != ',')
            return *end == '\0' || *end == ';' ? n : -1;
        s = end + 1;
    }
}

static uint64_t product(const uint32_t *v, unsigned n)
{
    uint64_t p = 1;

    for (unsigned i = 0; i < n; i++)
        p *= v[i];
    return p;
}

int px_netshape_simgrid(const char *kind, const char *params, uint32_t nnodes, px_netshape *s,
                        char *err, size_t errlen)
{
    uint32_t v[8];
    int n;

    net_kind t = kind_of(kind);

    memset(s, 0, sizeof(*s));
    s->strides[s->nstrides++] = 1;
    /* A fat tree's leaf switches and a dragonfly's groups keep their
     * traffic off the links between groups, and are where hier wins
     * (docs/collectives.md, "Where hierarchy wins"): auto may pick it
     * there. A torus line is a ring inside the mesh, where it loses. */
    s->switched = t == NET_FATTREE || t == NET_DRAGONFLY;
    switch (t) {
    case NET_CROSSBAR:
        s->ldims = s->pdims = 1;
        s->lsize[0] = s->psize[0] = nnodes;
        s->gdims = 0;
        return 0;
    case NET_FATTREE: {
        /* "levels;down,...;up,...;count,...": node i sits under leaf
         * switch i / down[0]; one digit per level, port fastest. */
        const char *semi = strchr(params, ';');
        uint32_t levels;
        if (semi == NULL || parse_list(params, &levels, 1) != 1 || levels > PX_NET_MAX_DIMS ||
            (n = parse_list(semi + 1, v, 8)) != (int)levels) {
            snprintf(err, errlen,
                     "fat tree parameters '%s': expected LEVELS;DOWN,...;UP,...;"
                     "COUNT,... with at most %d levels",
                     params, PX_NET_MAX_DIMS);
            return -1;
        }
        s->ldims = s->pdims = levels;
        for (unsigned k = 0; k < levels; k++)
            s->lsize[k] = s->psize[k] = v[levels - 1 - k];
        s->gdims = levels - 1;
        break;
    }
    case NET_TORUS:
        n = parse_list(params, v, PX_NET_MAX_DIMS);
        if (n < 1) {
            snprintf(err, errlen, "torus parameters '%s': expected up to %d sizes X,Y,Z", params,
                     PX_NET_MAX_DIMS);
            return -1;
        }
        s->ldims = s->pdims = (unsigned)n;
        s->torus = true;
        s->nstrides = 0;
        for (int k = 0; k < n; k++) {
            s->lsize[k] = s->psize[k] = v[k];
            s->strides[s->nstrides++] = (size_t)product(v, (unsigned)k);
        }
        s->gdims = (unsigned)n - 1; /* a line along x: the nodes sharing (y, z) */
        break;
    case NET_DRAGONFLY: {
        /* "groups,links;chassis,links;routers,links;nodes" */
        uint32_t g[2], c[2], r[2], nd;
        const char *p1 = strchr(params, ';'), *p2 = p1 ? strchr(p1 + 1, ';') : NULL;
        const char *p3 = p2 ? strchr(p2 + 1, ';') : NULL;
        if (p3 == NULL || parse_list(params, g, 2) != 2 || parse_list(p1 + 1, c, 2) != 2 ||
            parse_list(p2 + 1, r, 2) != 2 || parse_list(p3 + 1, &nd, 1) != 1) {
            snprintf(err, errlen, "dragonfly parameters '%s': expected G,L;C,L;R,L;N", params);
            return -1;
        }
        s->ldims = 3;
        s->lsize[0] = g[0];
        s->lsize[1] = c[0] * r[0];
        s->lsize[2] = nd;
        s->pdims = 4;
        s->psize[0] = g[0];
        s->psize[1] = c[0];
        s->psize[2] = r[0];
        s->psize[3] = nd;
        s->gdims = 1;
        break;
    }
    default: snprintf(err, errlen, "no coordinates for topology '%s'", kind); return -1;
    }
    if (product(s->lsize, s->ldims) < nnodes) {
        snprintf(err, errlen, "the %s parameters '%s' hold %llu nodes, fewer than %u", kind_name(t),
                 params, (unsigned long long)product(s->lsize, s->ldims), nnodes);
        return -1;
    }
    return 0;
}

/* Mixed-radix digits of `node`, the last dimension fastest. */
static void digits_last_fastest(uint32_t node, const uint32_t *size, unsigned dims, uint32_t *out)
{
    for (unsigned k = dims; k-- > 0;) {
        out[k] = node % size[k];
        node /= size[k];
    }
}

unsigned px_netshape_coord(const px_netshape *s, uint32_t node, pmix_coord_view_t view,
                           uint32_t out[PX_NET_MAX_DIMS])
{
    bool phys = view == PMIX_COORD_PHYSICAL_VIEW;

    if (s->torus) {
        for (unsigned k = 0; k < s->ldims; k++) {
            out[k] = node % s->lsize[k];
            node /= s->lsize[k];
        }
        return s->ldims;
    }
    if (phys) {
        digits_last_fastest(node, s->psize, s->pdims, out);
        return s->pdims;
    }
    digits_last_fastest(node, s->lsize, s->ldims, out);
    return s->ldims;
}

/* ---- reading ---- */

typedef struct strv {
    char **v;
    size_t n, cap;
} strv;

static int strv_add(strv *a, const char *s, size_t len)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 16;
        char **v = realloc(a->v, cap * sizeof(*v));
        if (v == NULL)
            return -1;
        a->v = v;
        a->cap = cap;
    }
    if ((a->v[a->n] = strndup(s, len)) == NULL)
        return -1;
    a->n++;
    return 0;
}

static void strv_free(strv *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    *a = (strv){0};
}

/* Expand one host list item with brackets: "n[1-3,7]x[0-1]". Returns 0,
 * -1 on a malformed list (or no memory). */
static int expand_item(const char *s, size_t len, strv *out, int depth)
{
    const char *lb = memchr(s, '[', len), *rb;

    if (lb == NULL)
        return len > 0 ? strv_add(out, s, len) : -1;
    rb = memchr(lb, ']', len - (size_t)(lb - s));
    if (rb == NULL || depth > 4)
        return -1;
    for (const char *r = lb + 1; r < rb;) {
        const char *comma = memchr(r, ',', (size_t)(rb - r)), *end = comma ? comma : rb;
        char *e1, *e2;
        unsigned long a = strtoul(r, &e1, 10), b = a;
        int width = (int)(e1 - r);
        if (e1 == r || e1 > end)
            return -1;
        if (*e1 == '-') {
            b = strtoul(e1 + 1, &e2, 10);
            if (e2 == e1 + 1 || e2 != end || b < a || b - a > 1000000)
                return -1;
        } else if (e1 != end) {
            return -1;
        }
        for (unsigned long x = a; x <= b; x++) {
            char buf[512];
            int n = snprintf(buf, sizeof(buf), "%.*s%0*lu%.*s", (int)(lb - s), s, width, x,
                             (int)(len - (size_t)(rb + 1 - s)), rb + 1);
            if (n < 0 || (size_t)n >= sizeof(buf) || expand_item(buf, (size_t)n, out, depth + 1))
                return -1;
        }
        r = end + (end < rb);
    }
    return 0;
}

/* Slurm's host list: items separated by commas outside brackets. */
static int expand_list(const char *s, strv *out)
{
    while (*s != '\0') {
        size_t len = 0;
        int in = 0;
        while (s[len] != '\0' && (in || s[len] != ',')) {
            in += s[len] == '[' ? 1 : s[len] == ']' ? -1 : 0;
            len++;
        }
        if (expand_item(s, len, out, 0) != 0)
            return -1;
        s += len + (s[len] == ',');
    }
    return 0;
}

typedef struct sw {
    char *name;
    strv kids; /* switches or nodes */
    bool leaf, child;
} sw;

typedef struct tree {
    sw *s;
    size_t n;
    strv nodes;       /* in the order the walk meets them */
    uint32_t *digits; /* nodes x PX_NET_MAX_DIMS */
    size_t cap;       /* of digits, in nodes */
    int leaf_depth;   /* -1 until the first leaf switch */
    unsigned dims;    /* digits per node */
    char *err;
    size_t errlen;
    const char *file;
} tree;

static sw *find_sw(tree *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->s[i].name, name) == 0)
            return &t->s[i];
    return NULL;
}

/* Walk switch `s` at `depth` with the digits so far (path[0..np-1]). */
static int walk(tree *t, sw *s, int depth, uint32_t *path, unsigned np)
{
    if (depth > 8) {
        snprintf(t->err, t->errlen, "%s: switch %s: the switches form a cycle", t->file, s->name);
        return -1;
    }
    if (s->leaf) {
        if (t->leaf_depth < 0)
            t->leaf_depth = depth;
        if (t->leaf_depth != depth) {
            snprintf(t->err, t->errlen,
                     "%s: leaf switch %s is %d levels under the top, another %d: "
                     "every leaf switch must be at the same depth",
                     t->file, s->name, depth, t->leaf_depth);
            return -1;
        }
        if (np + 1 > PX_NET_MAX_DIMS) {
            snprintf(t->err, t->errlen, "%s: more than %d levels of coordinates", t->file,
                     PX_NET_MAX_DIMS);
            return -1;
        }
        t->dims = np + 1;
        for (size_t k = 0; k < s->kids.n; k++) {
            for (size_t i = 0; i < t->nodes.n; i++)
                if (strcmp(t->nodes.v[i], s->kids.v[k]) == 0) {
                    snprintf(t->err, t->errlen, "%s: node %s is under two switches", t->file,
                             s->kids.v[k]);
                    return -1;
                }
            if (t->nodes.n == t->cap) {
                size_t cap = t->cap ? 2 * t->cap : 64;
                uint32_t *d = realloc(t->digits, cap * PX_NET_MAX_DIMS * sizeof(*d));
                if (d == NULL)
                    goto nomem;
                t->digits = d;
                t->cap = cap;
            }
            uint32_t *d = t->digits + t->nodes.n * PX_NET_MAX_DIMS;
            memcpy(d, path, np * sizeof(*d));
            d[np] = (uint32_t)k;
            if (strv_add(&t->nodes, s->kids.v[k], strlen(s->kids.v[k])) != 0)
                goto nomem;
        }
        return 0;
    }
    if (np + 1 > PX_NET_MAX_DIMS) {
        snprintf(t->err, t->errlen, "%s: more than %d levels of coordinates", t->file,
                 PX_NET_MAX_DIMS);
        return -1;
    }
    for (size_t k = 0; k < s->kids.n; k++) {
        sw *c = find_sw(t, s->kids.v[k]);
        if (c == NULL) {
            snprintf(t->err, t->errlen, "%s: switch %s names switch %s, which is not described",
                     t->file, s->name, s->kids.v[k]);
            return -1;
        }
        path[np] = (uint32_t)k;
        if (walk(t, c, depth + 1, path, np + 1) != 0)
            return -1;
    }
    return 0;
nomem:
    snprintf(t->err, t->errlen, "out of memory");
    return -1;
}

/* One line's value of `key` (case-insensitive, Slurm's rule), or NULL. */
static char *line_value(const char *line, const char *key)
{
    size_t kl = strlen(key);

    for (const char *p = line; *p != '\0';) {
        while (isspace((unsigned char)*p))
            p++;
        const char *w = p;
        while (*p != '\0' && !isspace((unsigned char)*p))
            p++;
        if ((size_t)(p - w) > kl && strncasecmp(w, key, kl) == 0 && w[kl] == '=')
            return strndup(w + kl + 1, (size_t)(p - w) - kl - 1);
    }
    return NULL;
}

static void map_clear(px_netmap *m)
{
    free(m->lcoord);
    free(m->pcoord);
    if (m->names != NULL)
        for (uint32_t i = 0; i < m->nnodes; i++)
            free(m->names[i]);
    free(m->names);
    for (unsigned p = 1; p < PX_NET_MAX_PLANES; p++) {
        if (m->plane_hosts[p] != NULL)
            for (uint32_t i = 0; i < m->nnodes; i++)
                free(m->plane_hosts[p][i]);
        free(m->plane_hosts[p]);
    }
    free(m->at);
    memset(m, 0, sizeof(*m));
}

void px_netmap_free(px_netmap *m)
{
    if (m != NULL)
        map_clear(m);
}

/* A `PlaneName=NAME Nics=DEV[,DEV...]` line (px_netmap.h): note the
 * plane. Returns 0, or -1 with a sentence in err. */
static int plane_line(px_netmap *m, const char *line, const char *pname, const char *file,
                      int lineno, char *err, size_t errlen)
{
    char *nics = line_value(line, "Nics");
    int rc = -1;

    if (nics == NULL || *nics == '\0' || *pname == '\0')
        snprintf(err, errlen, "%s:%d: expected PlaneName=NAME Nics=DEV[,DEV...]", file, lineno);
    else if (strlen(pname) >= sizeof(m->plane[0]) || strlen(nics) >= sizeof(m->plane_nics[0]))
        snprintf(err, errlen, "%s:%d: a plane name of at most %zu characters, NICs of at most %zu",
                 file, lineno, sizeof(m->plane[0]) - 1, sizeof(m->plane_nics[0]) - 1);
    else if (m->nplanes == PX_NET_MAX_PLANES)
        snprintf(err, errlen, "%s:%d: more than %d planes", file, lineno, PX_NET_MAX_PLANES);
    else {
        rc = 0;
        for (unsigned p = 0; p < m->nplanes; p++)
            if (strcmp(m->plane[p], pname) == 0) {
                snprintf(err, errlen, "%s:%d: plane %s named twice", file, lineno, pname);
                rc = -1;
            }
        if (rc == 0) {
            snprintf(m->plane[m->nplanes], sizeof(m->plane[0]), "%s", pname);
            snprintf(m->plane_nics[m->nplanes], sizeof(m->plane_nics[0]), "%s", nics);
            m->nplanes++;
        }
    }
    free(nics);
    return rc;
}

int px_netmap_parse_slurm(const char *text, const char *name, px_netmap *m, char *err,
                          size_t errlen)
{
    tree t = {.leaf_depth = -1, .err = err, .errlen = errlen, .file = name};
    int rc = -1, lineno = 0;
    size_t nroots = 0;

    memset(m, 0, sizeof(*m));
    for (const char *p = text; *p != '\0';) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *line = strndup(p, len), *hash, *sname = NULL, *nodes = NULL, *sws = NULL;
        lineno++;
        p += len + (eol != NULL);
        if (line == NULL)
            goto nomem;
        if ((hash = strchr(line, '#')) != NULL)
            *hash = '\0';
        char *pname = line_value(line, "PlaneName");
        if (pname != NULL) {
            int bad = plane_line(m, line, pname, name, lineno, err, errlen);
            free(pname);
            free(line);
            if (bad)
                goto out;
            continue;
        }
        sname = line_value(line, "SwitchName");
        nodes = line_value(line, "Nodes");
        sws = line_value(line, "Switches");
        bool blank = true;
        for (char *c = line; *c; c++)
            blank = blank && isspace((unsigned char)*c);
        free(line);
        if (blank) {
            free(sname);
            free(nodes);
            free(sws);
            continue;
        }
        /* `scontrol show topology` writes both, "(null)" for none, and
         * an upper switch's Nodes= lists every node below it. */
        if (nodes != NULL && strcmp(nodes, "(null)") == 0) {
            free(nodes);
            nodes = NULL;
        }
        if (sws != NULL && strcmp(sws, "(null)") == 0) {
            free(sws);
            sws = NULL;
        }
        if (sws != NULL) {
            free(nodes);
            nodes = NULL;
        }
        if (sname == NULL || (nodes == NULL && sws == NULL) || find_sw(&t, sname) != NULL) {
            snprintf(err, errlen,
                     sname == NULL ? "%s:%d: expected SwitchName=NAME with Nodes=LIST or "
                                     "Switches=LIST"
                     : find_sw(&t, sname) != NULL ? "%s:%d: switch described twice"
                                                  : "%s:%d: a switch needs Nodes= or Switches=",
                     name, lineno);
            free(sname);
            free(nodes);
            free(sws);
            goto out;
        }
        sw *grown = realloc(t.s, (t.n + 1) * sizeof(*grown));
        if (grown == NULL) {
            free(sname);
            free(nodes);
            free(sws);
            goto nomem;
        }
        t.s = grown;
        t.s[t.n] = (sw){.name = sname, .leaf = nodes != NULL};
        int bad = expand_list(nodes != NULL ? nodes : sws, &t.s[t.n].kids);
        t.n++;
        free(nodes);
        free(sws);
        if (bad || t.s[t.n - 1].kids.n == 0) {
            snprintf(err, errlen, "%s:%d: a host list that does not parse", name, lineno);
            goto out;
        }
    }
    if (t.n == 0) {
        snprintf(err, errlen, "%s: no SwitchName= line", name);
        goto out;
    }
    for (size_t i = 0; i < t.n; i++)
        for (size_t k = 0; !t.s[i].leaf && k < t.s[i].kids.n; k++) {
            sw *c = find_sw(&t, t.s[i].kids.v[k]);
            if (c != NULL)
                c->child = true;
        }
    for (size_t i = 0; i < t.n; i++)
        nroots += !t.s[i].child;
    if (nroots == 0) {
        snprintf(err, errlen, "%s: no top switch (the switches form a cycle)", name);
        goto out;
    }
    {
        uint32_t path[PX_NET_MAX_DIMS + 1];
        uint32_t r = 0;
        for (size_t i = 0; i < t.n; i++) {
            if (t.s[i].child)
                continue;
            path[0] = r++;
            /* One top switch adds no digit; several add their index. */
            if (walk(&t, &t.s[i], 0, path, nroots > 1 ? 1 : 0) != 0)
                goto out;
        }
    }
    m->nnodes = (uint32_t)t.nodes.n;
    m->shape.ldims = m->shape.pdims = t.dims;
    m->shape.gdims = t.dims - 1;
    m->shape.switched = true;
    m->shape.strides[0] = 1;
    m->shape.nstrides = 1;
    if ((m->lcoord = calloc((size_t)m->nnodes * t.dims, sizeof(uint32_t))) == NULL)
        goto nomem;
    for (uint32_t i = 0; i < m->nnodes; i++)
        for (unsigned k = 0; k < t.dims; k++) {
            uint32_t d = t.digits[(size_t)i * PX_NET_MAX_DIMS + k];
            m->lcoord[(size_t)i * t.dims + k] = d;
            if (d + 1 > m->shape.lsize[k])
                m->shape.lsize[k] = m->shape.psize[k] = d + 1;
        }
    m->names = t.nodes.v;
    t.nodes = (strv){0};
    {
        size_t leaves = 0;
        for (size_t i = 0; i < t.n; i++)
            leaves += t.s[i].leaf;
        snprintf(m->source, sizeof(m->source), "%s (Slurm topology.conf: %u nodes, %zu switches)",
                 name, m->nnodes, leaves);
    }
    rc = 0;
    goto out;
nomem:
    snprintf(err, errlen, "out of memory");
out:
    for (size_t i = 0; i < t.n; i++) {
        free(t.s[i].name);
        strv_free(&t.s[i].kids);
    }
    free(t.s);
    free(t.digits);
    strv_free(&t.nodes);
    if (rc != 0)
        map_clear(m);
    return rc;
}

/* The value of attribute `key` in the tag [tag, end), or NULL. */
static char *tag_attr(const char *tag, const char *end, const char *key)
{
    size_t kl = strlen(key);

    for (const char *p = tag; p + kl + 2 < end; p++) {
        if ((p == tag || isspace((unsigned char)p[-1])) && strncmp(p, key, kl) == 0) {
            const char *q = p + kl;
            while (q < end && isspace((unsigned char)*q))
                q++;
            if (q >= end || *q != '=')
                continue;
            q++;
            while (q < end && isspace((unsigned char)*q))
                q++;
            if (q >= end || (*q != '"' && *q != '\''))
                continue;
            const char *close = memchr(q + 1, *q, (size_t)(end - q - 1));
            if (close == NULL)
                return NULL;
            return strndup(q + 1, (size_t)(close - q - 1));
        }
    }
    return NULL;
}

/* The value of the <prop id="ID" value="..."/> among the children of the
 * element whose start tag is tag..end (none if it closes itself); NULL
 * if it has none. */
static char *child_prop(const char *tag, const char *end, const char *id)
{
    const char *close;

    if (end > tag && end[-1] == '/')
        return NULL;
    if ((close = strstr(end, "</cluster")) == NULL)
        return NULL;
    for (const char *p = end; (p = strstr(p, "<prop")) != NULL && p < close; p++) {
        const char *pend = strchr(p, '>');
        char *pid;
        if (pend == NULL || pend > close)
            return NULL;
        if ((pid = tag_attr(p, pend, "id")) != NULL && strcmp(pid, id) == 0) {
            free(pid);
            return tag_attr(p, pend, "value");
        }
        free(pid);
    }
    return NULL;
}

/* One <cluster> start tag (tag..end): its topology, parameters and
 * hosts. */
typedef struct sg_cluster {
    char *topo, *params, *prefix, *suffix, *plane, *nics;
    strv ids; /* the radicals, each after a one-character prefix */
} sg_cluster;

static void sg_cluster_free(sg_cluster *c)
{
    free(c->topo);
    free(c->params);
    free(c->prefix);
    free(c->suffix);
    free(c->plane);
    free(c->nics);
    strv_free(&c->ids);
    memset(c, 0, sizeof(*c));
}

/* Read a cluster; 0, or -1 when it has no radical this can read. */
static int sg_cluster_read(const char *tag, const char *end, sg_cluster *c)
{
    char wrapped[600];
    char *radical = tag_attr(tag, end, "radical");
    int rc = -1;

    memset(c, 0, sizeof(*c));
    c->topo = tag_attr(tag, end, "topology");
    c->params = tag_attr(tag, end, "topo_parameters");
    c->prefix = tag_attr(tag, end, "prefix");
    c->suffix = tag_attr(tag, end, "suffix");
    c->plane = child_prop(tag, end, PX_NET_SG_PLANE_PROP);
    c->nics = child_prop(tag, end, PX_NET_SG_NICS_PROP);
    if (radical != NULL &&
        snprintf(wrapped, sizeof(wrapped), "x[%s]", radical) < (int)sizeof(wrapped) &&
        expand_list(wrapped, &c->ids) == 0 && c->ids.n > 0)
        rc = 0;
    free(radical);
    return rc;
}

/* Cluster c's host names, ids.n of them, into a new array; NULL: no memory. */
static char **sg_cluster_hosts(const sg_cluster *c)
{
    char **names = calloc(c->ids.n ? c->ids.n : 1, sizeof(char *));

    for (size_t i = 0; names != NULL && i < c->ids.n; i++)
        if (asprintf(&names[i], "%s%s%s", c->prefix ? c->prefix : "", c->ids.v[i] + 1,
                     c->suffix ? c->suffix : "") < 0) {
            names[i] = NULL;
            for (size_t k = 0; k < i; k++)
                free(names[k]);
            free(names);
            names = NULL;
        }
    return names;
}

static bool same_str(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* The planes of a platform (px_netmap.h): every cluster with the plane
 * property after `first` (plane 0), a copy of its network. 0, or -1 with
 * a sentence in err. */
static int sg_planes(const char *text, const char *first_end, const sg_cluster *first,
                     const char *name, px_netmap *m, char *err, size_t errlen)
{
    const char *tag, *end;
    int rc = 0;

    snprintf(m->plane[0], sizeof(m->plane[0]), "%s", first->plane);
    snprintf(m->plane_nics[0], sizeof(m->plane_nics[0]), "%s", first->nics ? first->nics : "");
    m->nplanes = 1;
    for (tag = strstr(first_end, "<cluster"); rc == 0 && tag != NULL;
         tag = strstr(end, "<cluster")) {
        sg_cluster c;
        if ((end = strchr(tag, '>')) == NULL)
            break;
        if (sg_cluster_read(tag, end, &c) != 0 || c.plane == NULL) {
            sg_cluster_free(&c); /* not a plane: another part of the machine */
            continue;
        }
        if (m->nplanes == PX_NET_MAX_PLANES) {
            snprintf(err, errlen, "%s: more than %d planes", name, PX_NET_MAX_PLANES);
            rc = -1;
        } else if (!same_str(c.topo, first->topo) || !same_str(c.params, first->params) ||
                   c.ids.n != first->ids.n) {
            snprintf(err, errlen,
                     "%s: plane %s is not a copy of plane %s (every plane's cluster has the "
                     "same topology, topo_parameters and number of hosts)",
                     name, c.plane, first->plane);
            rc = -1;
        } else if (*c.plane == '\0' || strlen(c.plane) >= sizeof(m->plane[0]) ||
                   (c.nics != NULL && strlen(c.nics) >= sizeof(m->plane_nics[0]))) {
            snprintf(err, errlen, "%s: a plane name of 1 to %zu characters, NICs of at most %zu",
                     name, sizeof(m->plane[0]) - 1, sizeof(m->plane_nics[0]) - 1);
            rc = -1;
        } else {
            for (unsigned p = 0; p < m->nplanes; p++)
                if (strcmp(m->plane[p], c.plane) == 0) {
                    snprintf(err, errlen, "%s: plane %s named twice", name, c.plane);
                    rc = -1;
                }
        }
        if (rc == 0) {
            unsigned p = m->nplanes;
            snprintf(m->plane[p], sizeof(m->plane[0]), "%s", c.plane);
            snprintf(m->plane_nics[p], sizeof(m->plane_nics[0]), "%s", c.nics ? c.nics : "");
            if ((m->plane_hosts[p] = sg_cluster_hosts(&c)) == NULL) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
            } else {
                m->nplanes++;
            }
        }
        sg_cluster_free(&c);
    }
    return rc;
}

int px_netmap_parse_simgrid(const char *text, const char *name, px_netmap *m, char *err,
                            size_t errlen)
{
    const char *tag = strstr(text, "<cluster"), *end = NULL;
    sg_cluster c = {0};
    int rc = -1;

    memset(m, 0, sizeof(*m));
    /* the first cluster that is a plane, else the first cluster */
    for (const char *t = tag; t != NULL; t = strstr(t + 1, "<cluster")) {
        const char *e = strchr(t, '>');
        char *plane = e != NULL ? child_prop(t, e, PX_NET_SG_PLANE_PROP) : NULL;
        bool is_plane = plane != NULL;
        free(plane);
        if (is_plane) {
            tag = t;
            break;
        }
    }
    if (tag == NULL || (end = strchr(tag, '>')) == NULL) {
        snprintf(err, errlen, "%s: no <cluster> element: the network is read from the first one",
                 name);
        return -1;
    }
    if (sg_cluster_read(tag, end, &c) != 0) {
        snprintf(err, errlen, "%s: the first <cluster> has no radical=\"A-B\" this can read", name);
        goto out;
    }
    if (kind_of(c.topo) == NET_NONE) {
        snprintf(err, errlen, "%s: cluster topology '%s' has no coordinates", name, c.topo);
        goto out;
    }
    if (px_netshape_simgrid(c.topo != NULL ? c.topo : "FLAT", c.params != NULL ? c.params : "",
                            (uint32_t)c.ids.n, &m->shape, err, errlen) != 0)
        goto out;
    if (kind_of(c.topo) == NET_CROSSBAR)
        m->shape.lsize[0] = m->shape.psize[0] = (uint32_t)c.ids.n;
    m->nnodes = (uint32_t)c.ids.n;
    if ((m->names = sg_cluster_hosts(&c)) == NULL)
        goto nomem;
    if (c.plane != NULL && sg_planes(text, end, &c, name, m, err, errlen) != 0)
        goto out;
    snprintf(m->sg_topology, sizeof(m->sg_topology), "%s", c.topo != NULL ? c.topo : "FLAT");
    snprintf(m->sg_params, sizeof(m->sg_params), "%s", c.params != NULL ? c.params : "");
    if (m->nplanes > 1)
        snprintf(m->source, sizeof(m->source),
                 "%s (SimGrid platform: %u planes, each a %s cluster of %u nodes)", name,
                 m->nplanes, kind_name(kind_of(c.topo)), m->nnodes);
    else
        snprintf(m->source, sizeof(m->source), "%s (SimGrid platform: %s cluster of %u nodes)",
                 name, kind_name(kind_of(c.topo)), m->nnodes);
    rc = 0;
    goto out;
nomem:
    snprintf(err, errlen, "out of memory");
out:
    sg_cluster_free(&c);
    if (rc != 0)
        map_clear(m);
    return rc;
}

int px_netmap_load(const char *path, px_netmap *m, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *text = NULL;
    size_t len = 0;
    int rc;

    memset(m, 0, sizeof(*m));
    if (f == NULL) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    FILE *mem = open_memstream(&text, &len);
    char buf[4096];
    size_t n;
    while (mem != NULL && (n = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, n, mem);
    bool bad = ferror(f);
    fclose(f);
    if (mem == NULL || fclose(mem) != 0 || bad) {
        free(text);
        snprintf(err, errlen, "cannot read %s", path);
        return -1;
    }
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    rc = *p == '<' ? px_netmap_parse_simgrid(text, path, m, err, errlen)
                   : px_netmap_parse_slurm(text, path, m, err, errlen);
    free(text);
    return rc;
}

int px_netmap_flat(px_netmap *m, uint32_t nnodes)
{
    memset(m, 0, sizeof(*m));
    if (px_netshape_simgrid("crossbar", "", nnodes, &m->shape, m->source, sizeof(m->source)) != 0)
        return -1;
    m->nnodes = m->njob = nnodes;
    m->flat = true;
    snprintf(m->source, sizeof(m->source),
             "flat default: one switch, every node a port (no topology was given)");
    return 0;
}

/* ---- fitting and reading back ---- */

/* Order description node indices by their names (qsort_r's context). */
static int by_name_cmp(const void *a, const void *b, void *names)
{
    char *const *nm = names;
    return strcmp(nm[*(const uint32_t *)a], nm[*(const uint32_t *)b]);
}

int px_netmap_fit(px_netmap *m, char *const *names, uint32_t n, char *err, size_t errlen)
{
    uint32_t *at = calloc(n ? n : 1, sizeof(*at));
    bool by_name = m->names != NULL && names != NULL;

    if (at == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint32_t *sorted = by_name ? calloc(m->nnodes ? m->nnodes : 1, sizeof(*sorted)) : NULL;

    /* by name through the description's names sorted once: a lookup each,
     * not a scan (a platform of 65,536 hosts) */
    if (by_name && sorted == NULL) {
        free(at);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (uint32_t k = 0; by_name && k < m->nnodes; k++)
        sorted[k] = k;
    if (by_name)
        qsort_r(sorted, m->nnodes, sizeof(*sorted), by_name_cmp, m->names);
    for (uint32_t i = 0; by_name && i < n; i++) {
        uint32_t lo = 0, hi = m->nnodes;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (strcmp(m->names[sorted[mid]], names[i]) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        by_name = lo < m->nnodes && strcmp(m->names[sorted[lo]], names[i]) == 0;
        at[i] = by_name ? sorted[lo] : 0;
    }
    free(sorted);
    if (!by_name) {
        if (m->nnodes < n) {
            snprintf(err, errlen, "%s describes %u nodes, fewer than the job's %u", m->source,
                     m->nnodes, n);
            free(at);
            return -1;
        }
        for (uint32_t i = 0; i < n; i++)
            at[i] = i;
    }
    free(m->at);
    m->at = at;
    m->njob = n;
    m->by_name = by_name;
    return 0;
}

unsigned px_netmap_coord(const px_netmap *m, uint32_t node, pmix_coord_view_t view,
                         uint32_t out[PX_NET_MAX_DIMS])
{
    uint32_t d = m->at != NULL ? m->at[node] : node;

    if (m->lcoord == NULL)
        return px_netshape_coord(&m->shape, d, view, out);
    if (view == PMIX_COORD_PHYSICAL_VIEW && m->pcoord != NULL) {
        memcpy(out, m->pcoord + (size_t)d * m->shape.pdims, m->shape.pdims * sizeof(*out));
        return m->shape.pdims;
    }
    memcpy(out, m->lcoord + (size_t)d * m->shape.ldims, m->shape.ldims * sizeof(*out));
    return m->shape.ldims;
}

unsigned px_netmap_group_key(const px_netmap *m, uint32_t node, uint32_t out[PX_NET_MAX_DIMS])
{
    uint32_t c[PX_NET_MAX_DIMS];
    unsigned d = px_netmap_coord(m, node, PMIX_COORD_LOGICAL_VIEW, c);

    if (m->shape.torus) {
        memcpy(out, c + 1, (d - 1) * sizeof(*c)); /* all but x */
        return d - 1;
    }
    memcpy(out, c, m->shape.gdims * sizeof(*c));
    return m->shape.gdims;
}

px_coll_groups *px_netmap_groups(const px_netmap *m, const uint32_t *members, uint32_t count)
{
    pmix_coord_t *c;
    uint32_t *keys;
    unsigned dims = 0;
    px_coll_groups *g = NULL;

    if (count == 0)
        return NULL;
    c = calloc(count, sizeof(*c));
    keys = calloc((size_t)count * PX_NET_MAX_DIMS, sizeof(*keys));
    if (c != NULL && keys != NULL) {
        for (uint32_t i = 0; i < count; i++) {
            uint32_t node = members != NULL ? members[i] : i;
            dims = px_netmap_group_key(m, node, keys + (size_t)i * PX_NET_MAX_DIMS);
            c[i].view = PMIX_COORD_LOGICAL_VIEW;
            c[i].coord = keys + (size_t)i * PX_NET_MAX_DIMS;
            c[i].dims = dims;
        }
        g = px_coll_groups_from_coords(count, c, dims);
        px_coll_groups_set_switched(g, m->shape.switched);
    }
    free(c);
    free(keys);
    return g;
}

int px_netmap_fattree_params(const px_netmap *m, char *buf, size_t len, char *err, size_t errlen)
{
    const px_netshape *s = &m->shape;
    uint64_t prod = 1;
    size_t at = 0;

    for (unsigned k = 0; k < s->ldims; k++)
        prod *= s->lsize[k];
    for (uint32_t i = 0; m->lcoord != NULL && prod == m->nnodes && i < m->nnodes; i++) {
        uint32_t d[PX_NET_MAX_DIMS];
        px_netshape_coord(s, i, PMIX_COORD_LOGICAL_VIEW, d);
        if (memcmp(d, m->lcoord + (size_t)i * s->ldims, s->ldims * sizeof(*d)) != 0)
            prod = 0;
    }
    if (m->lcoord == NULL || prod != m->nnodes) {
        snprintf(err, errlen,
                 "%s: not a regular tree (every switch of a level with as many below it): "
                 "SimGrid's FAT_TREE cannot build it",
                 m->source);
        return -1;
    }
    at += (size_t)snprintf(buf + at, len - at, "%u;", s->ldims);
    for (unsigned k = s->ldims; k-- > 0 && at < len;)
        at += (size_t)snprintf(buf + at, len - at, "%u%s", s->lsize[k], k ? "," : ";");
    for (unsigned k = 0; k < s->ldims && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "1%s", k + 1 < s->ldims ? "," : ";");
    for (unsigned k = 0; k < s->ldims && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "1%s", k + 1 < s->ldims ? "," : "");
    return at < len ? 0 : -1;
}
