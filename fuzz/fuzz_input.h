/*
 * fuzz_input.h - reading a fuzz target's input as a script: small numbers
 * and byte strings taken from the front of the input, with defaults once it
 * runs out, so that every input, however short, is a valid script.
 *
 * And the check every target uses: FUZZ_CHECK(cond) stops the run with a
 * message naming the condition, which libFuzzer reports as a crash (with
 * the input saved to a file).
 */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct fuzz_in {
    const uint8_t *p;
    size_t left;
} fuzz_in;

static inline void fuzz_in_init(fuzz_in *in, const uint8_t *data, size_t size)
{
    in->p = data;
    in->left = size;
}

/* The next byte, 0 at the end. */
static inline uint8_t fuzz_u8(fuzz_in *in)
{
    uint8_t v = 0;

    if (in->left > 0) {
        v = in->p[0];
        in->p++;
        in->left--;
    }
    return v;
}

/* The next two bytes, little-endian. */
static inline uint16_t fuzz_u16(fuzz_in *in)
{
    uint16_t lo = fuzz_u8(in);

    return (uint16_t)(lo | (uint16_t)fuzz_u8(in) << 8);
}

/* Up to `n` next bytes, pointing into the input; *got says how many. */
static inline const uint8_t *fuzz_bytes(fuzz_in *in, size_t n, size_t *got)
{
    const uint8_t *p = in->p;

    if (n > in->left) {
        n = in->left;
    }
    in->p += n;
    in->left -= n;
    *got = n;
    return p;
}

/* A byte string with a one-byte length in front. */
static inline const uint8_t *fuzz_blob8(fuzz_in *in, size_t *got)
{
    return fuzz_bytes(in, fuzz_u8(in), got);
}

/* A byte string with a two-byte length in front. */
static inline const uint8_t *fuzz_blob16(fuzz_in *in, size_t *got)
{
    return fuzz_bytes(in, fuzz_u16(in), got);
}

#define FUZZ_CHECK(cond)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                      \
        }                                                                                 \
    } while (0)

#endif /* FUZZ_INPUT_H */
