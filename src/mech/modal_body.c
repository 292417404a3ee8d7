/* The modal body of `model: mechanism` (planar): a flexible body given by an FE code's reduced
 * matrices in a floating frame of reference, the way an Adams user brings an MNF.
 *
 *   link2:
 *     type: modal
 *     position: [0, -4]   angle: -pi/2     (the floating frame, as for a rigid body; also its
 *     velocity: [0, 0]    angular_velocity: 0         initial velocities, optional)
 *     mass: 424.115       s0: [848.23, 0]  J0: 2261.9   (m, int rho u0, int rho |u0|^2)
 *     mass_matrix: link_M.mtx   stiffness: link_K.mtx    (nm x nm: Mff, K of the modal coordinates)
 *     Sb: link_Sb.mtx  c1: link_c1.mtx  c2: link_c2.mtx  P: link_P.mtx   (the invariants, model/ffr.h)
 *     damping: {alpha: 0, beta: 0}
 *     markers:
 *       o:   {position: [0, 0], shapes: link_node1.mtx}   (3 x nm: u, v, phi of the node per mode)
 *
 * Matrix Market files (read by CHOLMOD's reader), paths relative to the model file. Coordinates
 * <b>_x, <b>_y, <b>_th and the modal coordinates <b>_eta1 .. <b>_eta<nm>. The invariants are
 * those of model/ffr.h with S the mode shapes (Sb = int rho S, c1 = int rho S^T u0, c2 = int rho
 * S^T Jt u0, Mff = int rho S^T S, P = int rho S^T Jt S): an FE code computes them from its mass
 * matrix (examples/beam_to_modal.py does it for the project's beam elements).
 *
 * Optional preload (geometric) stiffness, nm x nm files of the FE code's geometric stiffness
 * Phi^T K_G(sigma) Phi per unit load, sigma the stresses of the body clamped to its frame:
 *     geometric_stiffness: {ax: Gax.mtx, ay: Gay.mtx, wdot: Gwd.mtx, w2: Gw2.mtx}
 * under the body force -rho e_x (ax), -rho e_y (ay), -rho Jt u0 (wdot) and rho u0 (w2), the loads of a
 * unit frame acceleration, angular acceleration and angular velocity squared; at the point
 * KG = ax Gax + ay Gay + wdot Gwd + w2 Gw2 with (ax, ay) = A^T (R'' - g), wdot = th'', w2 = th'^2
 * (model/ffr.h's H1 = -Gax, Hy = -Gay, Ha = Gwd, Hx = Gw2). A marker may add
 *     geometric_stiffness: {fx: Gfx.mtx, fy: Gfy.mtx}
 * per unit force at the marker along the frame's x and y: its point then sits at
 * u = X + S eta - 1/2 (eta^T Gfx eta, eta^T Gfy eta), so a joint's reaction or a force element at
 * the marker does its work on the quadratic term (as a beam marker's foreshortening). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "mech/mech_internal.h"
#include "model/ffr.h"

#ifdef MBLIN_WITH_GPL
#include <cholmod.h>
#endif

/* A geometric stiffness file must be symmetric to this fraction of its largest entry (an FE code's
 * K_G is; rounding in its projection onto the modes stays far below). */
#define MODAL_GEO_SYM_TOL 1e-9

char *mech_rel_path(mech *M, const char *name)
{
    if (name[0] == '/' || !M->file) return mech_fmt(M, "%s", name);
    const char *slash = strrchr(M->file, '/');
    if (!slash) return mech_fmt(M, "%s", name);
    return mech_fmt(M, "%.*s/%s", (int)(slash - M->file), M->file, name);
}

#ifdef MBLIN_WITH_GPL
/* ---- the Matrix Market header, checked before CHOLMOD reads the file ---- */

/* The limits of a modal body's file: a line of at most 1024 characters (the Matrix Market
 * specification's), a matrix of at most 2^24 entries (4096 modes: 128 MiB dense). */
#define MTX_LINE_MAX 1024
#define MTX_MAX_ENTRIES (1L << 24)

