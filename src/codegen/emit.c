/* Straight-line code of a symbolic linear model (include/mblin/codegen.h, docs/symbolic.md): the
 * nodes reachable from the matrices in handle order (operands have smaller handles, so this is a
 * topological order, the order a compiled tape executes them in), one local per operation, each
 * computed once however many entries share it. C needs only <math.h>; Python math and NumPy;
 * Octave nothing. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mblin/codegen.h"

typedef struct emitter {
    const mbl_symlin *sl;
    mbl_lang lang;
    FILE *f;
    long *symrole;  /* symbol index -> 0..np-1 params, np.. q, np+n.. r, np+n+nr.. v, np+2n+nr.. lambda, -1 other */
    unsigned char *mark;
    const char *ind; /* indentation of the statements being emitted */
} emitter;

/* ---- text that reaches generated code (docs/symbolic.md, "What reaches the generated code") ----
 * Only two kinds of user text reach the code: the function name (an identifier, checked by
 * mbl_codegen_name_check) and text in comments (the model file's path, the function name, the
 * model's parameter, coordinate, input, state and output names). Comment text is written through
 * put_comment_text, which keeps it inside a one-line comment of every language: control bytes
 * (newline, CR, ...), bytes >= 0x7f and the backslash are written as \xNN; in C a '/' next to a '*'
 * (the comment's end, or a nested start) and a '?' before a '?' (a trigraph such as ??/) too; in
 * Python the ':' or '=' after "coding" as written, escapes included (a PEP 263 encoding declaration
 * in the first two lines). A
 * '#' or '%' comment ends only at a newline, so nothing else can end it. Ordinary text is unchanged. */
static void put_comment_text(emitter *E, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    char tail[8] = "";
    for (size_t i = 0; u[i]; i++) {
        unsigned c = u[i];
        int esc = c < 0x20 || c >= 0x7f || c == '\\';
        if (E->lang == MBL_LANG_C)
            esc |= (c == '/' && ((i > 0 && u[i - 1] == '*') || u[i + 1] == '*')) || (c == '?' && u[i + 1] == '?');
        /* "coding" as written, escapes included: the c of \x9c and "oding:" made "coding:" (found by
         * fuzz_codegen_name) */
        if (E->lang == MBL_LANG_PYTHON && (c == ':' || c == '=') && !strcmp(tail, "coding")) esc = 1;
        char out[8];
        if (esc) snprintf(out, sizeof out, "\\x%02x", c);
        else out[0] = (char)c, out[1] = '\0';
        fputs(out, E->f);
        char win[16]; /* tail: the last 6 characters written */
        snprintf(win, sizeof win, "%s%s", tail, out);
        size_t nw = strlen(win);
        strcpy(tail, win + (nw > 6 ? nw - 6 : 0));
    }
}

/* The function's name at the start of the header comment, before ": linear model of". Python reads
 * "coding:" in its first two lines as an encoding declaration (PEP 263): a name ending in "coding"
 * (robotcoding) declared the encoding "linear" and the module did not import (found by
 * fuzz_codegen_name), so such a name is followed by a space. */
static void put_title_name(emitter *E, const char *name)
{
    put_comment_text(E, name);
    size_t n = strlen(name);
    if (E->lang == MBL_LANG_PYTHON && n >= 6 && !strcmp(name + n - 6, "coding")) fputc(' ', E->f);
}

static int in_list(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(name, *list)) return 1;
    return 0;
}

