/*
 * auth.c - who may join a job's daemons (px_hostcore.h, "px_auth"): a
 * secret per job and a challenge-response that both ends of a connection
 * answer with it. libsodium does the cryptography (HMAC-SHA-256, random
 * bytes, comparison in constant time).
 */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "px_hostcore.h"

static int ready(void)
{
    /* thread-safe and idempotent: 0 the first time, 1 later, -1 on failure */
    return sodium_init() < 0 ? -1 : 0;
}

int px_auth_keygen(uint8_t key[PX_AUTH_KEYLEN])
{
    if (ready() != 0)
        return -1;
    randombytes_buf(key, PX_AUTH_KEYLEN);
    return 0;
}

int px_auth_nonce(uint8_t nonce[PX_AUTH_NONCELEN])
{
    if (ready() != 0)
        return -1;
    randombytes_buf(nonce, PX_AUTH_NONCELEN);
    return 0;
}

void px_auth_key_hex(const uint8_t key[PX_AUTH_KEYLEN], char hex[2 * PX_AUTH_KEYLEN + 1])
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < PX_AUTH_KEYLEN; i++) {
        hex[2 * i] = digits[key[i] >> 4];
        hex[2 * i + 1] = digits[key[i] & 15];
    }
    hex[2 * PX_AUTH_KEYLEN] = '\0';
}

static int nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int px_auth_key_parse(const char *hex, uint8_t key[PX_AUTH_KEYLEN])
{
    uint8_t out[PX_AUTH_KEYLEN];

    if (hex == NULL || strlen(hex) != 2 * PX_AUTH_KEYLEN)
        return -1;
    for (size_t i = 0; i < PX_AUTH_KEYLEN; i++) {
        int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    memcpy(key, out, sizeof(out));
    sodium_memzero(out, sizeof(out));
    return 0;
}

/* The message a tag covers: who speaks (role), the connection's two ends,
 * both nonces and the job's name, so that a tag answers one challenge of
 * one connection of one job and nothing else. */
static void tag_of(const uint8_t key[PX_AUTH_KEYLEN], char role, const char *job,
                   uint32_t connector, uint32_t acceptor, const uint8_t nc[PX_AUTH_NONCELEN],
                   const uint8_t na[PX_AUTH_NONCELEN], uint8_t tag[PX_AUTH_TAGLEN])
{
    crypto_auth_hmacsha256_state st;
    uint8_t ids[9];

    ids[0] = (uint8_t)role;
    for (int i = 0; i < 4; i++) {
        ids[1 + i] = (uint8_t)(connector >> (8 * i));
        ids[5 + i] = (uint8_t)(acceptor >> (8 * i));
    }
    crypto_auth_hmacsha256_init(&st, key, PX_AUTH_KEYLEN);
    crypto_auth_hmacsha256_update(&st, ids, sizeof(ids));
    crypto_auth_hmacsha256_update(&st, nc, PX_AUTH_NONCELEN);
    crypto_auth_hmacsha256_update(&st, na, PX_AUTH_NONCELEN);
    crypto_auth_hmacsha256_update(&st, (const uint8_t *)job, strlen(job) + 1);
    crypto_auth_hmacsha256_final(&st, tag);
    sodium_memzero(&st, sizeof(st));
}

int px_auth_tag(const uint8_t key[PX_AUTH_KEYLEN], px_auth_role role, const char *job,
                uint32_t connector, uint32_t acceptor, const uint8_t nc[PX_AUTH_NONCELEN],
                const uint8_t na[PX_AUTH_NONCELEN], uint8_t tag[PX_AUTH_TAGLEN])
{
    if (ready() != 0 || job == NULL)
        return -1;
    tag_of(key, role == PX_AUTH_ACCEPTOR ? 'A' : 'C', job, connector, acceptor, nc, na, tag);
    return 0;
}

bool px_auth_check(const uint8_t key[PX_AUTH_KEYLEN], px_auth_role role, const char *job,
                   uint32_t connector, uint32_t acceptor, const uint8_t nc[PX_AUTH_NONCELEN],
                   const uint8_t na[PX_AUTH_NONCELEN], const uint8_t tag[PX_AUTH_TAGLEN])
{
    uint8_t want[PX_AUTH_TAGLEN];
    bool ok;

    if (px_auth_tag(key, role, job, connector, acceptor, nc, na, want) != 0)
        return false;
    ok = sodium_memcmp(want, tag, PX_AUTH_TAGLEN) == 0;
    sodium_memzero(want, sizeof(want));
    return ok;
}
