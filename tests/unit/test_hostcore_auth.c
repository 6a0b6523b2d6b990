/*
 * test_hostcore_auth.c - px_auth (host core): the challenge-response that
 * decides who may join a job's daemons.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "px_hostcore.h"

static void test_handshake(void **state)
{
    uint8_t key[PX_AUTH_KEYLEN], other[PX_AUTH_KEYLEN];
    uint8_t nc[PX_AUTH_NONCELEN], na[PX_AUTH_NONCELEN], nc2[PX_AUTH_NONCELEN];
    uint8_t ta[PX_AUTH_TAGLEN], tc[PX_AUTH_TAGLEN];

    assert_int_equal(px_auth_keygen(key), 0);
    assert_int_equal(px_auth_keygen(other), 0);
    assert_memory_not_equal(key, other, sizeof(key)); /* random */
    assert_int_equal(px_auth_nonce(nc), 0);
    assert_int_equal(px_auth_nonce(na), 0);
    assert_int_equal(px_auth_nonce(nc2), 0);
    /* node 3 connects to node 1 */
    assert_int_equal(px_auth_tag(key, PX_AUTH_ACCEPTOR, "job", 3, 1, nc, na, ta), 0);
    assert_true(px_auth_check(key, PX_AUTH_ACCEPTOR, "job", 3, 1, nc, na, ta));
    assert_int_equal(px_auth_tag(key, PX_AUTH_CONNECTOR, "job", 3, 1, nc, na, tc), 0);
    assert_true(px_auth_check(key, PX_AUTH_CONNECTOR, "job", 3, 1, nc, na, tc));
    /* the acceptor's tag is no connector's answer (a reflection) */
    assert_memory_not_equal(ta, tc, sizeof(ta));
    assert_false(px_auth_check(key, PX_AUTH_CONNECTOR, "job", 3, 1, nc, na, ta));
    /* another key, job, node or nonce: refused */
    assert_false(px_auth_check(other, PX_AUTH_CONNECTOR, "job", 3, 1, nc, na, tc));
    assert_false(px_auth_check(key, PX_AUTH_CONNECTOR, "job2", 3, 1, nc, na, tc));
    assert_false(px_auth_check(key, PX_AUTH_CONNECTOR, "job", 2, 1, nc, na, tc));
    assert_false(px_auth_check(key, PX_AUTH_CONNECTOR, "job", 3, 0, nc, na, tc));
    assert_false(px_auth_check(key, PX_AUTH_CONNECTOR, "job", 3, 1, nc2, na, tc)); /* replayed */
    tc[7] ^= 1;
    assert_false(px_auth_check(key, PX_AUTH_CONNECTOR, "job", 3, 1, nc, na, tc));
}

static void test_key_hex(void **state)
{
    uint8_t key[PX_AUTH_KEYLEN], back[PX_AUTH_KEYLEN];
    char hex[2 * PX_AUTH_KEYLEN + 1];

    assert_int_equal(px_auth_keygen(key), 0);
    px_auth_key_hex(key, hex);
    assert_int_equal(strlen(hex), 64);
    assert_int_equal(px_auth_key_parse(hex, back), 0);
    assert_memory_equal(key, back, sizeof(key));
    memset(back, 0, sizeof(back));
    hex[10] = 'g';
    assert_int_equal(px_auth_key_parse(hex, back), -1);
    assert_int_equal(px_auth_key_parse("abcd", back), -1);
    assert_int_equal(px_auth_key_parse(NULL, back), -1);
    for (size_t i = 0; i < sizeof(back); i++)
        assert_int_equal(back[i], 0); /* unchanged on failure */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handshake),
        cmocka_unit_test(test_key_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
