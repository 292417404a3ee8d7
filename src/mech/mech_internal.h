/* The mechanism compiler's internals, shared by the files of src/mech/ (see the opening comment
 * of mechanism.c for what lives where). Not used outside src/mech/. */
#ifndef MBLIN_MECH_INTERNAL_H
#define MBLIN_MECH_INTERNAL_H

#include <stddef.h>

#include <yaml.h>

#include "mblin/expr.h"
#include "mblin/la.h"
#include "mech/mechanism.h"

enum { KIND_GROUND, KIND_PLANAR, KIND_SPATIAL, KIND_POINT };

typedef struct body {
    const char *name;
    int kind;
    int line, col;
    const char *mass, *I[6], *cm[3]; /* texts (NULL for ground) */
    char *r[3];                      /* origin position (coordinate names or "0") */
    char *A[9];                      /* rotation matrix, row-major texts */
    char *w[3];                      /* global angular velocity texts */
    char *th;                        /* planar angle coordinate (NULL otherwise) */
    char *e[4];                      /* Euler parameter coordinates (spatial) */
    char *F[3], *N[3];               /* accumulated force and moment about the origin (NULL = none) */
    double R0[9];                    /* orientation in the file's configuration (column-major; spatial) */
    double q0[4];                    /* its Euler parameters (the coordinates' initial values) */
    double turn[4];                  /* the file's orientation as given: axis turn[0..2] (unit) and angle
                                        turn[3] (turn_kind 1: axis + angle), 2: none (the identity), 0:
                                        another form; whole turns count in joint angles (mech_twist_angle) */
    int turn_kind;
    int oset;                        /* the --set its orientation came from, or -1 */
    int flex;                        /* flexible body (beam_body.c, modal_body.c): 1 + its index in src->ffr, else 0 */
    char **Fq;                       /* flexible: generalized forces on the elastic coordinates (NULL = none) */
    const char *gle;                 /* beam with geometric stiffness: its element length (a text), for
                                        the foreshortening of its markers (beam_body.c); NULL otherwise */
    const char **qf3;                /* spatial beam: its nqf3 elastic coordinates (forces in Fq) */
    int nqf3;
    const yaml_node_t *key, *val;    /* relative coordinates: read again for a floating root */
    const char *p0[3];               /* the position texts of the file */
    int rt;                          /* relative coordinates: its inertia and weight are in the tree's
                                        structured term (model/rtree.h; relative.c) */
    char *Fd[3], *Nd[3];             /* loads of force elements across its tree joint, given to the joint
                                        coordinate directly (mech_rel_joint_load): for the reactions only */
    int pn;                          /* 1 + its index in the numeric term (pmech.c), else 0: its kinetic
                                        energy and the weight of the numeric gravity are not written */
    int nat;                         /* natural coordinates (natural.c): its number of points, else 0 */
    int natp[4];                     /* ... their indices in mech.npt (A, B) */
    const char *nat_L2, *nat_l[3], *nat_sa[3]; /* planar: |s_B - s_A|^2, s_B - s_A, s_A (body axes, texts) */
    const char *nat_a[3], *nat_b[3][3];        /* spatial (natural3.c): Eq. 10's a_i, b_ij, */
    const char *nat_sig[3], *nat_h[3][3];      /* sigma_i = g_i . s_A and h_i = A g_i (texts) */
    int eul;                         /* spatial rigid body with `orientation: euler313` (euler313.c): its
                                        coordinates are the angles ea (psi, theta, phi), e are variables */
    char *ea[3];
} body;

/* a point of natural-coordinate bodies (natural.c): its coordinates c, the body that made it, the
 * generalized forces on its coordinates accumulated from the bodies that share it (NULL: none) */
typedef struct mech_point {
    const char *name;
    const char *c[3];
    int body, unit; /* unit: a unit vector (spatial), not a point */
    const char *Q[3];
} mech_point;

typedef struct marker {
    const char *name;
    int body;
    int line, col;
    char *p[3];        /* global position: variable names */
    char *ax[3][3];    /* ax[a][k]: component k of axis a (x, y, z) in global: variable names */
    char *phi;         /* planar: global angle text */
    double R0[9];      /* spatial: global axes in the file's configuration (column-major) */
    double mq[4];      /* spatial: Euler parameters of the marker relative to its body */
    double turn[4];    /* spatial: its orientation on its body as given (axis in body axes, angle), */
    int turn_kind;     /* as body.turn */
    int oset;          /* the --set its orientation (or its body's) came from, or -1 */
    int node;          /* on a beam: 1 + the index of its node (beam_body.c), else 0 */
    double *shape;     /* on a modal body: 3 x nm (u, v, phi per modal coordinate, column-major), on a
                        * spatial one 6 x nm (translation, small rotation), else NULL */
    double *gk[2];     /* on a modal body: its geometric stiffness per unit force along the frame's x, y (nm x nm), or NULL */
    const char *s[3];  /* position in body axes (texts) */
    const char *ang;   /* planar: angle relative to the body (text) */
    const yaml_node_t *val;
    /* planar, absolute coordinates: the position variables p[0], p[1] are made on their first use
     * (mech_mk_p), from the body's texts as they were when the marker was read: its position r,
     * the cosine c and sine sn of its angle (NULL: a point or the ground, not turned) */
    int lazy;
    int lseq;            /* the variables' places in the order of the generated variables */
    const char *lr[2], *lc, *lsn;
} marker;