const char *mbl_codegen_name_check(mbl_lang lang, const char *name)
{
    static const char *const c_kw[] = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
        "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
        "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
        "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn",
        "_Static_assert", "_Thread_local", "asm", "typeof", "bool", "true", "false", "NULL", "main",
        /* C23's new keywords (gcc 15 compiles C23 by default) */
        "alignas", "alignof", "constexpr", "nullptr", "static_assert", "thread_local", "typeof_unqual", NULL};
    /* the generated C includes <math.h>: its functions and macros (C11 7.12; POSIX's Bessel functions,
     * which glibc declares by default) cannot name the function (found by fuzz_codegen_name: y1, log10,
     * NAN were accepted and the code did not compile) */
    static const char *const c_math[] = {
        "acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh", "sinh", "tanh", "exp",
        "exp2", "expm1", "frexp", "ilogb", "ldexp", "log", "log10", "log1p", "log2", "logb", "modf", "scalbn",
        "scalbln", "cbrt", "fabs", "hypot", "pow", "sqrt", "erf", "erfc", "lgamma", "tgamma", "ceil", "floor",
        "nearbyint", "rint", "lrint", "llrint", "round", "lround", "llround", "trunc", "fmod", "remainder", "remquo",
        "copysign", "nan", "nextafter", "nexttoward", "fdim", "fmax", "fmin", "fma", "isfinite", "isinf", "isnan",
        "isnormal", "signbit", "fpclassify", "isgreater", "isgreaterequal", "isless", "islessequal", "islessgreater",
        "isunordered", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "INFINITY", "NAN", "FP_INFINITE", "FP_NAN", "FP_NORMAL",
        "FP_SUBNORMAL", "FP_ZERO", "FP_FAST_FMA", "FP_ILOGB0", "FP_ILOGBNAN", "MATH_ERRNO", "MATH_ERREXCEPT",
        "math_errhandling", "j0", "j1", "jn", "y0", "y1", "yn", NULL};
    static const char *const py_kw[] = {"False", "None", "True", "and", "as", "assert", "async", "await", "break",
                                        "class", "continue", "def", "del", "elif", "else", "except", "finally",
                                        "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
                                        "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
                                        NULL};
    static const char *const oct_kw[] = {
        "break", "case", "catch", "classdef", "continue", "do", "else", "elseif", "end", "end_try_catch",
        "end_unwind_protect", "endclassdef", "endenumeration", "endevents", "endfor", "endfunction", "endif",
        "endmethods", "endparfor", "endproperties", "endspmd", "endswitch", "endwhile", "enumeration", "events",
        "for", "function", "global", "if", "methods", "otherwise", "parfor", "persistent", "properties", "return",
        "spmd", "switch", "try", "until", "unwind_protect", "unwind_protect_cleanup", "while", NULL};
    /* names the generated code itself uses: arguments, locals, helpers, modules, library functions */
    static const char *const used[] = {
        "p", "q", "r", "v", "x", "s", "A", "B", "C", "D", "M", "Cd", "K", "F", "lam", "it", "its", "dx", "done",
        "res", "jac", "tol", "maxit", "x0", "h0", "x1", "h1", "math", "np", "numpy", "mbl_gen_sign", "mbl_gen_step",
        "_sign", "_step", "step_", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
        "exp", "log", "sqrt", "fabs", "abs", "sign", "fmin", "fmax", "min", "max", "pow", "power", "float", "list",
        "range", "RuntimeError", "zeros", "error", "nargin", "isempty", NULL};
    if (!name || !name[0]) return "is empty";
    if (!(isalpha((unsigned char)name[0]) || (name[0] == '_' && lang == MBL_LANG_PYTHON)))
        return lang == MBL_LANG_PYTHON ? "is not an identifier (a letter or _ first)"
                                       : "is not an identifier (a letter first)";
    size_t len = 0;
    for (const char *s = name; *s; s++, len++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return "is not an identifier (letters, digits and _ only)";
    if (len > 56) return "is longer than 56 characters";
    if (lang == MBL_LANG_C && in_list(name, c_kw)) return "is a C keyword or reserved name";
    if (lang == MBL_LANG_PYTHON && in_list(name, py_kw)) return "is a Python keyword";
    if (lang == MBL_LANG_OCTAVE && in_list(name, oct_kw)) return "is an Octave/MATLAB keyword";
    if (in_list(name, used)) return "is a name the generated code uses itself";
    if (lang == MBL_LANG_C && in_list(name, c_math)) return "is a function or macro of <math.h>";
    if (name[0] == 't' && name[1] && strspn(name + 1, "0123456789") == len - 1)
        return "is a name the generated code uses itself (its locals t<number>)";
    return NULL;
}

static void put_num(emitter *E, double v)
{
    char b[40];
    snprintf(b, sizeof b, "%.17g", v);
    /* shortest round-tripping form */
    for (int pr = 1; pr <= 17; pr++) {
        char c[40];
        snprintf(c, sizeof c, "%.*g", pr, v);
        if (strtod(c, NULL) == v) {
            memcpy(b, c, sizeof c);
            break;
        }
    }
    int isint = !strpbrk(b, ".eEn");
    if (v < 0) fputc('(', E->f);
    fputs(b, E->f);
    if (isint && E->lang == MBL_LANG_C) fputs(".0", E->f);
    if (v < 0) fputc(')', E->f);
}

static void put_ref(emitter *E, mblx_id e)
{
    const mblx_graph *g = E->sl->g;
    double v;
    if (mblx_is_const(g, e, &v)) {
        put_num(E, v);
        return;
    }
    if (mblx_node_op(g, e) == MBLX_OP_SYMBOL) {
        long role = E->symrole[mblx_symbol_index(g, e)];
        const mbl_symlin *sl = E->sl;
        long nq = sl->nq > sl->n ? sl->nq : sl->n;
        long b[5] = {0, sl->np, sl->np + nq, sl->np + nq + sl->nr, sl->np + nq + sl->n + sl->nr};
        static const char *names[5] = {"p", "q", "r", "v", "lam"};
        int k = 4;
        while (k > 0 && role < b[k]) k--;
        const char *arr = names[k];
        long idx = role - b[k];
        if (E->lang == MBL_LANG_OCTAVE) fprintf(E->f, "%s(%ld)", arr, idx + 1);
        else fprintf(E->f, "%s[%ld]", arr, idx);
        return;
    }
    fprintf(E->f, "t%u", (unsigned)e);
}

