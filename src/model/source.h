/* The text of a `model: dae` file as read from YAML, before any expression is parsed.
 * Every item keeps the file position of its key and of its text so that later errors
 * (unknown names, bad expressions) can name file:line:column. Internal to the library. */
#ifndef MBLIN_MODEL_SOURCE_H
#define MBLIN_MODEL_SOURCE_H

#include "mblin/model.h"
#include "mblin/status.h"

typedef struct mbl_src_item {
    char *key;      /* name (mapping key), NULL for list items and single values */
    char *key2;     /* second-level key (mass_matrix column); for a variable a mechanism made, the
                     * element it was made for ("force 'spring'", named in messages); else NULL */
    char *text;     /* the scalar's text (expression or number) */
    int key_line, key_col; /* 1-based position of the key */
    int line, col;         /* 1-based position of the first character of text */
} mbl_src_item;

typedef struct mbl_src_list {
    mbl_src_item *items;
    int n, cap;
    /* 1: every item's key and text are cut from the source's item_blocks (the mechanism compiler's
     * coordinates and constraint rows: 48,000 texts at the N = 2000 four-bar), freed with them and
     * never one by one (an item's key2 is its own as in any list) */
    int blocks;
} mbl_src_list;

/* A user routine of the file's `routines:` (docs/user-routines.md; include/mblin/user.h): read by
 * model/source.c (model: dae) and by src/mech (model: mechanism, its inputs' texts translated to
 * the equation level as its forces' are), registered and resolved by model/routines.c. */
typedef struct mbl_src_routine {
    char *name;          /* its key: the routine's name in messages */
    char *library;       /* the `library:` path as written, relative to the model file's folder; NULL:
                            the calling program's routine (mbl_load_options.user_routines) */
    char *symbol;        /* `routine:`, the function's name (default: the key) */
    int partials;        /* 1: `partials: yes` (the routine writes its partials) */
    mbl_src_list inputs; /* the input expressions, in order (text, line, col; key NULL) */
    mbl_src_list outputs;/* the output names, in order (key = text = the name, its position) */
    int line, col;       /* of the key */
    int lib_line, lib_col; /* of the library's value (0 when none) */
} mbl_src_routine;

struct model_text_block;