typedef struct joint {
    const char *name;
    const char *type;
    int i, j; /* markers */
    int line, col;
    const char *jq; /* spatial rotation angle variable, once generated */
    /* reaction measures: the joint's constraints are c0 .. c0 + nc - 1 (0-based, in the model's
     * order); fg[k] = dPhi_k/dp_i (the force on i's body at p_i is -sum lambda_k fg[k]) and mg[k]
     * the rotation gradient of Phi_k for i's body (its torque is -sum lambda_k mg[k]); NULL: zero */
    int c0, nc;
    const char *fg[6][3], *mg[6][3];
    /* relative coordinates (tree.c / relative.c): a tree joint has no constraints; its coordinates
     * q[0 .. nq-1] carry the body of marker i (child_i) or of marker j from the other */
    int tree, child_i, nq;
    const char *q[4];
    const char *Qd; /* generalized force on q[0] of force elements across the joint (mech_rel_joint_load) */
    const yaml_node_t *val;
} joint;

/* names to indices (markers, bodies, joints are looked up by name often): open addressing, each
 * slot with its name's hash, so that a probe reads one slot and the name only where the hashes
 * agree (the tables of a large mechanism's markers and joints miss the caches) */
typedef struct nameset_slot {
    const char *key;
    int idx;
    uint32_t hash;
} nameset_slot;

typedef struct nameset {
    nameset_slot *slot;
    size_t cap, n;
} nameset;

typedef struct mech {
    nameset hb, hm, hj; /* bodies, markers, joints by name */
    yaml_document_t *doc;
    const char *file;
    mbl_src *src;
    mbl_status *st;
    int planar;
    char **arena;
    int narena, carena;
    char *block;       /* mech_fmt's texts: the rest of the arena's current block (block_left bytes) */
    size_t block_left;
    int oom;
    mblx_graph *g;
    double *pval;
    int np_eval;
    const mbl_setting *sets; /* --set overrides */
    int nsets;
    int *pset;  /* per parameter: the --set it comes from (directly or through its expression), or -1 */
    int used_set; /* the --set that the numbers evaluated since set_track() came from, or -1 */
    int track_numeric; /* 1 while evaluating numbers that fix the geometry: the parameters resolved
                          are flagged in src->param_numeric (no derivative by them) */
    body *b;
    int nb, cb;
    marker *mk;
    int nm, cm;
    joint *jt;
    int nj, cj;
    int nstate; /* generated state variable counter */
    int ntwist; /* twist angles made (mech_twist_angle): their relative Euler parameters' variables */
    struct drv {
        const char *elem, *part; /* "driver 'spin'", "motion" */
        const yaml_node_t *at;   /* the text's node */
        const char *text;        /* with its measures expanded */
        int driver;
    } *drv;                      /* user texts inside constraints, checked once the variables are read */
    int ndrv, cdrv;
    int relative; /* `coordinates: relative`: joint coordinates on a spanning tree (relative.c) */
    int *torder;  /* relative: bodies, parents first, then each body's tree joint (-1: none) */
    int tree_symbolic; /* `tree_dynamics: symbolic`: no structured term for the tree (relative.c) */
    const char *grav[3]; /* the gravity vector (sum of the gravity elements; NULL: none) */
    unsigned char *spare; /* per variable: 1 when made by mech_add_spare_var (cspare entries) */
    int cspare;
    int *vseq;  /* per variable: its place in the order the variables are written (mech_push; a marker's
                   position made later takes the place reserved when the marker was read) */
    int cvseq, nseq, nlate; /* nlate: variables made out of that order (mech_drop_spare_vars sorts) */
    struct mech_rot {
        const char *name[2]; /* _c_<body>, _s_<body> */
        const char *th;      /* the body's angle: their texts cos(th), sin(th) */
        int line, col;
        int seq;  /* their places (seq, seq + 1) */
        int vpos; /* variables.n when deferred: where the two would have been pushed */
    } *rot;       /* planar bodies' cosines and sines, made by mech_drop_spare_vars only where used */
    int nrot, crot;
    nameset hpt; /* texts known to be (1) or not to be (0) functions of the parameters (pmech.c) */
    nameset hev; /* texts evaluated to numbers (mech_eval_text): their index in ev */
    struct mech_ev {
        double v;  /* the value */
        int first; /* the --set the parse met first (what it sets used_set to from -1), or -1 */
        int np;    /* np_eval when evaluated: the parameters it could resolve */
        int track; /* track_numeric when evaluated (1: the parameters' param_numeric flags are set) */
    } *ev;
    int nev, cev;
    double beam_elems, beam_coords, beam_nz, beam_bytes; /* the beams read so far: their size estimate
                                                            (mech_beam_budget) */
    mech_point *npt; /* the points of natural-coordinate bodies, by name in hnp (natural.c) */
    int nnp, cnp;
    nameset hnp;
    int eul313; /* `orientation: euler313` at the root: the spatial rigid bodies' default (euler313.c) */
    int nmodal; /* modal bodies read so far (counted by mech_modal_zeta; modal_damping.c) */
    int pnum;   /* planar, absolute coordinates and model_pmech_numeric(): bodies and revolute joints go to
                   the model's numeric term (pmech.c) */
} mech;