static const char *fname(mbl_lang lang, mblx_op op)
{
    int c = lang == MBL_LANG_C, py = lang == MBL_LANG_PYTHON;
    switch (op) {
    case MBLX_OP_SIN: return py ? "math.sin" : "sin";
    case MBLX_OP_COS: return py ? "math.cos" : "cos";
    case MBLX_OP_TAN: return py ? "math.tan" : "tan";
    case MBLX_OP_ASIN: return py ? "math.asin" : "asin";
    case MBLX_OP_ACOS: return py ? "math.acos" : "acos";
    case MBLX_OP_ATAN: return py ? "math.atan" : "atan";
    case MBLX_OP_ATAN2: return py ? "math.atan2" : "atan2";
    case MBLX_OP_SINH: return py ? "math.sinh" : "sinh";
    case MBLX_OP_COSH: return py ? "math.cosh" : "cosh";
    case MBLX_OP_TANH: return py ? "math.tanh" : "tanh";
    case MBLX_OP_EXP: return py ? "math.exp" : "exp";
    case MBLX_OP_LOG: return py ? "math.log" : "log";
    case MBLX_OP_SQRT: return py ? "math.sqrt" : "sqrt";
    case MBLX_OP_ABS: return c ? "fabs" : "abs";
    case MBLX_OP_SIGN: return c ? "mbl_gen_sign" : py ? "_sign" : "sign";
    case MBLX_OP_MIN: return c ? "fmin" : "min";
    case MBLX_OP_MAX: return c ? "fmax" : "max";
    case MBLX_OP_STEP: return c ? "mbl_gen_step" : py ? "_step" : "step_";
    default: return NULL;
    }
}

static int emit_node(emitter *E, mblx_id e, mbl_status *st)
{
    const mblx_graph *g = E->sl->g;
    FILE *f = E->f;
    mblx_op op = mblx_node_op(g, e);
    int na = mblx_node_nargs(g, e);
    const char *ind = E->ind;
    fprintf(f, "%s%st%u = ", ind, E->lang == MBL_LANG_C ? "const double " : "", (unsigned)e);
    if (op == MBLX_OP_ADD) {
        double c0 = mblx_node_value(g, e);
        int first = 1;
        if (c0 != 0.0) put_num(E, c0), first = 0;
        for (int i = 0; i < na; i++) {
            if (!first) fputs(" + ", f);
            put_ref(E, mblx_node_arg(g, e, i));
            first = 0;
        }
    } else if (op == MBLX_OP_MUL) {
        double c0 = mblx_node_value(g, e);
        int first = 1;
        if (c0 == -1.0) fputc('-', f);
        else if (c0 != 1.0) put_num(E, c0), first = 0;
        for (int i = 0; i < na; i++) {
            if (!first) fputs(" * ", f);
            put_ref(E, mblx_node_arg(g, e, i));
            first = 0;
        }
    } else if (op == MBLX_OP_POW) {
        mblx_id b = mblx_node_arg(g, e, 0), x = mblx_node_arg(g, e, 1);
        double k;
        if (mblx_is_const(g, x, &k) && k == floor(k) && fabs(k) >= 1 && fabs(k) <= 4) {
            if (k < 0) fputs(E->lang == MBL_LANG_C ? "1.0/(" : "1/(", f);
            for (int i = 0; i < (int)fabs(k); i++) {
                if (i) fputs(" * ", f);
                put_ref(E, b);
            }
            if (k < 0) fputc(')', f);
        } else if (mblx_is_const(g, x, &k) && (k == 0.5 || k == -0.5)) {
            if (k < 0) fputs(E->lang == MBL_LANG_C ? "1.0/" : "1/", f);
            fputs(E->lang == MBL_LANG_PYTHON ? "math.sqrt(" : "sqrt(", f);
            put_ref(E, b);
            fputc(')', f);
        } else {
            fputs(E->lang == MBL_LANG_PYTHON ? "math.pow(" : E->lang == MBL_LANG_C ? "pow(" : "power(", f);
            put_ref(E, b);
            fputs(", ", f);
            put_ref(E, x);
            fputc(')', f);
        }
    } else {
        const char *fn = fname(E->lang, op);
        if (!fn) return mbl_error(st, MBL_EARG, "codegen: operation %s cannot be generated", mblx_op_name(op));
        fprintf(f, "%s(", fn);
        for (int i = 0; i < na; i++) {
            if (i) fputs(", ", f);
            put_ref(E, mblx_node_arg(g, e, i));
        }
        fputc(')', f);
    }
    fputs(E->lang == MBL_LANG_C ? ";\n" : E->lang == MBL_LANG_OCTAVE ? ";\n" : "\n", f);
    return 0;
}

