/*
 * msg.c - the message header of coll/ and its little-endian helpers.
 *
 * Every message starts with a 32-byte header; every integer is
 * little-endian, written byte by byte so no host struct reaches the wire:
 *
 *     offset 0  u16 magic     0x4350 (the bytes "PC")
 *     offset 2  u8  version   1
 *     offset 3  u8  type      1 data, 2 ABORT notice
 *     offset 4  u8  algo      algorithm id (catalog.c); 0 in notices
 *     offset 5  u8  phase     0 flat; hier 1 gather, 2 leaders, 3 broadcast
 *     offset 6  u16 param     tree: radix; hier: inner id | radix << 8
 *     offset 8  u64 id        collective id
 *     offset 16 u32 epoch
 *     offset 20 u32 round     the algorithm's step (see each algorithm)
 *     offset 24 u32 sender    member id
 *     offset 28 u32 nmembers  must match the receiver's
 *
 * (epoch, phase, round, sender) names a data message uniquely in every
 * algorithm, which is what duplicate detection relies on. The payload
 * follows; its length is the message length minus 32 (the transport
 * frames messages, so no length field is needed here). Checks that need
 * the receiver's state (id, nmembers, epoch, sender) are in core.c.
 */
#include <string.h>

#include "coll_int.h"

#define MAGIC 0x4350u
#define VERSION 1u

void px_coll_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

void px_coll_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

void px_coll_put64(uint8_t *p, uint64_t v)
{
    px_coll_put32(p, (uint32_t)v);
    px_coll_put32(p + 4, (uint32_t)(v >> 32));
}

uint16_t px_coll_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

uint32_t px_coll_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

uint64_t px_coll_get64(const uint8_t *p)
{
    return (uint64_t)px_coll_get32(p) | ((uint64_t)px_coll_get32(p + 4) << 32);
}

void px_coll_hdr_write(uint8_t *p, const px_coll_msg_info *h)
{
    px_coll_put16(p, MAGIC);
    p[2] = VERSION;
    p[3] = h->type;
    p[4] = h->algo;
    p[5] = h->phase;
    px_coll_put16(p + 6, h->param);
    px_coll_put64(p + 8, h->id);
    px_coll_put32(p + 16, h->epoch);
    px_coll_put32(p + 20, h->round);
    px_coll_put32(p + 24, h->sender);
    px_coll_put32(p + 28, h->nmembers);
}

pmix_status_t px_coll_msg_peek(const void *msg, size_t len, px_coll_msg_info *out)
{
    const uint8_t *p = msg;
    px_coll_msg_info h;

    if (msg == NULL || out == NULL || len < PX_COLL_HDR_SIZE) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (px_coll_get16(p) != MAGIC || p[2] != VERSION) {
        return PMIX_ERR_BAD_PARAM;
    }
    h.type = p[3];
    h.algo = p[4];
    h.phase = p[5];
    h.param = px_coll_get16(p + 6);
    h.id = px_coll_get64(p + 8);
    h.epoch = px_coll_get32(p + 16);
    h.round = px_coll_get32(p + 20);
    h.sender = px_coll_get32(p + 24);
    h.nmembers = px_coll_get32(p + 28);
    if (h.type != PX_COLL_MSG_DATA && h.type != PX_COLL_MSG_ABORT) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (h.phase > PX_COLL_PHASE_MAX) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (h.type == PX_COLL_MSG_ABORT && (h.algo != 0 || h.phase != 0 || h.param != 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    *out = h;
    return PMIX_SUCCESS;
}

unsigned px_coll_ceil_lg(uint32_t n)
{
    unsigned l = 0;

    while (l < 32 && ((uint64_t)1 << l) < n) {
        l++;
    }
    return l;
}

uint32_t px_coll_pof2_floor(uint32_t n)
{
    uint32_t p = 1;

    while (p <= n / 2) {
        p <<= 1;
    }
    return p;
}