typedef struct {
    mech *M;
    const yaml_node_t *n;
    const char *what, *path;
    FILE *f;
    int line;
    char buf[MTX_LINE_MAX + 3];
} mtx_in;

/* the next line that is not blank or a comment (1), the end (0), or an error (-1, reported) */
static int mtx_next(mtx_in *in, int keep_comments, int *rc)
{
    while (fgets(in->buf, sizeof in->buf, in->f)) {
        in->line++;
        size_t l = strlen(in->buf);
        if (l && in->buf[l - 1] != '\n' && !feof(in->f)) {
            *rc = err_at(in->M, in->n, "%s: %s:%d: a line longer than %d characters", in->what, in->path, in->line, MTX_LINE_MAX);
            return -1;
        }
        const char *p = in->buf + strspn(in->buf, " \t\r\n");
        if (keep_comments || (*p && *p != '%')) return 1;
    }
    return 0;
}

/* whole numbers of the size line: count of them, -1 when one is not a whole number */
static int mtx_ints(const char *p, long v[4])
{
    int k = 0;
    for (;;) {
        p += strspn(p, " \t\r\n");
        if (!*p) return k;
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || k == 4 || (*end && !strchr(" \t\r\n", *end))) return -1;
        v[k++] = x;
        p = end;
    }
}

/* what is wrong with the entry line p ("i j value", "i j" of a pattern, "value" of an array), or
 * NULL; *col: the column of the number at fault (1: the line's). An integer matrix's values are
 * whole numbers written as such (the banner's field: `1.5` under `integer` is refused). */
static const char *mtx_entry_bad(const char *p, int coord, int pattern, int integer, long rows, long cols, int *col)
{
    int want = coord ? (pattern ? 2 : 3) : 1, k = 0;
    const char *p0 = p;
    *col = 1;
    for (;; k++) {
        p += strspn(p, " \t\r\n");
        if (!*p) break;
        *col = (int)(p - p0) + 1;
        if (k == want) return "too many numbers on the line";
        char *end;
        if (coord && k < 2) {
            long i = strtol(p, &end, 10);
            if (end == p || (*end && !strchr(" \t\r\n", *end))) return "the row and column must be whole numbers";
            if (i < 1 || i > (k ? cols : rows)) return k ? "the column is outside the matrix" : "the row is outside the matrix";
        } else {
            double x = strtod(p, &end);
            if (end == p || (*end && !strchr(" \t\r\n", *end))) return "not a number";
            if (!isfinite(x)) return "a non-finite number";
            size_t sg = (*p == '+' || *p == '-'), nd = strspn(p + sg, "0123456789");
            if (integer && p + sg + nd != end) return "not a whole number, and the banner says 'integer'";
        }
        p = end;
    }
    return k < want ? (coord ? (pattern ? "an entry is 'row column'" : "an entry is 'row column value'") : "no value") : NULL;
}

/* The file at path is a regular file whose banner and size line are those of a real (integer,
 * pattern) matrix of the expected size (*rows, *cols: 0 takes the file's), with as many entries
 * as its header says; errors name the file and line. */