/* a growable string for long sums (kinetic and potential energy of many bodies) */
typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

typedef struct local {
    const char *name, *text;
} local;

#define err_at(M, node, ...) model_yaml_error((M)->st, MBL_EMODEL, (M)->file, (node), __VA_ARGS__)

/* ---- util.c: names, strings, YAML, items, numbers -------------------------------------------- */

int mech_ns_find(const nameset *t, const char *name, size_t len);
int mech_ns_add(nameset *t, const char *name, int idx);
/* room for n more names at once (one rehash instead of one per doubling); -1 when out of memory */
int mech_ns_reserve(nameset *t, size_t n);
void mech_ns_free(nameset *t);
char *mech_keep(mech *M, char *s);
/* printf into a string owned by the arena; "" on out of memory (the flag is then set) */
char *mech_fmt(mech *M, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
char *mech_num(mech *M, double v);
/* snprintf (the same text), fast for formats of %s, %d and %c alone */
int mech_snprintf(char *buf, size_t cap, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A beam body of ne elements (spatial: 12 dofs per element, else 6) is about to be built: its size
 * is added to the model's estimate, and the model is refused (MBL_ENOMEM, at `at`) when the
 * estimate exceeds the memory budget (src->mem_budget; beam_body.c). */
int mech_beam_budget(mech *M, const yaml_node_t *at, const char *what, int ne, int spatial);
/* Before any body is built: the beams among `bodies` (a mapping) through mech_beam_budget. */
int mech_beam_prescan(mech *M, const yaml_node_t *bodies);
void mech_sb_add(mech *M, sbuf *b, const char *a, const char *t);
/* the text of b, owned by the arena ("0" when empty) */
char *mech_sb_done(mech *M, sbuf *b);
/* "r + a0*(x0) - a1*(x1) ..." (sign[i] '+' or '-'), leaving out the terms whose factor or offset
 * is the text "0" (the same expression with fewer items to format, parse and differentiate) */
char *mech_affine(mech *M, const char *r, int nt, const char *const *a, const char *const *x, const char *sign);
int mech_oom(mech *M);
static inline const char *mech_sc(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }
static inline int mech_is_scalar(const yaml_node_t *n) { return n && n->type == YAML_SCALAR_NODE; }
/* libyaml's yaml_document_get_node, inline: the compiler looks keys up 540,000 times at the N = 2000
 * four-bar (mech_get, mech_check_keys), where the call was two thirds of a key's cost */
static inline yaml_node_t *mech_node(yaml_document_t *doc, int index)
{
    return index > 0 && doc->nodes.start + index <= doc->nodes.top ? doc->nodes.start + index - 1 : NULL;
}
yaml_node_t *mech_get(mech *M, const yaml_node_t *map, const char *key);
/* every key of map must be in the NULL-terminated list `ok`. These checks name the element by
 * what in their messages; a NULL what checks quietly (-1 on failure, no message), so that a
 * caller writes its description only when a message needs it */
int mech_check_keys(mech *M, const yaml_node_t *map, const char *const *ok, const char *what);
int mech_want_map(mech *M, const yaml_node_t *n, const char *what);
/* a scalar expression text */
int mech_text_of(mech *M, const yaml_node_t *n, const char *what, const char **out);
/* a list of exactly cnt expressions */
int mech_vec_of(mech *M, const yaml_node_t *n, int cnt, const char *what, const char **out);
void mech_pos_of(const yaml_node_t *n, int *line, int *col);
char *mech_dup_s(const char *s);
/* append an item to a list of the generated source */
int mech_push(mech *M, mbl_src_list *l, const char *key, const char *text, int line, int col);
int mech_push_at(mech *M, mbl_src_list *l, const char *key, const char *text, const yaml_node_t *n);
/* a validity item (mbl_src.validity): the quantity text, what it is, its limit ("<number> <what
 * passing it means>"); a note at a solved point where |quantity| exceeds the limit */
int mech_validity(mech *M, const char *what, const char *text, const char *limit, int line, int col);
int mech_resolve_param(void *ud, mblx_graph *g, const char *name, size_t len, int nargs, const mblx_id *args,
                       mblx_id *out, char *why, size_t whylen);
/* Start tracking which --set the next evaluated numbers depend on (set_note names it). */
void mech_set_track(mech *M);
int mech_eval_text(mech *M, const char *text, const yaml_node_t *n, const char *what, double *v);
/* " (the value comes from --set name=value)" when the numbers evaluated since set_track() used an
 * overridden parameter, else "" (the text lives in the arena) */
const char *mech_set_note(mech *M);
int mech_eval_vec(mech *M, const yaml_node_t *n, int cnt, const char *what, double *v);
int mech_valid_name(const char *s);
int mech_find_body(mech *M, const char *name);
int mech_find_marker(mech *M, const char *name, size_t len);
int mech_find_joint(mech *M, const char *name, size_t len);
/* A new marker `name` of body bi, registered by name, at the position of key; *out points into M->mk
 * (valid until the next marker is added). 0 or the out-of-memory error. */
int mech_new_marker(mech *M, const char *name, int bi, const yaml_node_t *key, marker **out);
/* The node (0-based) of a beam marker given by 'node' (1..ne+1) or by arc length 's' on a beam of
 * ne elements and length L; an error at the key otherwise. */
int mech_beam_node(mech *M, const yaml_node_t *val, const char *what, int ne, double L, int *node);
/* a spatial body's texts from its Euler parameters B->e: the normalization constraint (when
 * `constraint`), the rotation matrix variables B->A and the global angular velocity B->w (its
 * variables defined when `wvars`; the names always) (rigid bodies and spatial beams) */
int mech_euler_texts(mech *M, body *B, int constraint, int wvars);
int mech_add_var(mech *M, const char *name, const char *text, int line, int col);
int mech_add_var_of(mech *M, const char *name, const char *text, int line, int col, const char *element);
/* A generated variable without user text (a marker's axis components and position, a planar
 * body's cosine and sine), named _x_..., _y_..., _z_..., _p_..., _c_..., _s_... or _phi_...:
 * dropped by mech_drop_spare_vars when no item of the generated source uses it (a name of another
 * form makes an ordinary variable). */
int mech_add_spare_var(mech *M, const char *name, const char *text, int line, int col);
/* A planar body's cosine and sine variables c = cos(th), s = sin(th), spare: their places reserved
 * here, made by mech_drop_spare_vars only when an item of the generated source uses them (the
 * N = 2000 four-bar made and dropped 8,002). */
int mech_defer_rot(mech *M, const char *c, const char *s, const char *th, int line, int col);
/* The name of a generated variable (nm, or nm_<k> where a variable or a deferred cosine or sine
 * had it), as a scan of them in the order they were made renames it */
char *mech_var_name_free(mech *M, char *nm, int *counter);
/* Drop the spare variables that nothing uses, directly or through other variables (a planar
 * revolute four-bar used 3 of every marker's 13 variables: the rest were parsed for nothing). */
int mech_drop_spare_vars(mech *M);
int mech_is_id0(char c);
int mech_is_id(char c);
/* a key that appeared earlier in the same mapping: the scalar keys before p are in seen (empty
 * at the first pair; p's key is added; the caller frees it with mech_ns_free) */
int mech_dup_key(mech *M, nameset *seen, const yaml_node_t *map, const yaml_node_pair_t *p, const char *kind);

/* ---- body.c: bodies and markers -------------------------------------------------------------- */

/* Euler parameters of a rotation matrix (column-major), e0 >= 0 */
void mech_euler_params(const double R[9], double e[4]);
/* a spatial orientation form of map (axis + angle, euler, zaxis/xaxis, rotation; none: the identity)
 * into R (column-major), *where its node, turn and *turn_kind as body.turn (its parameters flagged
 * as numbers of the geometry) */
int mech_orientation(mech *M, const yaml_node_t *map, const char *what, double R[9], const yaml_node_t **where,
                     double turn[4], int *turn_kind);
int mech_add_markers(mech *M, int bi, const yaml_node_t *mks);
body *mech_new_body(mech *M, const char *name, const yaml_node_t *key);
int mech_read_body(mech *M, const yaml_node_t *key, const yaml_node_t *val);
/* mass, inertia and their checks (a natural-coordinate body's too) */
int mech_body_inertia(mech *M, body *B, const yaml_node_t *val, const char *what);

/* ---- natural.c: natural-coordinate bodies (source 002 Sec. 2) ---------------------------------- */

/* `type: natural`: its points (coordinates, shared by name), constraints, frame texts, markers */
int mech_read_natural(mech *M, const yaml_node_t *key, const yaml_node_t *val);
/* the point (unit: the unit vector) named by key of body B: new (its coordinates <name>_x .. from
 * x0 and rates v0 (NULL: none), a vector's unit length constraint) or shared with an earlier body;
 * its index in M->npt */
int mech_natural_point(mech *M, body *B, const yaml_node_t *key, const double x0[3], const char *const v0[3], int unit,
                       int *idx);
/* texts: a - b, a*b + sign c*d, a/L2 ("0" terms left out) */
const char *mech_nat_sub(mech *M, const char *a, const char *b);
const char *mech_nat_dot2(mech *M, const char *a, const char *b, const char *c, const char *d, int sign);
const char *mech_nat_over(mech *M, const char *a, const char *L2);
/* a new natural-coordinate body named by key: val's keys checked against ok, its mass, inertia, cm */
int mech_natural_body(mech *M, const yaml_node_t *key, const yaml_node_t *val, const char *what, const char *const *ok,
                      int *bi);
/* natural3.c: a spatial natural-coordinate body (two points, two unit vectors; source 002 Eq. 10) */
int mech_read_natural3(mech *M, const yaml_node_t *key, const yaml_node_t *val, const char *what);
int mech_natural3_energy(mech *M, body *B, const char **Tb);
int mech_natural3_forces(mech *M, body *B);
/* its kinetic energy 1/2 qdot^T M qdot (constant M) as a text in *Tb */
int mech_natural_energy(mech *M, body *B, const char **Tb);
/* its accumulated force and moment (B->F, B->N) added to its points' generalized forces */
int mech_natural_forces(mech *M, body *B);
/* the coordinates' names made once each (a point named as a body clashes with its <body>_x) */
int mech_natural_names(mech *M);
/* the points' generalized forces into the source (after every body's mech_natural_forces) */
int mech_natural_flush(mech *M);

/* ---- euler313.c: 3-1-3 Euler angles as a spatial rigid body's coordinates -------------------- */

/* `orientation:` node n (NULL: *eul unchanged): euler313 sets *eul, euler_parameters clears it */
int mech_e313_mode(mech *M, const yaml_node_t *n, const char *what, int *eul);
/* body B's angle coordinates from its orientation (B->R0, or the texts of `euler:`) and initial
 * rates from wn (angular_velocity; may be NULL), its Euler parameters as variables of them, its
 * rotation and angular velocity texts, its singular item; the file's configuration refused at
 * |sin(theta)| < MBL_MECH_EULER313_SING_TOL */
int mech_e313_body(mech *M, body *B, const yaml_node_t *key, const yaml_node_t *val, const yaml_node_t *wn,
                   const char *what);
/* the generalized forces on B's angles of the moment N (global texts) */
int mech_e313_forces(mech *M, const body *B, const char *const N[3]);

/* ---- vec3_text.c: 3-D vectors, rotations and quaternions as expression texts ----------------- */

/* a text that is zero (NULL or "0") */
int mech_tx_is0(const char *a);
/* a number as a text: "0", "1", "-1" exactly, else as mech_num */
const char *mech_tx_num(mech *M, double x);
/* a*b (NULL when zero; a factor "1" left out) */
const char *mech_tx_mul(mech *M, const char *a, const char *b);
/* sum of signed terms sg[k] = +-1 (NULL terms skipped): "0" when empty */
const char *mech_tx_sum(mech *M, int n, const char *const *t, const int *sg);
/* the same with NULL for zero */
const char *mech_tx_sumz(mech *M, int n, const char *const *t, const int *sg);
/* quaternions (Euler parameters) as texts: o = a (x) b (Hamilton), numbers, conj(a), the rotation
 * about z by the angle text q */
void mech_tx_qmul(mech *M, const char *const a[4], const char *const b[4], const char *o[4]);
void mech_tx_qnum(mech *M, const double q[4], const char *o[4]);
void mech_tx_qconj(mech *M, const char *const a[4], const char *o[4]);
void mech_tx_qz(mech *M, const char *q, const char *o[4]);
/* o = a x b (NULL entries are zero, in and out) */
void mech_tx_cross(mech *M, const char *const a[3], const char *const b[3], const char *o[3]);
/* the rotation matrix (row-major) of Euler parameters given as texts (NULL for zero) */
void mech_tx_qrot(mech *M, const char *const x[4], const char *R[9]);
/* o = R v or R^T v (R row-major; NULL entries are zero, in and out) */
void mech_tx_matvec(mech *M, const char *const R[9], const char *const v[3], int transpose, const char *o[3]);
/* a numeric matrix as texts (NULL for zero) */
void mech_tx_num_mat(mech *M, const double R[9], const char *o[9]);
/* a . b ("0" when zero) */
const char *mech_tx_dot(mech *M, const char *const a[3], const char *const b[3]);
/* acc += sign * (a x b), acc += sign * a (texts; NULL entries are zero) */
void mech_tx_add_cross(mech *M, const char *acc[3], const char *const a[3], const char *const b[3], int sign);
void mech_tx_add_vec(mech *M, const char *acc[3], const char *const a[3], int sign);
/* a . b as "(a0*b0 + a1*b1 + a2*b2)", the products with a factor "0" left out */
const char *mech_dot3(mech *M, char *const a[3], char *const b[3]);
/* a x b as "(a1*b2 - a2*b1)" per component */
void mech_tx_cross3(mech *M, char *const a[3], char *const b[3], const char *out[3]);
/* Euler parameters as texts: q = e (x) m written out; the body-frame angular velocity
 * w' = 2 G(e) der(e) (d: the texts of der(e)); the generalized forces 2 E(e)^T n of a moment n
 * (paren: n's components in parentheses); the initial rates der(e) = 1/2 E(q0)^T w0 */
void mech_tx_qmul_plain(mech *M, const char *const e[4], const char *const m[4], const char *q[4]);
void mech_tx_body_rate(mech *M, const char *const e[4], const char *const d[4], const char *w[3]);
void mech_tx_euler_forces(mech *M, const char *const e[4], const char *const n[3], int paren, const char *Q[4]);
void mech_tx_euler_rates(mech *M, const double q0[4], const char *const w0[3], const char *o[4]);

/* ---- measure.c: measures and their substitution ---------------------------------------------- */

/* d = p_i - p_j as three texts */
void mech_dvec(mech *M, int i, int j, char *d[3]);
/* marker mi's global position texts p[3], its variables made on their first use (marker.lazy);
 * M->oom set when out of memory */
char *const *mech_mk_p(mech *M, int mi);
/* The rotation angle of marker i about the z axis of marker j (spatial), continuous: with
 * r = conj(q_j) (x) q_i the relative Euler parameters, the angle is 2 atan2(r3, r0) measured from
 * the angle a of the file's configuration (in (-pi, pi], today's atan2(x_i.y_j, x_i.x_j) there):
 * a + 2 atan2(r3', r0') with r' = sigma r (x) (cos a/2, 0, 0, -sin a/2) and sigma = +-1 making r0' > 0
 * in the file's configuration. It is smooth in the coordinates and does not wrap within 2 pi of a
 * (a driver, a coupler or a torsion spring can pass half a turn). */
const char *mech_twist_angle(mech *M, int mi, int mj);
const char *mech_joint_coord(mech *M, int ji, char *why, size_t whylen);
const char *mech_measure(mech *M, const char *fn, int nargs, const char **arg, const size_t *alen, char *why,
                         size_t whylen);
/* Replace measure calls (DX(i, j, k), JQ(joint), ...) and the locals by their expressions. */
int mech_subst(mech *M, const char *text, const yaml_node_t *at, const local *loc, int nloc, const char **out);

/* ---- joint.c: joints and drivers ------------------------------------------------------------- */

int mech_marker_ref(mech *M, const yaml_node_t *map, const char *key, const char *what, int required, int *out);
int mech_con(mech *M, const char *jname, const char *text, int line, int col);
/* Remember a user text that goes into a constraint (a driver's motion, a coupler's ratios and
 * offset, a distance): check_con_texts refuses inputs and velocities in it, in the element's words. */
int mech_con_text(mech *M, const char *elem, const char *part, const yaml_node_t *at, const char *text, int driver);
int mech_read_joints(mech *M, const yaml_node_t *js);
int mech_read_drivers(mech *M, const yaml_node_t *ds);
/* A driver prescribes a motion of t and parameters, and a coupler's ratios and offset and a
 * distance are numbers of the geometry: their equations are holonomic constraints, which cannot
 * depend on inputs or velocities. Said in the element's words (the loader would only name
 * "constraint <j>"). */
int mech_check_con_texts(mech *M);

/* ---- wheel.c: the rolling wheel joint (a disc on a ground plane; non-holonomic) ------------- */

/* type rolling_wheel: the contact constraint, the no-slip constraints (the lateral one replaced by
 * the force of an optional `tire`) */
int mech_wheel_joint(mech *M, joint *J, const yaml_node_t *val);

/* ---- trim.c: `trim:` (linearize.at: trim) ------------------------------------------------------ */
/* targets (measures in the keys, the keys as written the labels), free inputs, and `turn: body`
 * (every body's accelerations of a steady turn about the vertical) or `accelerations`; NULL: none */
int mech_read_trim(mech *M, const yaml_node_t *tn);
/* ---- routines.c: `routines:` (user routines; docs/user-routines.md) ----------------------------- */
/* rn (NULL: none) read by the model's reader (model/routines.h) into src->routines, each input's
 * measures written out (mech_subst, at the input's node), each output's name checked to be a new
 * name of the mechanism; the outputs stay names (the model layer resolves them) */
int mech_read_routines(mech *M, const yaml_node_t *rn);
/* ---- pmech.c: planar rigid bodies and revolute joints evaluated numerically by the model ------- */

/* Body bi to the numeric term when it can go (M->pnum, a planar rigid body whose mass, inertia
 * and centre of mass are functions of the parameters): B->pn set. */
int mech_pm_body(mech *M, int bi);
/* A revolute, fixed or orientation joint between markers of numeric bodies or the ground: its
 * constraints pushed with the text "0" under cname and the joint handed to the term (*done = 1);
 * else *done = 0. */
int mech_pm_joint(mech *M, joint *J, const char *cname, int *done);
/* A translational spring between markers mi and mj with the texts k, c, L0, f0 (a `spring` without
 * `force`): 1 when the numeric term takes it (nothing else is written for it), 0 when not. */
int mech_pm_spring(mech *M, const char *name, int mi, int mj, const char *const t[4], int line, int col);
/* A gravity element: 1 when the numeric term takes it (its bodies then get no weight text), 0
 * when not (g not a function of the parameters, or no numeric body), or an error. */
int mech_pm_gravity(mech *M, const char *const g[3], int line, int col);

/* ---- beam_body.c, modal_body.c: flexible bodies (planar, floating frame; model/ffr.h) -------- */

/* `type: beam` and `type: modal` bodies */
struct mbl_ffr_body;
/* the frame of a flexible body: coordinates <b>_x, <b>_y, <b>_th from 'position' and 'angle' */
int mech_flex_frame(mech *M, body *B, const yaml_node_t *key, const yaml_node_t *val);
/* A flexible body's marker: its key and value checked (a plain word, a valid and new name, a
 * mapping of the keys in ok; what, of size whatlen, then names the marker); its variables: global
 * position _p_<m>_k and axes _x_ _y_ _z_<m>_k, planar (Rn NULL) from the angle text phi (variable
 * _phi_<m>) and the point (s[0], s[1]) in the body frame, spatial from the point s and the node's
 * axes Rn (row-major) in the body frame */
int mech_flex_marker_key(mech *M, const body *B, const yaml_node_t *key, const yaml_node_t *val, const char *const *ok,
                         char *what, size_t whatlen);
int mech_flex_marker_frame(mech *M, marker *K, const body *B, const char *phi, const char *const s[3],
                           const char *const Rn[9]);
/* a new flexible body of the source for B, with nf elastic coordinates named qf (invariants: caller) */
struct mbl_ffr_body *mech_flex_new(mech *M, body *B, int nf, const char *const *qf);
int mech_read_beam(mech *M, const yaml_node_t *key, const yaml_node_t *val);
int mech_read_beam3(mech *M, const yaml_node_t *key, const yaml_node_t *val);
/* `type: modal` in a planar mechanism (modal_body.c; a spatial one: mech_read_modal3) */
int mech_read_modal(mech *M, const yaml_node_t *key, const yaml_node_t *val);
/* the path of a file named in the model: relative to the model file's directory (as given for a
 * model without a file, or an absolute path) */
char *mech_rel_path(mech *M, const char *name);
/* a real Matrix Market file (the name in node n, relative to the model file) into a dense
 * column-major array: rows x cols checked, or taken from the file where *rows or *cols is 0
 * (modal_body.c; errors name what, the file and its line) */
int mech_read_mtx(mech *M, const yaml_node_t *n, const char *what, int *rows, int *cols, double **out);
/* the geometric stiffness file of map's key (nm x nm, symmetric to MODAL_GEO_SYM_TOL) into *out
 * (column-major; NULL when the key is absent) (modal_body.c) */
int mech_modal_geo_file(mech *M, const yaml_node_t *map, const char *key, const char *what, int nm, double **out);
/* the floating frame of a spatial flexible body (beam3.c): the body bi named by key with
 * coordinates <b>_x, _y, _z and Euler parameters <b>_e0.._e3 from 'position', 'axis', 'angle',
 * 'velocity', 'angular_velocity' of val, its rotation texts as a rigid body's, no rigid inertia */
int mech_flex_frame3(mech *M, const yaml_node_t *key, const yaml_node_t *val, const char *what, int *bi);
/* the axes Rx(th0) Ry(th1) Rz(th2) (row-major texts) of small rotation texts th (beam3.c) */
void mech_flex_rot_xyz(mech *M, const char *const th[3], const char *Rn[9]);
/* ---- modal_body3.c: spatial modal bodies (model/ffr3.h) ---- */
struct fe_invariants;
struct fe_basis;
/* `type: modal` in a spatial mechanism: the hand-written `invariants:` block and markers' files */
int mech_read_modal3(mech *M, const yaml_node_t *key, const yaml_node_t *val);
/* the same for a part an FE code wrote (modal_fe.c): the `fe:` node fe reduced by src/fe */
int mech_read_modal_fe(mech *M, const yaml_node_t *key, const yaml_node_t *val, const yaml_node_t *fe);
/* The spatial modal body named by key from the invariants inv of its k modes and the basis b (its
 * b->niface markers named marker_names, at b->X moved by b->T eta): the frame from val's
 * 'position', 'axis', 'angle', 'velocity', 'angular_velocity', damping from val's 'damping'
 * {alpha, beta} (alpha Mc + beta K); the modal coordinates <b>_eta1..<b>_eta<k>. The arrays are
 * copied. */
int mech_modal3_build(mech *M, const yaml_node_t *key, const yaml_node_t *val, const struct fe_invariants *inv,
                      const struct fe_basis *b, const char *const *marker_names);
/* a force f and torque tq (global texts, may be NULL) at marker K of a spatial modal body: their
 * generalized forces on the modal coordinates (T_trans^T A^T f + T_rot^T A^T tq) into B->Fq */
void mech_modal3_apply(mech *M, const marker *K, body *B, char *const f[3], char *const tq[3], const char *sg);
/* gravity g (texts) on flexible body B: its structured term carries it */
int mech_flex_gravity(mech *M, body *B, const char *const g[3], const yaml_node_t *at);
/* the parameter factors of a beam's invariants (model/ffr.h mbl_ffr_factor): kind, class, the
 * text of the factor, its value, where it was written; entries without text are skipped */
typedef struct mech_flex_fac {
    int kind, cls;
    const char *text;
    double value;
    const yaml_node_t *at;
} mech_flex_fac;
int mech_flex_factors(mech *M, struct mbl_ffr_body *f, const mech_flex_fac *fa, int n);
/* a beam's positive number `key` of val (its text in *txt, may be NULL): 0; 1 when it is absent and
 * not required; an error naming the key otherwise */
int mech_beam_number_t(mech *M, const yaml_node_t *val, const char *key, const char *what, int required, double *out,
                       const char **txt);
/* a beam's optional Rayleigh damping {alpha, beta} (each >= 0): values in ab, texts and nodes of
 * the keys given (NULL where absent); zeta_ok: the map may also hold a modal body's `zeta`
 * (read by mech_modal_zeta) */
int mech_beam_damping(mech *M, const yaml_node_t *val, const char *what, double ab[2], const char *dt[2],
                      yaml_node_t *dnode[2], int zeta_ok);
/* a modal body's modal damping (modal_damping.c): from val's `damping: {zeta}` (one ratio or k), else
 * the mechanism's `modal_damping`; *Cm = Mf Phi diag(2 zeta omega) Phi^T Mf of the k x k modal
 * mass Mf and stiffness Kf (column-major), NULL when neither is given */
int mech_modal_zeta(mech *M, const yaml_node_t *val, const char *what, int k, const double *Mf, const double *Kf,
                    mbla_csc **Cm);
/* the top-level `modal_damping` after the bodies are read: a number >= 0, and refused when the
 * mechanism has no modal body (it would have no effect) */
int mech_modal_damping_check(mech *M, const yaml_node_t *root);
/* a beam's optional `geometric_stiffness: true | false` (default true) in *geo */
int mech_beam_geometric_key(mech *M, const yaml_node_t *val, const char *what, int *geo);
/* the validity item of a beam body's mean axial strain, its tip's axial displacement utip over
 * its length Lt (MBL_MECH_BEAM_STRAIN_NOTE) */
int mech_beam_strain_validity(mech *M, const body *B, const char *utip, const char *Lt);
/* the foreshortening 1/2 qf^T H(X_n) qf of node n + 1 of beam B (B->gle set) as a text (beam_body.c), or
 * NULL when out of memory */
const char *mech_beam_sh_text(mech *M, const body *B, int n);
/* the elastic part of the virtual work of a force f and torque tq (global texts, may be NULL) at
 * marker m of a flexible body (the frame part goes through B->F, B->N like a rigid body's) */
void mech_flex_apply(mech *M, int m, char *const f[3], char *const tq[3], const char *sg);
/* push the accumulated elastic generalized forces of flexible body B into the source */
int mech_flex_forces(mech *M, body *B);
/* a reaction applied at another body's point cannot act on a flexible body: the error */
int mech_flex_refuse(mech *M, const body *B, const yaml_node_t *at, const char *what);

/* ---- force.c: force elements and energies ---------------------------------------------------- */

int mech_read_force(mech *M, const yaml_node_t *key, const yaml_node_t *v);
int mech_energies_and_forces(mech *M, int line, int col);

/* ---- relative*.c: joint coordinates on a spanning tree (source 003 Ch. 2-4; mech/relative.h) -- */

/* After the joints' names, types and markers are read: choose the spanning tree (tree.c), give
 * the tree joints their coordinates and write every body's pose recursively; bodies no tree
 * joint reaches keep absolute coordinates (floating bases). */
int mech_rel_tree(mech *M);
/* The moving bodies' global centre of mass and orientation (src->kinematics), for B. */
int mech_rel_kinematics(mech *M);
/* The generalized forces on the joint coordinates (and the roots' absolute coordinates) by
 * virtual power, from the bodies' accumulated forces and moments. */
int mech_rel_forces(mech *M);
/* JQ(joint, k): the k-th (1-based) joint coordinate of a joint, in either formulation. */
const char *mech_joint_coord_k(mech *M, int ji, int k, char *why, size_t whylen);
/* FX .. TZ of a tree joint (relative coordinates): the Newton-Euler balance of the subtree it
 * carries; e: the axes of the components (global or a marker's). NULL with why when unavailable. */
const char *mech_rel_reaction(mech *M, int ji, int torque, int comp, char *const e[3], char *why, size_t whylen);
/* A force element with force f and torque tq (global texts) on marker mi and their reaction on
 * marker re, at mi's point: when mi's body is in the tree's structured term and re is on the parent
 * body of its revolute or prismatic tree joint, the pair acts on that joint's coordinate only
 * (virtual power: tq . u + f . (u x (p_i - p_axis)), or f . u): its generalized force goes to the
 * joint (Qd) and the loads to the bodies' Fd, Nd (reactions), and 1 is returned; 0 otherwise. When
 * the element's frame is the joint's marker j, fc and tc (its components in that frame) give tq . u
 * and f . u as their z components exactly (z_j . z_j = 1 is no expression to differentiate). */
int mech_rel_joint_load(mech *M, int mi, int re, int frame, const char *const fc[3], const char *const tc[3],
                        char *const f[3], char *const tq[3]);

#endif