typedef struct mbl_src {
    char *file;  /* file name used in messages */
    char *name;  /* model name ("" if none) */
    struct model_text_block *item_blocks; /* the texts of the lists with blocks set (model_block_bytes) */
    mbl_src_list parameters, coordinates, velocities, variables, forces, inputs, outputs;
    mbl_src_list constraints, nonholonomic, mass_matrix, states, velocity_states;
    /* held velocities keyed by an expression (model/held.c): key the expression (its position
     * key_line, key_col), key2 the label as written (NULL: the key), text the value */
    mbl_src_list held_velocities;
    /* the same written by a mechanism for its bodies' velocity and angular_velocity (relative
     * coordinates): dropped where the joints leave them no velocity to depend on */
    mbl_src_list held_body_velocities;
    /* user ODE states X (name: value), their equations (name: der(X) = expr, or an implicit
     * equation with '='), implicit algebraic variables (name: equation); source 000 Eq. 10 */
    mbl_src_list ode_states, ode, implicit_variables;
    /* trim: (at: trim, model/trim.c): targets {expression: value}, free inputs (a list of input
     * names), the steady motion's accelerations {coordinate: expression} (default 0) */
    mbl_src_list trim_targets, trim_free, trim_acc;
    /* 1: the coordinates trim_acc names are solved too, not held at the guess (a mechanism's
     * trim.turn names every body coordinate: the turn's centre and phase are left to the
     * minimum-norm steps); trim_targets' key2, when set, is the label as written (measures) */
    int trim_acc_solve;
    /* spin_speeds: {parameter: unit}: the parameters that are spin speeds (rad/s, Hz or rpm), for
     * the order lines and critical speeds of a sweep over them (docs/model-files.md) */
    mbl_src_list spin_speeds;
    mbl_src_item kinetic_energy, potential_energy, dissipation; /* text NULL when absent */
    mbl_src_item at;     /* linearize.at: text NULL when absent (default equilibrium) */
    mbl_src_item time;   /* linearize.time: time of the operating point, NULL = 0 */
    mbl_src_item pen_alpha, pen_xi, pen_omega; /* linearize.penalty_alpha, _xi, _omega: the penalty
                           method's alpha, xi, omega (source 001 Sec. 5); NULL = the option's */
    mbl_src_list pen_mat[3]; /* linearize.penalty_Xi, _Theta, _Omega: the entries, row by row */
    int pen_mat_rows[3];     /* 0: absent; -1: a diagonal (a list of numbers); R: R x R (a list of R lists) */
    int pen_mat_line[3], pen_mat_col[3]; /* the key's position */
    int has_mass_matrix;
    int named_constraints, named_nonholonomic; /* 1 when given as a mapping {name: equation} */
    double mem_budget;  /* bytes building the model may use (mbl_load_options.mem_budget; set by the
                           loader, 0 when the source was made otherwise: no check) */
    int forward_jacobian; /* mbl_load_options.forward_jacobian (set by the loader): model_compile's Jacobian
                             values by forward mode (src/model/compile.c) */
    int from_mechanism; /* 1 when compiled from `model: mechanism` (its parameters are partly evaluated into numbers) */
    int no_drawing;     /* mbl_load_options.no_drawing (set by the loader): a mechanism's drawing not built */
    char *no_sens;      /* why sensitivities are not available for this model (NULL: they are) */
    /* parameters.n flags (NULL: none): 1 where a mechanism used the parameter as a number that fixes
     * the equations' geometry (a marker's or body's orientation, a beam's axis, a marker of a tree in
     * relative coordinates), so the equations carry no derivative by it */
    unsigned char *param_numeric;
    /* parameters.n flags (NULL: none): 1 where a mechanism evaluated the parameter into a number
     * anywhere (its geometry, initial positions and velocities, assembly, another parameter's
     * value): such a parameter cannot change in place (mbl_model_set_param); the others appear in
     * the equations only by name */
    unsigned char *param_evaluated;
    struct mbl_ffr_body *ffr;  /* flexible bodies (model/ffr.h): the structured term, nffr of them */
    int nffr;
    /* a mechanism's drawing (mbl_model_geometry): three items per point (x, y, z texts), key the
     * point's name (a marker, or a body's name for its origin), key2 its body; draw_links: one
     * item per joint, key its name, key2 its type, text "i j" (the point indices of its markers) */
    mbl_src_list draw, draw_links;
    /* relative-coordinate mechanisms (src/mech/relative.c): the global kinematics of each moving
     * body, key = body name, 7 items per body when spatial (centre of mass x, y, z; Euler
     * parameters e0..e3), 3 when planar (centre of mass x, y; angle), for the velocity
     * transformation B (mbl_model_velocity_transformation) */
    mbl_src_list kinematics;
    int kin_planar;
    /* a mechanism's rigid spatial bodies in absolute coordinates: 7 items per body, key the body's
     * name, text the names of its origin's coordinates x, y, z and of its Euler parameters e0..e3,
     * for at: steady's turning frames (src/opoint/steady_frames.c; flexible bodies' frames come from
     * ffr) */
    mbl_src_list rigid_frames;
    /* validity items, checked at the operating point once it is solved (a mechanism's bushings:
     * the rotation between their markers against the small-angle limit of AX AY AZ): text = the
     * quantity (an expression of the coordinates), key = what it is ("force 'mount': markers 'B'
     * and 'O' rotated (rad)"), key2 = its limit, a number and what passing it means ("0.05, where
     * ..."). |value| above the limit adds "<key> <value> at the point, beyond <key2>" to the
     * point's notes (model_validity_notes); never a refusal. */
    mbl_src_list validity;
    /* singular items, a refusal where validity items are notes: text = a quantity that is 0 where
     * the model's coordinates are singular (a body's 3-1-3 Euler angles: sin(theta)), key = what
     * it is, key2 = its limit (the number it starts with) and what to do. |value| below the limit
     * at a solved point or along a simulation is an error (model_singular_check). */
    mbl_src_list singular;
    struct mbl_rtree *rtree;   /* the tree's structured term (model/rtree.h), NULL without one */
    struct model_dataset *data; /* the `data:` section (model/data.h), ndata sets */
    int ndata;
    struct mbl_pmech_src *pmech; /* planar rigid bodies and revolute joints evaluated numerically
                                    (model/pmech_num.h), NULL without them */
    /* `routines:` (nroutines of them), and what the load allows of them (mbl_load_options, set by
     * the loader): running a library's code, the calling program's own routines */
    mbl_src_routine *routines;
    int nroutines;
    int allow_user_code;
    const struct mbl_user_routine_def *user_routines;
    int nuser_routines;
} mbl_src;