static int mtx_check(mech *M, const yaml_node_t *n, const char *what, const char *path, int *rows, int *cols)
{
    struct stat sb;
    if (stat(path, &sb)) return err_at(M, n, "%s: cannot open '%s'", what, path);
    if (!S_ISREG(sb.st_mode)) return err_at(M, n, "%s: '%s' is not a regular file", what, path);
    mtx_in in = {M, n, what, path, fopen(path, "r"), 0, ""};
    if (!in.f) return err_at(M, n, "%s: cannot open '%s'", what, path);
    int rc = 0, got = mtx_next(&in, 1, &rc);
    char obj[16] = "", fmt[16] = "", field[16] = "", sym[16] = "";
    /* the banner's first characters exactly: sscanf's "%%" would skip white space before each '%' */
    if (!rc && (got <= 0 || strncmp(in.buf, "%%MatrixMarket", 14) ||
                sscanf(in.buf + 14, "%15s %15s %15s %15s", obj, fmt, field, sym) != 4 ||
                strcasecmp(obj, "matrix") || (strcasecmp(fmt, "array") && strcasecmp(fmt, "coordinate"))))
        rc = err_at(M, n, "%s: %s:1: not a Matrix Market banner ('%%%%MatrixMarket matrix array|coordinate real general')", what, path);
    int coord = !strcasecmp(fmt, "coordinate");
    int kind = !strcasecmp(sym, "general") ? 0 : !strcasecmp(sym, "symmetric") ? 1 : !strcasecmp(sym, "skew-symmetric") ? 2 : -1;
    if (!rc && ((strcasecmp(field, "real") && strcasecmp(field, "integer") && (!coord || strcasecmp(field, "pattern"))) || kind < 0))
        rc = err_at(M, n, "%s: %s:1: a %s %s matrix: a modal body needs a real general, symmetric or skew-symmetric one", what, path,
                    field, sym);
    long v[4] = {0, 0, 0, 0};
    int nv = 0;
    if (!rc && (got = mtx_next(&in, 0, &rc)) <= 0 && !rc) rc = err_at(M, n, "%s: %s:%d: the size line is missing", what, path, in.line);
    if (!rc && (nv = mtx_ints(in.buf, v)) != 2 + coord)
        rc = err_at(M, n, "%s: %s:%d: the size line must be %s", what, path, in.line, coord ? "'rows cols entries'" : "'rows cols'");
    if (!rc && (v[0] < 1 || v[1] < 1 || v[0] > MTX_MAX_ENTRIES || v[1] > MTX_MAX_ENTRIES || v[0] * v[1] > MTX_MAX_ENTRIES))
        rc = err_at(M, n, "%s: %s:%d: the size %ld x %ld must be at least 1 x 1 and at most %ld entries", what, path, in.line, v[0],
                    v[1], MTX_MAX_ENTRIES);
    if (!rc && kind && v[0] != v[1]) rc = err_at(M, n, "%s: %s:%d: a %s matrix must be square", what, path, in.line, sym);
    if (!rc && ((*rows && v[0] != *rows) || (*cols && v[1] != *cols)))
        rc = err_at(M, n, "%s: %s:%d: the matrix is %ld x %ld, expected %d x %d", what, path, in.line, v[0], v[1],
                    *rows ? *rows : (int)v[0], *cols ? *cols : (int)v[1]);
    if (!rc && coord && (v[2] < 0 || v[2] > v[0] * v[1]))
        rc = err_at(M, n, "%s: %s:%d: %ld entries in a %ld x %ld matrix", what, path, in.line, v[2], v[0], v[1]);
    /* (the sizes are checked: no overflow) */
    long want = rc ? 0 : coord ? v[2] : kind == 0 ? v[0] * v[1] : kind == 1 ? v[0] * (v[0] + 1) / 2 : v[0] * (v[0] - 1) / 2, have = 0;
    int size_line = in.line;
    int pattern = !strcasecmp(field, "pattern"), integer = !strcasecmp(field, "integer"), col;
    while (!rc && (got = mtx_next(&in, 0, &rc)) > 0) {
        const char *bad = mtx_entry_bad(in.buf, coord, pattern, integer, v[0], v[1], &col);
        if (++have > want)
            rc = err_at(M, n, "%s: %s:%d: more entries than the %ld of the size line (line %d)", what, path, in.line, want, size_line);
        else if (bad) rc = err_at(M, n, "%s: %s:%d:%d: %s", what, path, in.line, col, bad);
    }
    if (!rc && have < want)
        rc = err_at(M, n, "%s: %s:%d: the file ends after %ld of the %ld entries of the size line (line %d)", what, path, in.line, have,
                    want, size_line);
    if (!rc && ferror(in.f)) rc = err_at(M, n, "%s: %s: a read error", what, path);
    fclose(in.f);
    (void)nv;
    return rc;
}
#endif

/* Read a real Matrix Market file into a dense column-major array (rows x cols checked, or taken
 * from the file when *rows or *cols is 0). */
