/* A short name's bytes as one 64-bit word: the one copy of this packing, used by the model's
 * symbol index (src/model/names.c) and the expression parser's memo of names (src/expr/parse.c). */
#ifndef MBLIN_CORE_NAME_WORD_H
#define MBLIN_CORE_NAME_WORD_H

#include <stddef.h>
#include <stdint.h>

/* 4 bytes at p, the first lowest */
static inline uint64_t name_word_bytes4(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint64_t)u[0] | (uint64_t)u[1] << 8 | (uint64_t)u[2] << 16 | (uint64_t)u[3] << 24;
}

/* name[0 .. len)'s first 8 bytes (fewer: zero padded) as a word, the first lowest. Of 4 to 7 bytes:
 * two loads of 4 that overlap (a loop over the bytes cost 39 instructions a name). Two names of
 * fewer than 8 bytes and no NUL are equal exactly when their lengths and words are. */
static inline uint64_t name_word(const char *name, size_t len)
{
    const unsigned char *u = (const unsigned char *)name;
    if (len >= 8) return name_word_bytes4(name) | name_word_bytes4(name + 4) << 32;
    if (len >= 4) return name_word_bytes4(name) | name_word_bytes4(name + len - 4) << (8 * (len - 4));
    return (len > 0 ? (uint64_t)u[0] : 0) | (len > 1 ? (uint64_t)u[1] << 8 : 0) | (len > 2 ? (uint64_t)u[2] << 16 : 0);
}

/* 1 when one of the word's first len bytes (all 8 from len 8 on) is NUL */
static inline int name_word_has_nul(uint64_t w, size_t len)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t mask = len >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * len)) - 1;
    return ((w - ones) & ~w & highs & mask) != 0;
}

#endif
