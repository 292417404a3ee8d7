/* libFuzzer target: the generated function's name and the model file's path of `mblin codegen`
 * (mbl_codegen_name_check, mbl_codegen) on a fixed small model (the slider-pendulum of
 * examples/slider_pendulum.yaml, with and without the Newton iteration), in each language.
 *
 * Input: byte 0 picks the language (mod 3) and the Newton iteration ((byte / 3) mod 2); then the
 * name up to the first NUL byte; after it, the path (absent without a NUL: "a model").
 * Checked: a name the check accepts is an identifier ([A-Za-z][A-Za-z0-9_]*, Python also _ first),
 * at most 56 characters, not a keyword of the language (lists here, from the language references:
 * C11 and C23, Python 3 keyword.kwlist, Octave iskeyword) nor a function or macro of <math.h> (C);
 * mbl_codegen refuses every name the check refuses (MBL_EARG, one line, nothing written); for an
 * accepted name the code written with the fuzzed path is the code written with a plain path
 * except on that one comment line, which holds no control character, no byte above 0x7e, and
 * nothing that ends the comment early (C: no star-slash or slash-star, no ?? trigraph, no
 * backslash at its end; Python: no encoding declaration). Build and run: see docs/fuzzing.md. */
#define _GNU_SOURCE /* open_memstream */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/mblin.h"

static const char model_text[] =
    "model: dae\n"
    "name: slider-pendulum\n"
    "parameters: {m2: 10, m3: 20, l: 2, j3: 15, k: 20, c: 0.5, g: 9.81}\n"
    "coordinates: {y: 0, theta: 0.1}\n"
    "kinetic_energy: \"0.5*(m2 + m3)*der(y)^2 + m3*l/2*cos(theta)*der(y)*der(theta) + 0.5*(m3*l^2/4 + j3)*der(theta)^2\"\n"
    "potential_energy: \"0.5*k*y^2 - m3*g*l/2*cos(theta)\"\n"
    "dissipation: \"0.5*c*der(y)^2\"\n"
    "forces: {y: F}\n"
    "inputs: {F: 0}\n"
    "outputs: {tip: \"y + l*sin(theta)\"}\n"
    "linearize:\n"
    "  at: equilibrium\n";

static mbl_symlin *sl[2]; /* without, with the Newton iteration */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    mbl_status st;
    mbl_status_clear(&st);
    mbl_model *md = NULL;
    mbl_point *pt = NULL;
    mbl_opoint_options po;
    mbl_opoint_options_default(&po);
    for (int k = 0; k < 2; k++)
        if (mbl_model_load_string(model_text, sizeof model_text - 1, "slider.yaml", NULL, 0, &md, &st) ||
            mbl_operating_point(md, &po, &pt, &st) || mbl_symlin_new(md, pt, 0, &sl[k], &st) ||
            (k && mbl_symlin_newton(sl[k], &st))) {
            fprintf(stderr, "fuzz_codegen_name: %s\n", st.msg);
            abort();
        } else {
            mbl_point_free(pt), pt = NULL;
            mbl_model_free(md), md = NULL;
        }
    return 0;
}

static int in(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(name, *list)) return 1;
    return 0;
}

/* The names no generated function may have, from the languages' references (not the library's lists). */
static const char *const c_reserved[] = {
    /* C11 6.4.1 and C23 6.4.1 keywords */
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
    "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
    "alignas", "alignof", "bool", "constexpr", "false", "nullptr", "static_assert", "thread_local", "true",
    "typeof", "typeof_unqual",
    /* C11 7.12 <math.h>: functions and macros (and POSIX's Bessel functions, declared by glibc) */
    "acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh", "sinh", "tanh",
    "exp", "exp2", "expm1", "frexp", "ilogb", "ldexp", "log", "log10", "log1p", "log2", "logb", "modf",
    "scalbn", "scalbln", "cbrt", "fabs", "hypot", "pow", "sqrt", "erf", "erfc", "lgamma", "tgamma", "ceil",
    "floor", "nearbyint", "rint", "lrint", "llrint", "round", "lround", "llround", "trunc", "fmod",
    "remainder", "remquo", "copysign", "nan", "nextafter", "nexttoward", "fdim", "fmax", "fmin", "fma",
    "isfinite", "isinf", "isnan", "isnormal", "signbit", "fpclassify", "isgreater", "isgreaterequal",
    "isless", "islessequal", "islessgreater", "isunordered", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL",
    "INFINITY", "NAN", "FP_INFINITE", "FP_NAN", "FP_NORMAL", "FP_SUBNORMAL", "FP_ZERO", "FP_FAST_FMA",
    "FP_ILOGB0", "FP_ILOGBNAN", "MATH_ERRNO", "MATH_ERREXCEPT", "math_errhandling", "j0", "j1", "jn", "y0",
    "y1", "yn", NULL};