int mech_read_mtx(mech *M, const yaml_node_t *n, const char *what, int *rows, int *cols, double **out)
{
    *out = NULL;
    if (!mech_is_scalar(n) || !n->data.scalar.length) return err_at(M, n, "%s must be a file name (Matrix Market)", what);
#ifdef MBLIN_WITH_GPL
    const char *path = mech_rel_path(M, mech_sc(n));
    if (M->oom) return mech_oom(M);
    int rc = mtx_check(M, n, what, path, rows, cols);
    if (rc) return rc;
    FILE *f = fopen(path, "r");
    if (!f) return err_at(M, n, "%s: cannot open '%s'", what, path);
    cholmod_common c;
    cholmod_start(&c);
    c.print = 0;
    c.error_handler = NULL;
    int stype = 0;
    void *x = cholmod_read_matrix(f, 1, &stype, &c);
    fclose(f);
    if (!x) {
        rc = err_at(M, n, "%s: '%s' is not a readable Matrix Market file (CHOLMOD status %d)", what, path, c.status);
    } else {
        cholmod_sparse *S = NULL;
        cholmod_dense *D = NULL;
        if (stype == CHOLMOD_DENSE) D = x;
        else if (stype == CHOLMOD_SPARSE) S = x;
        else rc = err_at(M, n, "%s: '%s' holds a triplet matrix CHOLMOD could not convert", what, path);
        int nr = S ? (int)S->nrow : D ? (int)D->nrow : 0, nc = S ? (int)S->ncol : D ? (int)D->ncol : 0;
        int xt = S ? S->xtype : D ? D->xtype : CHOLMOD_REAL;
        if (!rc && xt != CHOLMOD_REAL) rc = err_at(M, n, "%s: '%s' must hold a real matrix", what, path);
        if (!rc && ((*rows && nr != *rows) || (*cols && nc != *cols)))
            rc = err_at(M, n, "%s: '%s' is %d x %d, expected %d x %d", what, path, nr, nc, *rows ? *rows : nr,
                        *cols ? *cols : nc);
        double *A = rc ? NULL : mbl_calloc((size_t)nr * nc + 1, sizeof *A);
        if (!rc && !A) rc = mech_oom(M);
        if (!rc && D) memcpy(A, D->x, (size_t)nr * nc * sizeof *A);
        if (!rc && S) {
            const int *p = S->p, *i = S->i;
            const double *v = S->x;
            for (int j = 0; j < nc; j++)
                for (int q = p[j]; q < p[j + 1]; q++) {
                    A[i[q] + (size_t)nr * j] += v[q];
                    /* a symmetric file stores one triangle */
                    if (S->stype != 0 && i[q] != j) A[j + (size_t)nr * i[q]] += v[q];
                }
        }
        for (size_t k = 0; !rc && k < (size_t)nr * nc; k++)
            if (!isfinite(A[k])) rc = err_at(M, n, "%s: '%s' has a non-finite entry", what, path);
        if (rc) mbl_free(A);
        else *out = A, *rows = nr, *cols = nc;
        if (S) cholmod_free_sparse(&S, &c);
        if (D) cholmod_free_dense(&D, &c);
    }
    cholmod_finish(&c);
    return rc;
#else
    (void)rows, (void)cols;
    return err_at(M, n, "%s: modal bodies need the build with CHOLMOD (MBLIN_WITH_GPL=ON) to read Matrix Market", what);
#endif
}

static int mtx_key(mech *M, const yaml_node_t *val, const char *key, const char *what, int rows, int cols, double **out)
{
    yaml_node_t *n = mech_get(M, val, key);
    if (!n) return err_at(M, val, "%s: missing '%s' (a Matrix Market file)", what, key);
    char w[240];
    snprintf(w, sizeof w, "%s: %s", what, key);
    int r = rows, c = cols;
    return mech_read_mtx(M, n, w, &r, &c, out);
}

/* the number given by key; its text and place are kept as a factor of the invariants (fa, may be
 * NULL) for the sensitivities (model/ffr.h) */
static int num_key(mech *M, const yaml_node_t *val, const char *key, const char *what, double *out, mbl_ffr_factor *fa)
{
    yaml_node_t *n = mech_get(M, val, key);
    if (!n) return err_at(M, val, "%s: missing '%s'", what, key);
    const char *t;
    int rc = mech_text_of(M, n, key, &t);
    if (!rc) rc = mech_eval_text(M, t, n, key, out);
    if (!rc && fa) {
        fa->text = (char *)t, fa->value = *out;
        mech_pos_of(n, &fa->line, &fa->col);
    }
    return rc;
}