/* A one-line error "file:line:col: what" at a YAML node (node may be NULL: "file: what"), used by
 * both readers (model: dae here, model: mechanism in src/mech/). Returns code. */
struct yaml_node_s;
int model_yaml_error(mbl_status *st, int code, const char *file, const struct yaml_node_s *node, const char *fmt,
                   ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* The reader of `model: dae` (src/load reads the file once and dispatches on `model:`). */
struct yaml_parser_s;
struct yaml_document_s;
/* An empty source named `file` (its model name ""), NULL when out of memory. */
mbl_src *model_src_new(const char *file);
struct model_text_block;
/* A scalar's text shorter than this (bytes, without its NUL: libyaml's smallest buffer) is kept
 * in the document's blocks, a longer one is libyaml's own, which a reader may take over */
enum { MODEL_YAML_SHORT_TEXT = 16 };
/* The first YAML document of text (YAML or JSON; `file` names it in messages) from the parser,
 * lists and mappings nested at most max_nesting deep, aliases refused; *more is set when a
 * second document follows. nodes: room for that many nodes at first (the array grows beyond it),
 * or 0 to estimate it from the text. 0, or a negative code with "file:line:col: what" in st. The
 * document's texts and entries are cut from *blocks (NULL at first): free the document, also
 * after an error, with model_yaml_doc_free, never yaml_document_delete. */
int model_yaml_first_document(struct yaml_parser_s *parser, struct yaml_document_s *doc, const char *text, size_t len,
                              size_t nodes, const char *file, int max_nesting, int *more, struct model_text_block **blocks,
                              mbl_status *st);
/* Free a document of model_yaml_first_document and its blocks */
void model_yaml_doc_free(struct yaml_document_s *doc, struct model_text_block **blocks);
/* Read a `model: dae` document's root (root may be NULL: an empty file) into src (from
 * model_src_new); errors as "file:line:col: what" in st. */
int model_src_read_dae(struct yaml_document_s *doc, const struct yaml_node_s *root, mbl_src *src, mbl_status *st);
void model_src_free(mbl_src *src);
/* `routines:` of a model file (node: its value) into src->routines; errors "file:line:col: what".
 * Also the mechanism's reader's (src/mech). Freed by model_src_free. */
int model_src_read_routines(const char *file, struct yaml_document_s *doc, const struct yaml_node_s *node, mbl_src *src,
                            mbl_status *st);
/* Frees what of src nothing reads once all its expressions are parsed (model_from_src, before the
 * tapes compile, whose scratch then has the room): every list but the mass matrix, every text.
 * What stays: what model_check_mass names in its messages (the file, the mass matrix's keys and
 * positions, the kinetic energy's position) and what a mechanism handed over (data sets, flexible
 * bodies, trees, planar mechanisms). */
void model_src_drop_parsed(mbl_src *src);

#endif