static void mark_from(emitter *E, mblx_id root, mblx_id *stack)
{
    const mblx_graph *g = E->sl->g;
    if (E->mark[root]) return;
    size_t top = 0;
    E->mark[root] = 1;
    stack[top++] = root;
    while (top) {
        mblx_id e = stack[--top];
        int na = mblx_node_nargs(g, e);
        for (int i = 0; i < na; i++) {
            mblx_id a = mblx_node_arg(g, e, i);
            if (!E->mark[a]) E->mark[a] = 1, stack[top++] = a;
        }
    }
}

static void put_values(emitter *E, const char *name, const char *suffix, int n, const double *v)
{
    FILE *f = E->f;
    if (E->lang == MBL_LANG_C) {
        fprintf(f, "extern const double %s_%s[%d];\nconst double %s_%s[%d] = {", name, suffix, n > 0 ? n : 1, name,
                suffix, n > 0 ? n : 1);
        if (!n) fputs("0.0", f);
    } else if (E->lang == MBL_LANG_PYTHON) {
        fprintf(f, "%s_%s = [", name, suffix);
    } else {
        fprintf(f, "    %s = [", suffix);
    }
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        put_num(E, v[i]);
    }
    fputs(E->lang == MBL_LANG_C ? "};\n" : E->lang == MBL_LANG_PYTHON ? "]\n" : "];\n", f);
}

static void put_names(emitter *E, const char *title, int n, char *const *names)
{
    fprintf(E->f, "%s %s:", E->lang == MBL_LANG_C ? " *" : E->lang == MBL_LANG_PYTHON ? "#" : "%", title);
    for (int i = 0; i < n; i++) fputc(' ', E->f), put_comment_text(E, names[i]);
    fputc('\n', E->f);
}

/* mark the nodes reachable from roots (clearing earlier marks) and check their symbols */
static int mark_set(emitter *E, size_t nroots, const mblx_id *roots, mblx_id *stack, mbl_status *st)
{
    const mblx_graph *g = E->sl->g;
    size_t nn = mblx_node_count(g);
    memset(E->mark, 0, nn);
    for (size_t i = 0; i < nroots; i++) mark_from(E, roots[i], stack);
    for (size_t e = 0; e < nn; e++) {
        if (!E->mark[e] || mblx_node_op(g, (mblx_id)e) != MBLX_OP_SYMBOL) continue;
        if (E->symrole[mblx_symbol_index(g, (mblx_id)e)] < 0)
            return mbl_error(st, MBL_EARG, "codegen: unexpected symbol %s", mblx_symbol_name(g, (mblx_id)e));
    }
    return 0;
}

/* one statement per marked operation, in handle order (operands first) */
static int emit_marked(emitter *E, mbl_status *st)
{
    const mblx_graph *g = E->sl->g;
    size_t nn = mblx_node_count(g);
    int rc = 0;
    for (size_t e = 0; e < nn && !rc; e++) {
        if (!E->mark[e]) continue;
        mblx_op op = mblx_node_op(g, (mblx_id)e);
        if (op == MBLX_OP_CONST || op == MBLX_OP_SYMBOL) continue;
        rc = emit_node(E, (mblx_id)e, st);
    }
    return rc;
}

/* the name of Newton unknown a (C/Python: q[i], lam[j]; Octave: q(i+1), lam(j+1)) */
static void put_unknown(emitter *E, int a)
{
    int u = E->sl->nunk[a], n = E->sl->n;
    const char *arr = u < n ? "q" : "lam";
    int idx = u < n ? u : u - n;
    if (E->lang == MBL_LANG_OCTAVE) fprintf(E->f, "%s(%d)", arr, idx + 1);
    else fprintf(E->f, "%s[%d]", arr, idx);
}

/* the multipliers' first guess: lambda(q) of the linear model (exact for the guess q) */
static int emit_lam_guess(emitter *E, mblx_id *stack, mbl_status *st)
{
    const mbl_symlin *sl = E->sl;
    int rc = mark_set(E, (size_t)sl->m, sl->lam, stack, st);
    if (!rc) rc = emit_marked(E, st);
    for (int j = 0; j < sl->m && !rc; j++) {
        if (E->lang == MBL_LANG_OCTAVE) fprintf(E->f, "%slam(%d) = ", E->ind, j + 1);
        else fprintf(E->f, "%slam[%d] = ", E->ind, j);
        put_ref(E, sl->lam[j]);
        fputs(E->lang == MBL_LANG_PYTHON ? "\n" : ";\n", E->f);
    }
    return rc;
}

/* the Newton iteration's function (docs/symbolic.md): residual and Jacobian (Python, Octave: NumPy's
 * solve, backslash) or the step as straight-line expressions of a symbolic elimination (C) */