/* a geometric stiffness file (nm x nm, symmetric) read into *out (column-major) */
int mech_modal_geo_file(mech *M, const yaml_node_t *map, const char *key, const char *what, int nm, double **out)
{
    *out = NULL;
    yaml_node_t *n = mech_get(M, map, key);
    if (!n) return 0;
    char w[240];
    snprintf(w, sizeof w, "%s: geometric_stiffness: %s", what, key);
    int r = nm, c = nm, rc = mech_read_mtx(M, n, w, &r, &c, out);
    double big = 0, asym = 0;
    for (int i = 0; !rc && i < nm; i++)
        for (int j = 0; j < nm; j++) {
            double a = (*out)[i + (size_t)nm * j], b = (*out)[j + (size_t)nm * i];
            big = fmax(big, fabs(a)), asym = fmax(asym, fabs(a - b));
        }
    if (!rc && asym > MODAL_GEO_SYM_TOL * big)
        rc = err_at(M, n, "%s must be symmetric (relative deviation %.3g)", w, asym / big);
    if (rc) mbl_free(*out), *out = NULL;
    return rc;
}

/* The marker's geometric stiffness per unit force along the frame's x and y (gs: its map, or NULL):
 * kept in K->gk (mech_flex_apply: a force element's work on it), and the texts eta^T Gfx eta,
 * eta^T Gfy eta of its point's second-order shift (gq, "0" when absent). */
static int marker_geo(mech *M, const body *B, marker *K, const yaml_node_t *gs, const char *what, int nm, const char *gq[2])
{
    if (!gs) return 0;
    static const char *okg[] = {"fx", "fy", NULL};
    char w[400];
    snprintf(w, sizeof w, "%s: geometric_stiffness (files per unit force at the marker)", what);
    int rc = mech_want_map(M, gs, w);
    if (!rc) rc = mech_check_keys(M, gs, okg, w);
    for (int d = 0; d < 2 && !rc; d++) {
        double *G = NULL;
        if ((rc = mech_modal_geo_file(M, gs, okg[d], what, nm, &G)) || !G) continue;
        sbuf t = {0};
        mech_sb_add(M, &t, "", "0");
        for (int i = 0; i < nm; i++)
            for (int j = i; j < nm; j++) {
                double x = G[i + (size_t)nm * j] + (i != j ? G[j + (size_t)nm * i] : 0.0);
                if (x == 0) continue;
                mech_sb_add(M, &t, " + ", mech_fmt(M, "%s*%s_eta%d*%s_eta%d", mech_num(M, x), B->name, i + 1, B->name, j + 1));
            }
        gq[d] = mech_sb_done(M, &t);
        if (!mech_keep(M, (char *)G)) rc = mech_oom(M);
        else K->gk[d] = G;
        if (M->oom) rc = mech_oom(M);
    }
    return rc;
}

