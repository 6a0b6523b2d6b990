/*
 * kv.c - key/value sets and their encoding as kv-lists.
 *
 * A set is a px_htab whose items are px_kv (key and value in one
 * allocation, the table pointing at the item's own key). Sets hold copies
 * of what they are given and hand out copies (px_store_value_dup), so no
 * caller ever shares memory with the store.
 *
 * A kv-list is the wire form of a set: u32 count, then count x (str key,
 * value), values in the codec's encoding. px_kvlist_find reads a kv-list in
 * place (inside a collected blob): it compares keys where they lie, skips
 * the values of other keys with px_skip_value and decodes only the match.
 */
#include "common/px_common.h"
#include "store/px_store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool px_store_valid_key(const char *key)
{
    return key != NULL && key[0] != '\0' && strnlen(key, PMIX_MAX_KEYLEN + 1) <= PMIX_MAX_KEYLEN;
}

bool px_store_valid_nspace(const char *nspace)
{
    return nspace != NULL && nspace[0] != '\0' &&
           strnlen(nspace, PMIX_MAX_NSLEN + 1) <= PMIX_MAX_NSLEN;
}

/* An item with `key` and an empty value (NULL on allocation failure). */
static px_kv *kv_alloc(const char *key)
{
    size_t len = strlen(key);
    px_kv *kv = malloc(sizeof(*kv) + len + 1);
    if (kv == NULL) {
        return NULL;
    }
    PMIx_Value_construct(&kv->val);
    memcpy(kv->key, key, len + 1);
    return kv;
}

void px_kv_destroy(px_kv *kv)
{
    if (kv != NULL) {
        PMIx_Value_destruct(&kv->val);
        free(kv);
    }
}

void px_kvs_clear(px_kvs *s)
{
    px_kv *kv;
    for (size_t i = 0; (kv = px_htab_next(s, &i)) != NULL;) {
        px_kv_destroy(kv);
    }
    px_htab_fini(s);
}

const pmix_value_t *px_kvs_find(const px_kvs *s, const char *key)
{
    px_kv *kv = px_htab_get(s, key, 0);
    return kv != NULL ? &kv->val : NULL;
}

pmix_status_t px_kvs_add(px_kvs *s, px_kv *kv)
{
    void *old;
    if (!px_htab_put(s, kv->key, 0, kv, &old)) {
        return PMIX_ERR_NOMEM;
    }
    px_kv_destroy(old);
    return PMIX_SUCCESS;
}

pmix_status_t px_kvs_set(px_kvs *s, const char *key, const pmix_value_t *v)
{
    px_kv *kv = kv_alloc(key);
    if (kv == NULL) {
        return PMIX_ERR_NOMEM;
    }
    pmix_status_t rc = PMIx_Value_xfer(&kv->val, v);
    if (rc != PMIX_SUCCESS) {
        free(kv);
        return rc;
    }
    rc = px_kvs_add(s, kv);
    if (rc != PMIX_SUCCESS) {
        px_kv_destroy(kv);
    }
    return rc;
}

/* ---- qualified values ---- */

/* The qualifiers that select among a key's values, in the order in which
 * they appear in a qualified key. The Standard's later spellings
 * (PMIX_FABRIC_*) are read as these. */
#define NQUAL_KEYS 3
static const char *const qual_keys[NQUAL_KEYS] = {PMIX_NETWORK_PLANE, PMIX_NETWORK_NIC,
                                                  PMIX_NETWORK_VIEW};

/* Append the `n` bytes at `s` to the string `out` (`outlen` bytes, `*at`
 * of them used), NUL-terminated. False when they do not fit. (A node
 * registers tens of qualified keys per process; snprintf took a tenth of
 * pmixsim's node setup.) */
static bool append(char *out, size_t outlen, size_t *at, const char *s, size_t n)
{
    if (*at >= outlen || n >= outlen - *at) {
        return false;
    }
    memcpy(out + *at, s, n);
    *at += n;
    out[*at] = '\0';
    return true;
}