static int emit_newton(emitter *E, const char *name, mblx_id *stack, mbl_status *st)
{
    const mbl_symlin *sl = E->sl;
    FILE *f = E->f;
    int nn = sl->nn, mv = sl->moving;
    size_t nroots = (size_t)nn + (E->lang == MBL_LANG_C ? 0 : (size_t)nn * nn);
    mblx_id *roots = mbl_alloc_array(nroots + 1, sizeof *roots);
    if (!roots) return mbl_error(st, MBL_ENOMEM, "out of memory");
    if (E->lang == MBL_LANG_C) memcpy(roots, sl->nstep, (size_t)nn * sizeof *roots);
    else {
        memcpy(roots, sl->nres, (size_t)nn * sizeof *roots);
        memcpy(roots + nn, sl->njac, (size_t)nn * nn * sizeof *roots);
    }
    int rc = 0;
    const char *kind = sl->at == MBL_AT_STEADY ? "steady motion (the velocities v kept, vdot = 0)"
                                               : "equilibrium (v = 0, vdot = 0)";
    if (E->lang == MBL_LANG_C) {
        fprintf(f, "\n/* Newton iteration for the operating point, a %s: q holds the guess on entry (its\n"
                   " * coordinates that the iteration does not solve for are kept) and the point on return, lam the\n"
                   " * multipliers (%d). Returns the number of iterations, or -1 without convergence (%d iterations). */\n",
                kind, sl->m, 50);
        fprintf(f, "int %s_newton(const double *p, const double *r, %sdouble *q, double *lam)\n{\n", name,
                mv ? "const double *v, " : "");
        fprintf(f, "    (void)p; (void)r; (void)q; (void)lam;%s\n", mv ? " (void)v;" : "");
        E->ind = "    ";
        rc = emit_lam_guess(E, stack, st);
        if (!rc) rc = mark_set(E, nroots, roots, stack, st);
        fprintf(f, "    for (int it = 1; it <= 50; it++) {\n");
        E->ind = "        ";
        if (!rc) rc = emit_marked(E, st);
        fprintf(f, "        double dx[%d];\n", nn);
        for (int a = 0; a < nn && !rc; a++) {
            fprintf(f, "        dx[%d] = ", a);
            put_ref(E, sl->nstep[a]);
            fputs(";\n", f);
        }
        fputs("        int done = 1;\n", f);
        for (int a = 0; a < nn; a++) {
            fputs("        ", f);
            put_unknown(E, a);
            fprintf(f, " += dx[%d];\n        done &= fabs(dx[%d]) <= 1e-10 * (1.0 + fabs(", a, a);
            put_unknown(E, a);
            fputs("));\n", f);
        }
        fputs("        if (done) return it;\n    }\n    return -1;\n}\n", f);
    } else if (E->lang == MBL_LANG_PYTHON) {
        fprintf(f, "\n\ndef %s_newton(p=None, r=None, q=None, %stol=1e-10, maxit=50):\n"
                   "    \"\"\"Newton iteration for the operating point, a %s, from the guess q\n"
                   "    (None: the model's point); returns (q, lam, iterations) (NumPy's solve).\"\"\"\n"
                   "    p = %s_P if p is None else [float(x) for x in p]\n"
                   "    r = %s_R if r is None else [float(x) for x in r]\n",
                name, mv ? "v=None, " : "", kind, name, name);
        if (mv) fprintf(f, "    v = %s_V if v is None else [float(x) for x in v]\n", name);
        fprintf(f, "    q = list(%s_Q if q is None else [float(x) for x in q])\n    lam = [0.0] * %d\n", name, sl->m);
        E->ind = "    ";
        rc = emit_lam_guess(E, stack, st);
        if (!rc) rc = mark_set(E, nroots, roots, stack, st);
        fprintf(f, "    for it in range(1, maxit + 1):\n");
        E->ind = "        ";
        if (!rc) rc = emit_marked(E, st);
        fprintf(f, "        res = np.zeros(%d)\n        jac = np.zeros((%d, %d))\n", nn, nn, nn);
        for (int a = 0; a < nn; a++) {
            fprintf(f, "        res[%d] = ", a);
            put_ref(E, sl->nres[a]);
            fputc('\n', f);
        }
        for (int b = 0; b < nn; b++)
            for (int a = 0; a < nn; a++) {
                mblx_id e = sl->njac[a + (size_t)b * nn];
                double v;
                if (mblx_is_const(sl->g, e, &v) && v == 0.0) continue;
                fprintf(f, "        jac[%d, %d] = ", a, b);
                put_ref(E, e);
                fputc('\n', f);
            }
        fputs("        dx = np.linalg.solve(jac, -res)\n        done = True\n", f);
        for (int a = 0; a < nn; a++) {
            fputs("        ", f);
            put_unknown(E, a);
            fprintf(f, " += float(dx[%d])\n        done = done and abs(dx[%d]) <= tol * (1.0 + abs(", a, a);
            put_unknown(E, a);
            fputs("))\n", f);
        }
        fprintf(f, "        if done:\n            return q, lam, it\n"
                   "    raise RuntimeError(\"%s_newton: no convergence in %%d iterations\" %% maxit)\n", name);
    } else {
        fprintf(f, "\nfunction [q, lam, its] = %s_newton(p, r, q%s)\n"
                   "  %% Newton iteration for the operating point, a %s, from the guess q (backslash).\n",
                name, mv ? ", v" : "", kind);
        fputs("  step_ = @(x, x0, h0, x1, h1) (x <= x0) .* h0 + (x >= x1) .* h1 + (x > x0 & x < x1) .* "
              "(h0 + (h1 - h0) .* ((x - x0) ./ (x1 - x0)).^2 .* (3 - 2 .* (x - x0) ./ (x1 - x0)));\n", f);
        fprintf(f, "  lam = zeros(%d, 1);\n  its = -1;\n", sl->m);
        E->ind = "  ";
        rc = emit_lam_guess(E, stack, st);
        if (!rc) rc = mark_set(E, nroots, roots, stack, st);
        fputs("  for it = 1:50\n", f);
        E->ind = "    ";
        if (!rc) rc = emit_marked(E, st);
        fprintf(f, "    res = zeros(%d, 1);\n    jac = zeros(%d, %d);\n", nn, nn, nn);
        for (int a = 0; a < nn; a++) {
            fprintf(f, "    res(%d) = ", a + 1);
            put_ref(E, sl->nres[a]);
            fputs(";\n", f);
        }
        for (int b = 0; b < nn; b++)
            for (int a = 0; a < nn; a++) {
                mblx_id e = sl->njac[a + (size_t)b * nn];
                double v;
                if (mblx_is_const(sl->g, e, &v) && v == 0.0) continue;
                fprintf(f, "    jac(%d, %d) = ", a + 1, b + 1);
                put_ref(E, e);
                fputs(";\n", f);
            }
        fputs("    dx = -(jac \\ res);\n    done = true;\n", f);
        for (int a = 0; a < nn; a++) {
            fputs("    ", f);
            put_unknown(E, a);
            fprintf(f, " = ");
            put_unknown(E, a);
            fprintf(f, " + dx(%d);\n    done = done && abs(dx(%d)) <= 1e-10 * (1 + abs(", a + 1, a + 1);
            put_unknown(E, a);
            fputs("));\n", f);
        }
        fprintf(f, "    if done\n      its = it;\n      return;\n    end\n  end\n"
                   "  error('%s_newton: no convergence in 50 iterations');\nend\n", name);
    }
    mbl_free(roots);
    return rc;
}