/* markers of a modal body: position [X, Y] in the undeformed body frame and the node's shapes (3 x nm) */
static int modal_markers(mech *M, int bi, const yaml_node_t *mks, int nm)
{
    if (!mks || (mks->type == YAML_SCALAR_NODE && mks->data.scalar.length == 0)) return 0;
    char what[200];
    snprintf(what, sizeof what, "markers of body '%s'", M->b[bi].name);
    int rc = mech_want_map(M, mks, what);
    for (yaml_node_pair_t *p = mks->data.mapping.pairs.start; !rc && p < mks->data.mapping.pairs.top; p++) {
        yaml_node_t *key = mech_node(M->doc, p->key), *val = mech_node(M->doc, p->value);
        body *B = &M->b[bi];
        static const char *ok[] = {"position", "shapes", "angle", "geometric_stiffness", NULL};
        if ((rc = mech_flex_marker_key(M, B, key, val, ok, what, sizeof what))) return rc;
        const char *name = mech_sc(key);
        const char *X[2] = {"0", "0"}, *ang = "0";
        yaml_node_t *pn = mech_get(M, val, "position"), *an = mech_get(M, val, "angle"), *sh = mech_get(M, val, "shapes");
        if (pn && (rc = mech_vec_of(M, pn, 2, "position", X))) return rc;
        if (an && (rc = mech_text_of(M, an, "marker angle", &ang))) return rc;
        if (!sh) return err_at(M, val, "%s: missing 'shapes' (3 x %d: u, v, phi of the point per modal coordinate)", what, nm);
        double *S = NULL;
        int r = 3, c = nm;
        char w[240];
        snprintf(w, sizeof w, "%s: shapes", what);
        if ((rc = mech_read_mtx(M, sh, w, &r, &c, &S))) return rc;
        if (!mech_keep(M, (char *)S)) return mech_oom(M);
        marker *K;
        if ((rc = mech_new_marker(M, name, bi, key, &K))) return rc;
        K->shape = S;
        const char *gq[2] = {"0", "0"};
        if ((rc = marker_geo(M, B, K, mech_get(M, val, "geometric_stiffness"), what, nm, gq))) return rc;
        /* the deformation of the point: sums over the modal coordinates */
        sbuf du = {0}, dv = {0}, dp = {0};
        mech_sb_add(M, &du, "", "0"), mech_sb_add(M, &dv, "", "0"), mech_sb_add(M, &dp, "", "0");
        for (int k = 0; k < nm; k++) {
            const char *eta = mech_fmt(M, "%s_eta%d", B->name, k + 1);
            if (S[3 * k] != 0) mech_sb_add(M, &du, " + ", mech_fmt(M, "%s*%s", mech_num(M, S[3 * k]), eta));
            if (S[3 * k + 1] != 0) mech_sb_add(M, &dv, " + ", mech_fmt(M, "%s*%s", mech_num(M, S[3 * k + 1]), eta));
            if (S[3 * k + 2] != 0) mech_sb_add(M, &dp, " + ", mech_fmt(M, "%s*%s", mech_num(M, S[3 * k + 2]), eta));
        }
        /* (the second-order shift only where a file gives it: the texts of other modal bodies unchanged) */
        const char *u = mech_fmt(M, "(%s + %s%s%s%s)", X[0], mech_sb_done(M, &du), K->gk[0] ? " - 0.5*(" : "", K->gk[0] ? gq[0] : "",
                                 K->gk[0] ? ")" : "");
        const char *v = mech_fmt(M, "(%s + %s%s%s%s)", X[1], mech_sb_done(M, &dv), K->gk[1] ? " - 0.5*(" : "", K->gk[1] ? gq[1] : "",
                                 K->gk[1] ? ")" : "");
        const char *s[3] = {u, v, "0"};
        rc = mech_flex_marker_frame(M, K, B, mech_fmt(M, "%s + %s + (%s)", B->th, mech_sb_done(M, &dp), ang), s, NULL);
    }
    return rc;
}

static int dense_to_csc(int n, const double *A, mbla_csc **out, mbl_status *st)
{
    return mbla_csc_from_dense(n, n, A, n, 0.0, out, st);
}

/* The body's geometric stiffness per unit load (the file's comment at the top) as the invariants'
 * H1 = -Gax, Hy = -Gay, Ha = Gwd, Hx = Gw2 (model/ffr.h) */
static int body_geo(mech *M, const yaml_node_t *val, const char *what, int nm, mbl_ffr_invariants *inv)
{
    yaml_node_t *gs = mech_get(M, val, "geometric_stiffness");
    if (!gs) return 0;
    static const char *okg[] = {"ax", "ay", "wdot", "w2", NULL};
    char w[400];
    snprintf(w, sizeof w, "%s: geometric_stiffness (files per unit load)", what);
    int rc = mech_want_map(M, gs, w);
    if (!rc) rc = mech_check_keys(M, gs, okg, w);
    mbla_csc **dst[4] = {&inv->H1, &inv->Hy, &inv->Ha, &inv->Hx};
    const double sign[4] = {-1, -1, 1, 1};
    for (int k = 0; k < 4 && !rc; k++) {
        double *G = NULL;
        if ((rc = mech_modal_geo_file(M, gs, okg[k], what, nm, &G)) || !G) continue;
        for (size_t t = 0; t < (size_t)nm * nm; t++) G[t] *= sign[k];
        rc = dense_to_csc(nm, G, dst[k], M->st);
        mbl_free(G);
    }
    return rc;
}