static const char *const py_reserved[] = { /* Python 3.11 keyword.kwlist */
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
    "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", NULL};
static const char *const oct_reserved[] = { /* Octave 8 iskeyword() */
    "__FILE__", "__LINE__", "break", "case", "catch", "classdef", "continue", "do", "else", "elseif", "end",
    "end_try_catch", "end_unwind_protect", "endclassdef", "endenumeration", "endevents", "endfor",
    "endfunction", "endif", "endmethods", "endparfor", "endproperties", "endspmd", "endswitch", "endwhile",
    "enumeration", "events", "for", "function", "global", "if", "methods", "otherwise", "parfor",
    "persistent", "properties", "return", "spmd", "switch", "try", "until", "unwind_protect",
    "unwind_protect_cleanup", "while", NULL};

static void check_accepted(int lang, const char *name)
{
    size_t len = strlen(name);
    if (len < 1 || len > 56) abort();
    int c0 = (unsigned char)name[0];
    int letter = (c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z');
    if (!letter && !(lang == MBL_LANG_PYTHON && c0 == '_')) abort();
    for (size_t i = 0; i < len; i++) {
        int c = (unsigned char)name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) abort();
    }
    if (in(name, lang == MBL_LANG_C ? c_reserved : lang == MBL_LANG_PYTHON ? py_reserved : oct_reserved)) abort();
}

static char *generate(const mbl_symlin *s, int lang, const char *name, const char *path, size_t *len, int *rc,
                      mbl_status *st)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) abort();
    mbl_status_clear(st);
    *rc = mbl_codegen(s, (mbl_lang)lang, name, path, f, st);
    if (fclose(f)) abort();
    return buf;
}

/* the one line where a and b differ (both of n lines), checked */
static void check_header(int lang, const char *a, size_t alen, const char *b, size_t blen)
{
    const char *pa = a, *pb = b, *ea = a + alen, *eb = b + blen;
    int ndiff = 0;
    for (int line = 1; pa < ea || pb < eb; line++) {
        const char *na = memchr(pa, '\n', (size_t)(ea - pa)), *nb = memchr(pb, '\n', (size_t)(eb - pb));
        if (!na || !nb) {
            if (na || nb || ea - pa != eb - pb || memcmp(pa, pb, (size_t)(ea - pa))) abort(); /* a line more */
            break;
        }
        size_t la = (size_t)(na - pa), lb = (size_t)(nb - pb);
        if (la != lb || memcmp(pa, pb, la)) {
            if (++ndiff > 1 || line > 2) abort(); /* the path is on the first line (C, Python) or the second */
            for (size_t i = 0; i < la; i++) {
                unsigned c = (unsigned char)pa[i];
                if (c < 0x20 || c > 0x7e) abort();
                if (lang == MBL_LANG_C && i > 1 && (c == '*' || c == '/') && i + 1 < la &&
                    (pa[i + 1] == '/' || pa[i + 1] == '*') && pa[i + 1] != (char)c)
                    abort(); /* star-slash or slash-star */
                if (lang == MBL_LANG_C && c == '?' && i + 1 < la && pa[i + 1] == '?') abort();
                if (c == '\\' && i + 1 == la) abort(); /* a line splice */
                if (lang == MBL_LANG_PYTHON && c == 'c' && i + 7 <= la && !memcmp(pa + i, "coding", 6) &&
                    (pa[i + 6] == ':' || pa[i + 6] == '='))
                    abort();
            }
        }
        pa = na + 1, pb = nb + 1;
    }
}

enum { MAX_TEXT = 4096 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > MAX_TEXT) return 0;
    int lang = data[0] % 3, newton = (data[0] / 3) % 2;
    char *text = malloc(size);
    if (!text) abort();
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    const char *name = text, *path = NULL;
    size_t nlen = strlen(name);
    if (nlen + 1 < size) path = text + nlen + 1; /* after the first NUL */
    const char *why = mbl_codegen_name_check((mbl_lang)lang, name);
    mbl_status st;
    size_t len = 0, blen = 0;
    int rc = 0, rc2 = 0;
    char *out = generate(sl[newton], lang, name, path, &len, &rc, &st);
    if (why) {
        if (!why[0] || strchr(why, '\n')) abort();
        if (rc != MBL_EARG || st.code != MBL_EARG || !st.msg[0] || strchr(st.msg, '\n') || len) abort();
    } else {
        check_accepted(lang, name);
        if (rc) abort(); /* the fixed model always generates */
        char *plain = generate(sl[newton], lang, name, "model.yaml", &blen, &rc2, &st);
        if (rc2) abort();
        check_header(lang, out, len, plain, blen);
        free(plain);
    }
    free(out);
    free(text);
    return 0;
}