/* Functions of data (spline, table, spline2): generated code has no data tables (issue 35). */
static int refuse_data(const mblx_graph *g, mbl_status *st)
{
    size_t nn = mblx_node_count(g);
    for (size_t e = 0; e < nn; e++) {
        long k;
        int lin, dim;
        if (!mblx_data_node(g, (mblx_id)e, &k, &lin, NULL, NULL)) continue;
        const char *dn = mblx_data_name(g, k, &dim);
        return mbl_error(st, MBL_EMODEL, "codegen: the model uses %s(%s, ...), a function of data, which generated code "
                         "does not support (mblin linearize and mblin symbolic do)", dim == 2 ? "spline2" : lin ? "table" : "spline",
                         dn ? dn : "?");
    }
    return 0;
}

int mbl_codegen(const mbl_symlin *sl, mbl_lang lang, const char *name, const char *model_file, FILE *f,
                mbl_status *st)
{
    const mblx_graph *g = sl->g;
    size_t nn = mblx_node_count(g), ns = mblx_symbol_count(g);
    emitter E = {sl, lang, f, mbl_alloc_array(ns + 1, sizeof(long)), mbl_calloc(nn + 1, 1), "    "};
    mblx_id *stack = mbl_alloc_array(nn + 1, sizeof *stack);
    const char *mname[] = {"A", "B", "C", "D", "M", "Cd", "K", "F"};
    const mblx_id *mats[] = {sl->A, sl->B, sl->C, sl->D, sl->M, sl->Cd, sl->K, sl->F};
    int rows[] = {sl->nx, sl->nx, sl->ny, sl->ny, sl->z, sl->z, sl->z, sl->z};
    int cols[] = {sl->nx, sl->nr, sl->nx, sl->nr, sl->z, sl->z, sl->z, sl->nr};
    size_t nroots = 0;
    for (int k = 0; k < 8; k++) nroots += (size_t)rows[k] * cols[k];
    mblx_id *roots = mbl_alloc_array(nroots + 1, sizeof *roots);
    int rc = 0, mv = sl->moving, nw = sl->nn > 0, nq = sl->nq > sl->n ? sl->nq : sl->n; /* q: with X, Z */
    const char *why = mbl_codegen_name_check(lang, name);
    if (why) {
        rc = mbl_error(st, MBL_EARG, "codegen: the name '%.60s' %s", name ? name : "", why);
        goto out;
    }
    if (!E.symrole || !E.mark || !stack || !roots || (rc = refuse_data(g, st))) {
        if (!rc) rc = mbl_error(st, MBL_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < ns; i++) E.symrole[i] = -1;
    for (int i = 0; i < sl->np; i++) E.symrole[mblx_symbol_index(g, sl->p[i])] = i;
    for (int i = 0; i < nq; i++) E.symrole[mblx_symbol_index(g, sl->q[i])] = sl->np + i;
    for (int i = 0; i < sl->nr; i++) E.symrole[mblx_symbol_index(g, sl->r[i])] = sl->np + nq + i;
    if (mv)
        for (int i = 0; i < sl->n; i++) E.symrole[mblx_symbol_index(g, sl->v[i])] = sl->np + nq + sl->nr + i;
    if (nw)
        for (int j = 0; j < sl->m; j++)
            E.symrole[mblx_symbol_index(g, sl->lsym[j])] = sl->np + nq + sl->n + sl->nr + j;
    nroots = 0;
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < rows[k] * cols[k]; i++) roots[nroots++] = mats[k][i];
    /* the matrices must not use the multipliers (only the Newton iteration does) */
    if (nw)
        for (int j = 0; j < sl->m; j++) E.symrole[mblx_symbol_index(g, sl->lsym[j])] = -1;
    rc = mark_set(&E, nroots, roots, stack, st);
    if (rc) goto out;
    if (nw)
        for (int j = 0; j < sl->m; j++)
            E.symrole[mblx_symbol_index(g, sl->lsym[j])] = sl->np + nq + sl->n + sl->nr + j;
    const char *cm = lang == MBL_LANG_C ? " *" : lang == MBL_LANG_PYTHON ? "#" : "%";
    const char *vin = mv ? ", v" : "";
    /* header */
    if (lang == MBL_LANG_C) fputs("/* ", f);
    else if (lang == MBL_LANG_OCTAVE)
        fprintf(f, "function [A, B, C, D, M, Cd, K, F%s] = %s(p, q, r%s)\n", nw ? ", q, lam, its" : "", name, vin);
    fputs(lang == MBL_LANG_C ? "" : lang == MBL_LANG_PYTHON ? "# " : "% ", f);
    put_title_name(&E, name);
    fputs(": linear model of ", f);
    put_comment_text(&E, model_file ? model_file : "a model");
    fprintf(f, ", generated by mblin codegen (source 002 reduction%s).\n", mv ? " at a point with motion" : " at rest");
    fprintf(f, "%s x' = A x + B u, y = C x + D u;  M S'' + Cd S' + K S = F u.  Matrices column-major%s.\n", cm,
            lang == MBL_LANG_C ? " (A[i + j*nx])" : "");
    fprintf(f, "%s Arguments: parameter values p, coordinates q of the operating point%s, inputs r%s.\n", cm,
            mv ? "" : " (at rest)", mv ? ", velocities v of the point" : "");
    if (nq > sl->n)
        fprintf(f, "%s q holds the coordinates, then the user ODE states and implicit variables at the point.\n", cm);
    if (nw && lang == MBL_LANG_OCTAVE)
        fputs("% q is the guess of the Newton iteration (its point is returned as q, with the multipliers lam and\n"
              "% the iterations its); the matrices are at that point.\n", f);
    put_names(&E, "p", sl->np, sl->pname);
    put_names(&E, "q", nq, sl->qname);
    put_names(&E, "r", sl->nr, sl->rname);
    put_names(&E, "x", sl->nx, sl->state_names);
    put_names(&E, "y", sl->ny, sl->yname);
    if (lang == MBL_LANG_C) {
        fputs(" */\n#include <math.h>\n\n", f);
        fprintf(f, "enum { %s_NP = %d, %s_NQ = %d, %s_NR = %d, %s_NX = %d, %s_NY = %d, %s_NZ = %d, %s_NL = %d };\n",
                name, sl->np, name, nq, name, sl->nr, name, sl->nx, name, sl->ny, name, sl->z, name, sl->m);
        put_values(&E, name, "P", sl->np, sl->pval);
        put_values(&E, name, "Q", nq, sl->qval);
        put_values(&E, name, "R", sl->nr, sl->rval);
        if (mv) put_values(&E, name, "V", sl->n, sl->vval);
        fputs("\nstatic double mbl_gen_sign(double x) { return (double)((x > 0) - (x < 0)); }\n"
              "static double mbl_gen_step(double x, double x0, double h0, double x1, double h1)\n{\n"
              "    if (x <= x0) return h0;\n    if (x >= x1) return h1;\n"
              "    double s = (x - x0) / (x1 - x0);\n    return h0 + (h1 - h0) * s * s * (3.0 - 2.0 * s);\n}\n\n",
              f);
        fprintf(f, "void %s(const double *p, const double *q, %sconst double *r, double *A, double *B, double *C,\n"
                   "        double *D, double *M, double *Cd, double *K, double *F)\n{\n"
                   "    (void)p; (void)q; (void)r; (void)mbl_gen_sign; (void)mbl_gen_step;%s\n",
                name, mv ? "const double *v, " : "", mv ? " (void)v;" : "");
    } else if (lang == MBL_LANG_PYTHON) {
        fputs("import math\n\nimport numpy as np\n\n", f);
        put_values(&E, name, "P", sl->np, sl->pval);
        put_values(&E, name, "Q", nq, sl->qval);
        put_values(&E, name, "R", sl->nr, sl->rval);
        if (mv) put_values(&E, name, "V", sl->n, sl->vval);
        fputs("\n\ndef _sign(x):\n    return float((x > 0) - (x < 0))\n\n\n"
              "def _step(x, x0, h0, x1, h1):\n    if x <= x0:\n        return h0\n    if x >= x1:\n        return h1\n"
              "    s = (x - x0) / (x1 - x0)\n    return h0 + (h1 - h0) * s * s * (3.0 - 2.0 * s)\n\n\n", f);
        fprintf(f, "def %s(p=None, q=None, r=None%s):\n"
                   "    \"\"\"A, B, C, D, M, Cd, K, F (NumPy arrays) at parameters p, point q, inputs r%s\n"
                   "    (None: the model's values).\"\"\"\n"
                   "    p = %s_P if p is None else [float(x) for x in p]\n"
                   "    q = %s_Q if q is None else [float(x) for x in q]\n"
                   "    r = %s_R if r is None else [float(x) for x in r]\n",
                name, mv ? ", v=None" : "", mv ? ", velocities v" : "", name, name, name);
        if (mv) fprintf(f, "    v = %s_V if v is None else [float(x) for x in v]\n", name);
    } else {
        fputs("% Arguments omitted: the model's values.\n", f);
        fputs("  if nargin < 1 || isempty(p)\n", f);
        put_values(&E, name, "p", sl->np, sl->pval);
        fputs("  end\n  if nargin < 2 || isempty(q)\n", f);
        put_values(&E, name, "q", nq, sl->qval);
        fputs("  end\n  if nargin < 3 || isempty(r)\n", f);
        put_values(&E, name, "r", sl->nr, sl->rval);
        fputs("  end\n", f);
        if (mv) {
            fputs("  if nargin < 4 || isempty(v)\n", f);
            put_values(&E, name, "v", sl->n, sl->vval);
            fputs("  end\n", f);
        }
        if (nw) fprintf(f, "  [q, lam, its] = %s_newton(p, r, q%s);\n", name, vin);
        fputs("  step_ = @(x, x0, h0, x1, h1) (x <= x0) .* h0 + (x >= x1) .* h1 + (x > x0 & x < x1) .* "
              "(h0 + (h1 - h0) .* ((x - x0) ./ (x1 - x0)).^2 .* (3 - 2 .* (x - x0) ./ (x1 - x0)));\n", f);
    }
    E.ind = "    ";
    rc = emit_marked(&E, st);
    for (int k = 0; k < 8 && !rc; k++) {
        int rr = rows[k], cc = cols[k];
        if (lang == MBL_LANG_C) fprintf(f, "    for (int i = 0; i < %d; i++) %s[i] = 0.0;\n", rr * cc, mname[k]);
        else if (lang == MBL_LANG_PYTHON) fprintf(f, "    %s = np.zeros((%d, %d))\n", mname[k], rr, cc);
        else fprintf(f, "  %s = zeros(%d, %d);\n", mname[k], rr, cc);
        for (int j = 0; j < cc; j++)
            for (int i = 0; i < rr; i++) {
                mblx_id e = mats[k][i + (size_t)j * rr];
                double v;
                if (mblx_is_const(g, e, &v) && v == 0.0) continue;
                if (lang == MBL_LANG_C) fprintf(f, "    %s[%d] = ", mname[k], i + j * rr);
                else if (lang == MBL_LANG_PYTHON) fprintf(f, "    %s[%d, %d] = ", mname[k], i, j);
                else fprintf(f, "  %s(%d, %d) = ", mname[k], i + 1, j + 1);
                put_ref(&E, e);
                fputs(lang == MBL_LANG_PYTHON ? "\n" : ";\n", f);
            }
    }
    if (!rc) {
        if (lang == MBL_LANG_C) fputs("}\n", f);
        else if (lang == MBL_LANG_PYTHON)
            fputs("    return {\"A\": A, \"B\": B, \"C\": C, \"D\": D, \"M\": M, \"Cd\": Cd, \"K\": K, \"F\": F}\n", f);
        else fputs("end\n", f);
    }
    if (!rc && nw) rc = emit_newton(&E, name, stack, st);
    if (!rc && ferror(f)) rc = mbl_error(st, MBL_EIO, "codegen: write error");
out:
    mbl_free(E.symrole), mbl_free(E.mark), mbl_free(stack), mbl_free(roots);
    return rc;
}
