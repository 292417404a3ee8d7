/* The line of a text with a caret under an offset, for the parser's messages (mblx_excerpt; moved
 * out of expr/parse.c whole). */
#include <stddef.h>

#include "mblin/expr.h"

static void put(char *buf, size_t size, size_t *k, char c)
{
    if (buf && *k + 1 < size) buf[*k] = c;
    (*k)++;
}

size_t mblx_excerpt(const char *text, size_t len, size_t offset, char *buf, size_t size)
{
    size_t k = 0;
    if (!text) len = 0;
    if (offset > len) offset = len;
    size_t b = offset, e = offset;
    while (b > 0 && text[b - 1] != '\n') b--;
    while (e < len && text[e] != '\n') e++;
    put(buf, size, &k, ' ');
    put(buf, size, &k, ' ');
    for (size_t i = b; i < e; i++) {
        unsigned char c = (unsigned char)text[i];
        put(buf, size, &k, (c == '\t' || c >= 0x20) && c != 0x7f ? (char)c : '?');
    }
    put(buf, size, &k, '\n');
    put(buf, size, &k, ' ');
    put(buf, size, &k, ' ');
    for (size_t i = b; i < offset; i++) put(buf, size, &k, text[i] == '\t' ? '\t' : ' ');
    put(buf, size, &k, '^');
    if (buf && size) buf[k < size ? k : size - 1] = '\0';
    return k;
}
