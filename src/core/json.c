/* The one JSON writer: strings escaped, numbers to 17 digits or null (include/mblin/json.h). */
#include <math.h>

#include "core/numfmt.h"
#include "mblin/json.h"

void mbl_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

void mbl_json_number(FILE *f, double x, int digits, int zero_unsigned)
{
    if (!isfinite(x)) fputs("null", f);
    else if (zero_unsigned && x == 0.0) fputs("0", f);
    else core_put_g(f, x, digits); /* printf's "%.*g", without its multi-precision conversion */
}