/* Append the value of a qualifier: a string as is, a number in decimal.
 * False when the type is neither or it does not fit. */
static bool append_qual(char *out, size_t outlen, size_t *at, const pmix_value_t *v)
{
    char digits[24];
    size_t n = sizeof(digits);
    uint64_t u;

    if (v->type == PMIX_STRING) {
        return v->data.string != NULL &&
               append(out, outlen, at, v->data.string, strlen(v->data.string));
    }
    if (px_value_get_number(v, &u) != PMIX_SUCCESS) {
        return false;
    }
    do {
        digits[--n] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    return append(out, outlen, at, digits + n, sizeof(digits) - n);
}

static const pmix_info_t *qual_find(const pmix_info_t *qual, size_t nqual, const char *name)
{
    const char *alias = px_key_alias(name);

    for (size_t i = 0; i < nqual; i++) {
        if (strcmp(qual[i].key, name) == 0 || (alias != NULL && strcmp(qual[i].key, alias) == 0)) {
            return &qual[i];
        }
    }
    return NULL;
}

int px_store_qualified_key(const char *key, const pmix_info_t *qual, size_t nqual, char *out,
                           size_t outlen)
{
    size_t at = 0;
    int used = 0;

    if (key == NULL || (qual == NULL && nqual != 0) ||
        !append(out, outlen, &at, key, strlen(key))) {
        return -1;
    }
    for (size_t k = 0; k < NQUAL_KEYS; k++) {
        const pmix_info_t *q = qual_find(qual, nqual, qual_keys[k]);
        if (q == NULL) {
            continue;
        }
        if (!append(out, outlen, &at, used ? "&" : "?", 1) ||
            !append(out, outlen, &at, qual_keys[k], strlen(qual_keys[k])) ||
            !append(out, outlen, &at, "=", 1) || !append_qual(out, outlen, &at, &q->value)) {
            return -1;
        }
        used++;
    }
    if (at > PMIX_MAX_KEYLEN) {
        return -1;
    }
    return used;
}

pmix_status_t px_store_qualified_entry(const pmix_value_t *v, char key[PMIX_MAX_KEYLEN + 1],
                                       const pmix_value_t **val)
{
    const pmix_data_array_t *da = v->type == PMIX_DATA_ARRAY ? v->data.darray : NULL;
    const pmix_info_t *a;

    if (da == NULL || da->type != PMIX_INFO || da->size < 2 || da->array == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    a = da->array;
    if (!px_store_valid_key(a[0].key) ||
        px_store_qualified_key(a[0].key, a + 1, da->size - 1, key, PMIX_MAX_KEYLEN + 1) !=
            (int)(da->size - 1)) {
        return PMIX_ERR_BAD_PARAM; /* a qualifier we do not know, or a bad value */
    }
    *val = &a[0].value;
    return PMIX_SUCCESS;
}

/* A PMIX_QUALIFIED_VALUE entry is kept under its qualified key. */
static pmix_status_t set_qualified(px_kvs *s, const pmix_value_t *v)
{
    char key[PMIX_MAX_KEYLEN + 1];
    const pmix_value_t *val;
    pmix_status_t rc = px_store_qualified_entry(v, key, &val);

    return rc == PMIX_SUCCESS ? px_kvs_set(s, key, val) : rc;
}

pmix_status_t px_kvs_set_infos(px_kvs *s, const pmix_info_t *info, size_t n, const char *skip)
{
    for (size_t i = 0; i < n; i++) {
        if (!px_store_valid_key(info[i].key)) {
            return PMIX_ERR_BAD_PARAM;
        }
        if (skip != NULL && strcmp(info[i].key, skip) == 0) {
            continue;
        }
        if (strcmp(info[i].key, PMIX_QUALIFIED_VALUE) == 0) {
            pmix_status_t rc = set_qualified(s, &info[i].value);
            if (rc != PMIX_SUCCESS) {
                return rc;
            }
            continue;
        }
        pmix_status_t rc = px_kvs_set(s, info[i].key, &info[i].value);
        if (rc != PMIX_SUCCESS) {
            return rc;
        }
    }
    return PMIX_SUCCESS;
}

void px_kvs_remove(px_kvs *s, const char *key)
{
    px_kv_destroy(px_htab_remove(s, key, 0));
}

void px_kvs_pack(const px_kvs *s, px_buf *b)
{
    px_kv *kv;
    px_pack_u32(b, (uint32_t)s->n);
    for (size_t i = 0; (kv = px_htab_next(s, &i)) != NULL;) {
        px_pack_str(b, kv->key);
        px_pack_value(b, &kv->val);
    }
}

pmix_status_t px_kvs_unpack(px_kvs *s, px_buf *b)
{
    char key[PMIX_MAX_KEYLEN + 1];
    uint32_t count;
    pmix_status_t rc = px_unpack_u32(b, &count);
    for (uint32_t i = 0; rc == PMIX_SUCCESS && i < count; i++) {
        rc = px_unpack_strbuf(b, key, sizeof(key));
        if (rc == PMIX_SUCCESS && key[0] == '\0') {
            rc = PMIX_ERR_UNPACK_FAILURE;
        }
        if (rc != PMIX_SUCCESS) {
            break;
        }
        px_kv *kv = kv_alloc(key);
        if (kv == NULL) {
            rc = PMIX_ERR_NOMEM;
            break;
        }
        rc = px_unpack_value(b, &kv->val);
        if (rc == PMIX_SUCCESS) {
            rc = px_kvs_add(s, kv);
        }
        if (rc != PMIX_SUCCESS) {
            px_kv_destroy(kv);
        }
    }
    if (rc != PMIX_SUCCESS) {
        px_kvs_clear(s);
    }
    return rc;
}

pmix_status_t px_kvlist_check(px_buf *b, uint32_t *count)
{
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_status_t rc = px_unpack_u32(b, count);
    for (uint32_t i = 0; rc == PMIX_SUCCESS && i < *count; i++) {
        rc = px_unpack_strbuf(b, key, sizeof(key));
        if (rc == PMIX_SUCCESS && key[0] == '\0') {
            rc = PMIX_ERR_UNPACK_FAILURE;
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_skip_value(b);
        }
    }
    return rc;
}

pmix_status_t px_kvlist_find(const uint8_t *data, size_t len, const char *key, pmix_value_t **out)
{
    px_buf b;
    uint32_t count;
    size_t klen = strlen(key);
    px_buf_view(&b, data, len);
    pmix_status_t rc = px_unpack_u32(&b, &count);
    for (uint32_t i = 0; rc == PMIX_SUCCESS && i < count; i++) {
        uint32_t n;
        const void *p;
        rc = px_unpack_u32(&b, &n);
        if (rc == PMIX_SUCCESS && n == UINT32_MAX) {
            rc = PMIX_ERR_UNPACK_FAILURE; /* a NULL key */
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_raw_view(&b, &p, n);
        }
        if (rc != PMIX_SUCCESS) {
            break;
        }
        if (n != klen || memcmp(p, key, klen) != 0) {
            rc = px_skip_value(&b);
            continue;
        }
        pmix_value_t *v = PMIx_Value_create(1);
        if (v == NULL) {
            return PMIX_ERR_NOMEM;
        }
        rc = px_unpack_value(&b, v);
        if (rc != PMIX_SUCCESS) {
            PMIx_Value_free(v, 1);
            return rc;
        }
        *out = v;
        return PMIX_SUCCESS;
    }
    return rc == PMIX_SUCCESS ? PMIX_ERR_NOT_FOUND : rc;
}

pmix_status_t px_store_value_dup(const pmix_value_t *v, pmix_value_t **out)
{
    return px_value_copy(out, v);
}