int mech_read_modal(mech *M, const yaml_node_t *key, const yaml_node_t *val)
{
    const char *name = mech_sc(key);
    char what[200];
    snprintf(what, sizeof what, "body '%s'", name);
    static const char *ok[] = {"type", "position", "angle", "velocity", "angular_velocity", "mass", "s0", "J0",
                               "mass_matrix", "stiffness", "Sb", "c1", "c2", "P", "damping", "markers",
                               "geometric_stiffness", NULL};
    int rc = mech_check_keys(M, val, ok, what);
    if (rc) return rc;
    double m, J0, s0[2], alpha = 0, beta = 0;
    /* the numbers as factors of the invariants: m, J0, s0 x, s0 y, alpha, beta */
    mbl_ffr_factor fa[6];
    memset(fa, 0, sizeof fa);
    for (int k = 0; k < 4; k++) fa[k].kind = MBL_FFR_FAC_SCALAR, fa[k].cls = k;
    fa[4].kind = MBL_FFR_FAC_ALPHA, fa[5].kind = MBL_FFR_FAC_BETA;
    if ((rc = num_key(M, val, "mass", what, &m, &fa[0])) || (rc = num_key(M, val, "J0", what, &J0, &fa[1]))) return rc;
    yaml_node_t *sn = mech_get(M, val, "s0");
    if (!sn) return err_at(M, val, "%s: missing 's0' (the first moment of mass of the undeformed body)", what);
    if ((rc = mech_eval_vec(M, sn, 2, "s0", s0))) return rc;
    {
        const char *st[2];
        if ((rc = mech_vec_of(M, sn, 2, "s0", st))) return rc;
        for (int k = 0; k < 2; k++) {
            fa[2 + k].text = (char *)st[k], fa[2 + k].value = s0[k];
            mech_pos_of(mech_node(M->doc, sn->data.sequence.items.start[k]), &fa[2 + k].line, &fa[2 + k].col);
        }
    }
    if (!(m > 0) || !(J0 > 0) || !isfinite(m) || !isfinite(J0))
        return err_at(M, val, "%s: 'mass' and 'J0' must be positive and finite", what);
    yaml_node_t *dn = mech_get(M, val, "damping");
    if (dn) {
        static const char *okd[] = {"alpha", "beta", "zeta", NULL};
        if ((rc = mech_want_map(M, dn, "damping")) || (rc = mech_check_keys(M, dn, okd, "damping"))) return rc;
        if (mech_get(M, dn, "alpha") && (rc = num_key(M, dn, "alpha", what, &alpha, &fa[4]))) return rc;
        if (mech_get(M, dn, "beta") && (rc = num_key(M, dn, "beta", what, &beta, &fa[5]))) return rc;
        if (!(alpha >= 0) || !(beta >= 0)) return err_at(M, dn, "%s: damping alpha and beta must be >= 0", what);
    }
    double *Mf = NULL, *Kf = NULL, *Sb = NULL, *c1 = NULL, *c2 = NULL, *P = NULL;
    int nm = 0, one = 1, two = 2, nc = 0;
    if (!mech_get(M, val, "mass_matrix")) return err_at(M, val, "%s: missing 'mass_matrix' (a Matrix Market file)", what);
    /* the order of mass_matrix is the number of modal coordinates */
    rc = mech_read_mtx(M, mech_get(M, val, "mass_matrix"), "mass_matrix", &nm, &nc, &Mf);
    if (!rc && nm != nc) rc = err_at(M, mech_get(M, val, "mass_matrix"), "%s: mass_matrix is %d x %d, not square", what, nm, nc);
    if (!rc && nm < 1) rc = err_at(M, mech_get(M, val, "mass_matrix"), "%s: mass_matrix is empty", what);
    if (!rc) rc = mtx_key(M, val, "stiffness", what, nm, nm, &Kf);
    if (!rc) rc = mtx_key(M, val, "Sb", what, two, nm, &Sb);
    if (!rc) rc = mtx_key(M, val, "c1", what, nm, one, &c1);
    if (!rc) rc = mtx_key(M, val, "c2", what, nm, one, &c2);
    if (!rc) rc = mtx_key(M, val, "P", what, nm, nm, &P);
    body *B = NULL;
    int bi = -1;
    if (!rc) {
        B = mech_new_body(M, name, key);
        if (!B) rc = mech_oom(M);
        else bi = M->nb - 1, rc = mech_flex_frame(M, B, key, val);
    }
    const char **qf = NULL;
    if (!rc) {
        B = &M->b[bi];
        qf = mbl_calloc((size_t)nm + 1, sizeof *qf);
        if (!qf || !mech_keep(M, (char *)qf)) rc = mech_oom(M);
        for (int i = 0; i < nm && !rc; i++) {
            qf[i] = mech_fmt(M, "%s_eta%d", name, i + 1);
            rc = mech_push(M, &M->src->coordinates, qf[i], "0", B->line, B->col);
        }
    }
    mbl_ffr_body *f = rc ? NULL : mech_flex_new(M, B, nm, qf);
    if (!rc && !f) rc = mech_oom(M);
    for (int k = 0; k < 6 && !rc; k++) {
        if (!fa[k].text) continue;
        f->fac[f->nfac] = fa[k];
        if (!(f->fac[f->nfac++].text = mech_dup_s(fa[k].text))) rc = mech_oom(M);
    }
    if (!rc) {
        f->alpha = alpha, f->beta = beta;
        mbl_ffr_invariants *inv = &f->inv;
        inv->m = m, inv->s0[0] = s0[0], inv->s0[1] = s0[1], inv->J0 = J0;
        inv->Sb = mbl_alloc_array((size_t)2 * nm + 1, sizeof *inv->Sb);
        if (!inv->Sb) rc = mech_oom(M);
        /* Sb from the file is 2 x nm column-major; the invariants keep it row-major */
        for (int j = 0; j < nm && !rc; j++) inv->Sb[j] = Sb[2 * j], inv->Sb[nm + j] = Sb[2 * j + 1];
        if (!rc) inv->c1 = c1, inv->c2 = c2, c1 = c2 = NULL;
        if (!rc) rc = dense_to_csc(nm, Mf, &inv->Mff, M->st);
        if (!rc) rc = dense_to_csc(nm, Kf, &inv->K, M->st);
        if (!rc) rc = dense_to_csc(nm, P, &inv->P, M->st);
        if (!rc) rc = body_geo(M, val, what, nm, inv);
        /* Mff symmetric positive definite, K symmetric, P antisymmetric */
        double big = 0, asym = 0;
        for (int i = 0; i < nm && !rc; i++)
            for (int j = 0; j < nm; j++) {
                big = fmax(big, fabs(Mf[i + (size_t)nm * j]) + fabs(Kf[i + (size_t)nm * j]));
                asym = fmax(asym, fabs(Mf[i + (size_t)nm * j] - Mf[j + (size_t)nm * i]) / fmax(1e-300, fabs(Mf[i + (size_t)nm * i])));
                asym = fmax(asym, fabs(P[i + (size_t)nm * j] + P[j + (size_t)nm * i]) / fmax(1e-300, fabs(Mf[i + (size_t)nm * i])));
            }
        if (!rc && asym > 1e-9)
            rc = err_at(M, mech_get(M, val, "mass_matrix"),
                        "%s: mass_matrix must be symmetric and P antisymmetric (relative deviation %.3g)", what, asym);
        if (!rc) rc = mech_modal_zeta(M, val, what, nm, Mf, Kf, &f->Cm);
        if (!rc) rc = modal_markers(M, bi, mech_get(M, val, "markers"), nm);
    }
    mbl_free(Mf), mbl_free(Kf), mbl_free(Sb), mbl_free(c1), mbl_free(c2), mbl_free(P);
    return rc;
}
