/* The expression parser's classes of the characters (expr/parse.c, and the plain numbers' reader
 * expr/number_node.c): one table lookup per character scanned. */
#ifndef MBLIN_EXPR_PARSE_CHARS_H
#define MBLIN_EXPR_PARSE_CHARS_H

/* The classes of the characters (C_*), one table lookup per character scanned. */
enum { C_WS = 1, C_DIGIT = 2, C_ALPHA = 4, C_FIRST = 8 /* the first letter of a builtin */ };
static const unsigned char cclass[256] = {
    ['\t'] = C_WS, ['\n'] = C_WS, ['\r'] = C_WS, [' '] = C_WS,
    ['0'] = C_DIGIT, ['1'] = C_DIGIT, ['2'] = C_DIGIT, ['3'] = C_DIGIT, ['4'] = C_DIGIT,
    ['5'] = C_DIGIT, ['6'] = C_DIGIT, ['7'] = C_DIGIT, ['8'] = C_DIGIT, ['9'] = C_DIGIT,
    ['_'] = C_ALPHA,
    ['A'] = C_ALPHA, ['B'] = C_ALPHA, ['C'] = C_ALPHA, ['D'] = C_ALPHA, ['E'] = C_ALPHA, ['F'] = C_ALPHA,
    ['G'] = C_ALPHA, ['H'] = C_ALPHA, ['I'] = C_ALPHA, ['J'] = C_ALPHA, ['K'] = C_ALPHA, ['L'] = C_ALPHA,
    ['M'] = C_ALPHA, ['N'] = C_ALPHA, ['O'] = C_ALPHA, ['P'] = C_ALPHA, ['Q'] = C_ALPHA, ['R'] = C_ALPHA,
    ['S'] = C_ALPHA, ['T'] = C_ALPHA, ['U'] = C_ALPHA, ['V'] = C_ALPHA, ['W'] = C_ALPHA, ['X'] = C_ALPHA,
    ['Y'] = C_ALPHA, ['Z'] = C_ALPHA,
    ['a'] = C_ALPHA | C_FIRST, ['b'] = C_ALPHA, ['c'] = C_ALPHA | C_FIRST, ['d'] = C_ALPHA,
    ['e'] = C_ALPHA | C_FIRST, ['f'] = C_ALPHA, ['g'] = C_ALPHA, ['h'] = C_ALPHA, ['i'] = C_ALPHA,
    ['j'] = C_ALPHA, ['k'] = C_ALPHA, ['l'] = C_ALPHA | C_FIRST, ['m'] = C_ALPHA | C_FIRST, ['n'] = C_ALPHA,
    ['o'] = C_ALPHA, ['p'] = C_ALPHA, ['q'] = C_ALPHA, ['r'] = C_ALPHA, ['s'] = C_ALPHA | C_FIRST,
    ['t'] = C_ALPHA | C_FIRST, ['u'] = C_ALPHA, ['v'] = C_ALPHA, ['w'] = C_ALPHA, ['x'] = C_ALPHA,
    ['y'] = C_ALPHA, ['z'] = C_ALPHA,
};

static inline int is_digit(char c) { return (cclass[(unsigned char)c] & C_DIGIT) != 0; }
static inline int is_alpha(char c) { return (cclass[(unsigned char)c] & C_ALPHA) != 0; }
static inline int is_word(char c) { return (cclass[(unsigned char)c] & (C_ALPHA | C_DIGIT)) != 0; }

#endif
