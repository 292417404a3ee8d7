/* The names of a model file: the hash index that resolves them, their checks (unique, not
 * reserved), and the generalized speeds that the `velocities` key defines. */
#include "core/name_word.h"
#include "model/formulate.h"
#include "model/symbols_index.h"

#include <stddef.h>

/* Name lookup: every list of named items gets a hash index the first time it is searched, so
 * resolving names costs O(1) however large the model (a linear scan made loading O(n^2)). A slot
 * holds the name's hash beside the item index, so a probe compares keys only when the hashes
 * agree (comparing every probed key cost a cache miss on the item and one on its text: with
 * strlen on each, 16 % of the N = 10^4 mechanism four-bar's run). */
typedef struct name_index {
    const mbl_src_list *list;
    uint64_t *slot; /* open addressing: hash << 32 | (item index + 1), 0 empty */
    size_t cap;
} name_index;

#define NAME_INDEXES 16
static _Thread_local name_index name_idx[NAME_INDEXES];

uint64_t model_name_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

/* The resolver's index: every name the resolver looks for (parameters, coordinates, inputs, ode
 * states, implicit variables, variables, named constraints, named non-holonomic constraints, in
 * that order of precedence) in one table, so a name costs one hash and one probe instead of a
 * search of each list in turn (about 4.5 searches a name in the bicycle). The lists' counts are
 * kept to notice an append; model_name_index_reset drops it with the per-list indexes. */
typedef struct symbol_index {
    const mbl_src *src;
    long count; /* the lists' items together when built (lists only grow: an append changes it) */
    int named_constraints, named_nonholonomic;
    uint64_t *slot; /* hash >> 32 << 32 | list << 28 | (item index + 1), 0 empty */
    size_t cap;
    /* A guess before the table, taken only when no name is in the index twice (then a name's item
     * is the one the table gives, wherever it is found). At N = 10^4 the table (512 KB) and the
     * items its slots name are cache misses, two a lookup: 3.4 % of the four-bar's process (perf),
     * for 370,000 lookups. Sources name their items mostly in the order they are listed (xB7, yB7,
     * xB8, ... in the energies and constraints), and the names of one first letter mostly in one
     * list: the neighbours of the item last found of the name's first letter are tried first, and
     * the name is hashed only when none is it (the neighbours of each list's last item, the last
     * list first, behind a cache by hash: 277 instructions a lookup at N = 10^4). Compared by words
     * (below), the guess costs fewer instructions than the probe too: taken at any size. */
    int guess; /* no name twice (and the words made) */
    uint32_t by_first[128]; /* by a name's first character: list << 28 | (item index + 1) last found, 0 none */
    /* With the guess: each name's first 8 bytes as a word (key_word), list a's item i at word[word_at[a] + i].
     * A neighbour is then one compare: the guess cost 166 instructions a lookup comparing keys (xB9994
     * against xB9996 runs to the fifth character), more than the probe (~120). */
    uint64_t *word;
    /* beside them, each name's last 8 bytes as a word (from 8 bytes on: 0 below) and its length: the
     * mechanism compiler's names share their first 8 bytes (rear_frame_e0 .. rear_frame_e3 beside
     * rear_frame_x ..), so the first word alone left the rest compared byte by byte for most
     * neighbours (the bicycle: 330 instructions a lookup); the two words and the length are the
     * whole name up to 16 bytes */
    uint64_t *tail;
    uint32_t *len;
    size_t word_at[MODEL_SYM_LISTS];
} symbol_index;

static _Thread_local symbol_index sym_idx;

/* list a of s, in the order of MODEL_SYM_* */
static const size_t sym_list_off[MODEL_SYM_LISTS] = {
    offsetof(mbl_src, parameters), offsetof(mbl_src, coordinates),        offsetof(mbl_src, inputs),
    offsetof(mbl_src, ode_states), offsetof(mbl_src, implicit_variables), offsetof(mbl_src, variables),
    offsetof(mbl_src, constraints), offsetof(mbl_src, nonholonomic)};

static const mbl_src_list *sym_list(const mbl_src *s, int a)
{
    return (const mbl_src_list *)(const void *)((const char *)s + sym_list_off[a]);
}

/* list a names its items (the constraints' lists only when the file names them) */
static int sym_list_named(const mbl_src *s, int a)
{
    return !((a == MODEL_SYM_CONSTRAINT && !s->named_constraints) || (a == MODEL_SYM_NONHOLONOMIC && !s->named_nonholonomic));
}

static long sym_count(const mbl_src *s)
{
    return (long)s->parameters.n + s->coordinates.n + s->inputs.n + s->ode_states.n + s->implicit_variables.n +
           s->variables.n + s->constraints.n + s->nonholonomic.n;
}

void model_name_index_reset(void)
{
    for (int i = 0; i < NAME_INDEXES; i++) {
        mbl_free(name_idx[i].slot);
        memset(&name_idx[i], 0, sizeof name_idx[i]);
    }
    mbl_free(sym_idx.slot);
    mbl_free(sym_idx.word);
    memset(&sym_idx, 0, sizeof sym_idx);
}

/* name[0 .. len)'s last 8 bytes as a word, for len >= 8 (0 below: the first word is all of it) */
static inline uint64_t key_tail(const char *name, size_t len) { return len >= 8 ? name_word(name + len - 8, 8) : 0; }

void model_name_index_forget(const mbl_src *s)
{
    (void)s; /* every index: the per-list ones hold no source to compare */
    model_name_index_reset();
}

/* name[0 .. len)'s word (core/name_word.h); 0 when one of its bytes is NUL (no key holds a NUL).
 * Two names of fewer than 8 characters are equal exactly when their words are (a word's zeros
 * begin at its name's length); longer ones when the rest is equal too. */
static inline uint64_t key_word(const char *name, size_t len)
{
    uint64_t w = name_word(name, len);
    return name_word_has_nul(w, len) ? 0 : w;
}

/* the words and lengths of every list's names (sym_idx.word, tail, len: one block); 1, or 0
 * without memory or with a name of 2^32 bytes or more (then no guess) */
static int symbol_words_make(const mbl_src *s, size_t total)
{
    size_t nw = total ? total : 1;
    uint64_t *word = mbl_alloc_array(2 * nw + (nw + 1) / 2, sizeof *word);
    if (!word) return 0;
    uint64_t *tail = word + nw;
    uint32_t *len = (uint32_t *)(void *)(tail + nw);
    size_t at = 0;
    for (int a = 0; a < MODEL_SYM_LISTS; a++) {
        const mbl_src_list *l = sym_list(s, a);
        sym_idx.word_at[a] = at;
        if (!sym_list_named(s, a)) continue; /* not in the index (keys may be NULL): no guess starts there */
        for (int i = 0; i < l->n; i++, at++) {
            const char *k = l->items[i].key;
            size_t n = strlen(k);
            if (n > UINT32_MAX) {
                mbl_free(word);
                return 0;
            }
            word[at] = key_word(k, n), tail[at] = key_tail(k, n), len[at] = (uint32_t)n;
        }
    }
    sym_idx.word = word, sym_idx.tail = tail, sym_idx.len = len;
    return 1;
}

/* (Re)build the resolver's index; 0, or -1 when it cannot (no memory, too many names): the
 * caller then searches the lists one by one. */
static __attribute__((noinline)) int symbol_index_build(const mbl_src *s)
{
    mbl_free(sym_idx.slot);
    mbl_free(sym_idx.word);
    memset(&sym_idx, 0, sizeof sym_idx);
    size_t total = 0;
    for (int a = 0; a < MODEL_SYM_LISTS; a++) {
        if (sym_list(s, a)->n >= (1 << 28) - 1) return -1;
        total += (size_t)sym_list(s, a)->n;
    }
    size_t cap = 16;
    while (cap < 2 * total) cap *= 2;
    uint64_t *slot = mbl_calloc(cap, sizeof *slot);
    if (!slot) return -1;
    int unique = 1;
    /* the lowest precedence first, each list from its end: the first occurrence overwrites */
    for (int a = MODEL_SYM_LISTS - 1; a >= 0; a--) {
        if (!sym_list_named(s, a)) continue;
        const mbl_src_list *l = sym_list(s, a);
        for (int i = l->n - 1; i >= 0; i--) {
            const char *k = l->items[i].key;
            uint64_t hk = model_name_hash(k, strlen(k)), tag = hk >> 32;
            size_t h = (size_t)hk & (cap - 1);
            while (slot[h]) {
                uint32_t v = (uint32_t)slot[h];
                if ((slot[h] >> 32) == tag && !strcmp(sym_list(s, (int)(v >> 28))->items[(v & 0x0fffffffu) - 1].key, k)) {
                    unique = 0;
                    break;
                }
                h = (h + 1) & (cap - 1);
            }
            slot[h] = tag << 32 | (uint64_t)a << 28 | (uint64_t)(i + 1);
        }
    }
    sym_idx.src = s;
    sym_idx.count = sym_count(s);
    sym_idx.named_constraints = s->named_constraints;
    sym_idx.named_nonholonomic = s->named_nonholonomic;
    sym_idx.slot = slot;
    sym_idx.cap = cap;
    sym_idx.guess = unique && symbol_words_make(s, total);
    return 0;
}

/* key (NUL-terminated) is name[0 .. len): inline, without strncmp's call (the names are short) */
static inline int key_is(const char *key, const char *name, size_t len)
{
    size_t j = 0;
    while (j < len && key[j] && key[j] == name[j]) j++;
    return j == len && key[j] == '\0';
}

/* the index's probe for name (hash hn): its list in *list, its slot in *found, its item; -1 when absent */
static inline int probe_symbol(const mbl_src *s, const char *name, size_t len, uint64_t hn, int *list, uint64_t *found)
{
    uint64_t tag = hn >> 32;
    const uint64_t *slot = sym_idx.slot;
    size_t mask = sym_idx.cap - 1;
    for (size_t h = (size_t)hn & mask; slot[h]; h = (h + 1) & mask) {
        if ((slot[h] >> 32) != tag) continue;
        uint32_t v = (uint32_t)slot[h];
        int a = (int)(v >> 28), i = (int)(v & 0x0fffffffu) - 1;
        if (key_is(sym_list(s, a)->items[i].key, name, len)) return *found = slot[h], *list = a, i;
    }
    return -1;
}

/* the index's probe (the guess's too when it misses): the item found is noted as the last of its first letter */
static __attribute__((noinline)) int find_probed(const mbl_src *s, const char *name, size_t len, int *list)
{
    uint64_t found;
    int i = probe_symbol(s, name, len, model_name_hash(name, len), list, &found);
    if (i >= 0 && len && (unsigned char)name[0] < 0x80) sym_idx.by_first[(unsigned char)name[0]] = (uint32_t)found;
    return i;
}

/* model_find_symbol with the guess (sym_idx.guess), inline there (one frame and one look at the
 * thread's index a lookup: 163 -> 146 instructions at N = 1000): the neighbours of the item last found of the
 * name's first letter (x, y interleaved: 2 away; (xB7 - xB6)^2 after (xB6 - xB5)^2: 4 away) by their
 * words, the key's rest compared only for names of 8 characters or more; the probe when none is it */
static inline int find_guessed(const mbl_src *s, const char *name, size_t len, int *list)
{
    symbol_index *x = &sym_idx;
    unsigned char c0 = len ? (unsigned char)name[0] : 0x80;
    uint32_t by = c0 < 0x80 ? x->by_first[c0] : 0;
    uint64_t w = by ? key_word(name, len) : 0;
    if (w) {
        static const int near[] = {0, 2, -2, 4, 1, -1, 3, -3, -4}; /* the four-bar's most often first */
        int a = (int)(by >> 28), last = (int)(by & 0x0fffffffu) - 1;
        const mbl_src_list *l = sym_list(s, a);
        const uint64_t *word = x->word + x->word_at[a], *tail = x->tail + x->word_at[a];
        const uint32_t *klen = x->len + x->word_at[a];
        uint64_t tw = key_tail(name, len);
        for (size_t d = 0; d < sizeof near / sizeof *near; d++) {
            int i = last + near[d];
            /* equal words: the same name below 8 bytes; from 8 on, with equal tails and lengths up
             * to 16 bytes; longer, the middle compared */
            if ((unsigned)i < (unsigned)l->n && word[i] == w &&
                (len < 8 || (tail[i] == tw && klen[i] == len && (len <= 16 || key_is(l->items[i].key + 8, name + 8, len - 8))))) {
                x->by_first[c0] = (uint32_t)a << 28 | (uint32_t)(i + 1);
                return *list = a, i;
            }
        }
    }
    return find_probed(s, name, len, list);
}

/* the lookup without the index (it could not be built): the lists one by one, in the same order */
static __attribute__((noinline)) int find_listed(const mbl_src *s, const char *name, size_t len, int *list)
{
    for (int a = 0; a < MODEL_SYM_LISTS; a++) {
        if (!sym_list_named(s, a)) continue;
        int i = model_find_name(sym_list(s, a), name, len);
        if (i >= 0) return *list = a, i;
    }
    return -1;
}

/* the lookup when the index is not the source's: built anew, or the lists one by one */
static __attribute__((noinline)) int find_rebuilt(const mbl_src *s, const char *name, size_t len, int *list)
{
    if (symbol_index_build(s)) return find_listed(s, name, len, list);
    return find_probed(s, name, len, list); /* (the guess has no last item yet) */
}

/* The other ways of looking up out of line, each a tail call: with any of them inline, the registers
 * it needs were saved and restored on every lookup (18 instructions of 370,016 at N = 10^4). */
int model_find_symbol(const mbl_src *s, const char *name, size_t len, int *list)
{
    const symbol_index *x = &sym_idx;
    int current = x->src == s && x->slot && x->count == sym_count(s) && x->named_constraints == s->named_constraints &&
                  x->named_nonholonomic == s->named_nonholonomic;
    if (!current) return find_rebuilt(s, name, len, list);
    return x->guess ? find_guessed(s, name, len, list) : find_probed(s, name, len, list);
}

int model_find_name(const mbl_src_list *l, const char *name, size_t len)
{
    if (l->n < 8) { /* a scan; the first character first (most names differ there) */
        for (int i = 0; i < l->n; i++) {
            const char *k = l->items[i].key;
            if (len && k[0] != name[0]) continue;
            if (!strncmp(k, name, len) && k[len] == '\0') return i;
        }
        return -1;
    }
    name_index *ix = NULL;
    for (int i = 0; i < NAME_INDEXES && !ix; i++)
        if (name_idx[i].list == l) ix = &name_idx[i];
    if (!ix) {
        for (int i = 0; i < NAME_INDEXES && !ix; i++)
            if (!name_idx[i].list) ix = &name_idx[i];
        size_t cap = 16;
        while (cap < 2 * (size_t)l->n) cap *= 2;
        uint64_t *slot = ix ? mbl_calloc(cap, sizeof *slot) : NULL;
        if (!slot) { /* no room or no memory: scan */
            for (int i = 0; i < l->n; i++)
                if (!strncmp(l->items[i].key, name, len) && l->items[i].key[len] == '\0') return i;
            return -1;
        }
        ix->list = l;
        ix->slot = slot;
        ix->cap = cap;
        for (int i = l->n - 1; i >= 0; i--) { /* first occurrence wins */
            const char *k = l->items[i].key;
            uint64_t hk = model_name_hash(k, strlen(k)), tag = hk >> 32;
            size_t h = (size_t)hk & (cap - 1);
            while (slot[h] && !((slot[h] >> 32) == tag && !strcmp(l->items[(uint32_t)slot[h] - 1].key, k)))
                h = (h + 1) & (cap - 1);
            slot[h] = tag << 32 | (uint64_t)(i + 1);
        }
    }
    uint64_t hn = model_name_hash(name, len), tag = hn >> 32;
    for (size_t h = (size_t)hn & (ix->cap - 1); ix->slot[h]; h = (h + 1) & (ix->cap - 1)) {
        if ((ix->slot[h] >> 32) != tag) continue;
        int i = (int)(uint32_t)ix->slot[h] - 1;
        if (key_is(l->items[i].key, name, len)) return i;
    }
    return -1;
}

int model_check_names(loader *L)
{
    /* lambda and mu are not reserved: lambda(c) and mu(c) are calls, told apart from a symbol of
     * that name by the parenthesis (a friction coefficient mu, a wavelength lambda) */
    static const char *reserved[] = {"t",    "pi",   "der",   "sin",  "cos",  "tan",   "asin", "acos",
                                     "atan", "atan2", "sinh", "cosh", "tanh", "exp",   "log",  "sqrt",
                                     "abs",  "sign",  "min",  "max",  "step"};
    const mbl_src_list *lists[] = {&L->src->parameters,  &L->src->coordinates,  &L->src->inputs,
                                   &L->src->variables,   &L->src->constraints,  &L->src->nonholonomic,
                                   &L->src->ode_states, &L->src->implicit_variables};
    const char *kinds[] = {"parameter",  "coordinate", "input", "variable", "constraint", "non-holonomic constraint",
                           "ode state", "implicit variable"};
    int nlists = 8;
    /* the reserved names' first letters (bit c - 'a') and longest length: most names are none of them
     * at once (the N = 10^4 four-bar's 50,000 names compared with all 21 cost 8 M instructions) */
    uint32_t firsts = 0;
    size_t longest = 0;
    for (size_t r = 0; r < sizeof reserved / sizeof *reserved; r++) {
        firsts |= (uint32_t)1 << (reserved[r][0] - 'a');
        if (strlen(reserved[r]) > longest) longest = strlen(reserved[r]);
    }
    /* a name in two lists: every name in one hash table, in the order checked, one probe each (a
     * search of every earlier list before). A slot: hash >> 32 << 32 | list << 28 | (index + 1);
     * the first occurrence stays, the one model_find_name gives. Without memory: the searches. */
    size_t total = 0, cap = 16;
    for (int a = 0; a < nlists; a++) total += (size_t)lists[a]->n;
    while (cap < 2 * total) cap *= 2;
    uint64_t *slot = total < (1u << 28) ? mbl_calloc(cap, sizeof *slot) : NULL;
    int rc = 0;
    for (int a = 0; a < nlists && !rc; a++) {
        if ((a == 4 && !L->src->named_constraints) || (a == 5 && !L->src->named_nonholonomic)) continue;
        for (int i = 0; i < lists[a]->n && !rc; i++) {
            const mbl_src_item *it = &lists[a]->items[i];
            const char *nm = it->key;
            int ok = (nm[0] == '_' || (nm[0] >= 'A' && nm[0] <= 'Z') || (nm[0] >= 'a' && nm[0] <= 'z'));
            const char *c = nm;
            for (; *c && ok; c++)
                ok = *c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9');
            if (!ok) {
                rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: %s name '%s' is not a valid name (letters, digits, _)",
                               L->src->file, it->key_line, it->key_col, kinds[a], nm);
                break;
            }
            size_t len = (size_t)(c - nm);
            if (len <= longest && nm[0] >= 'a' && nm[0] <= 'z' && (firsts >> (nm[0] - 'a') & 1))
                for (size_t r = 0; r < sizeof reserved / sizeof *reserved && !rc; r++)
                    if (nm[0] == reserved[r][0] && !strcmp(nm, reserved[r])) /* (the first character first) */
                        rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: '%s' is reserved and cannot name a %s",
                                       L->src->file, it->key_line, it->key_col, nm, kinds[a]);
            if (rc) break;
            int b = -1, j = -1;
            if (slot) {
                uint64_t hk = model_name_hash(nm, len), tag = hk >> 32;
                size_t h = (size_t)hk & (cap - 1);
                for (; slot[h]; h = (h + 1) & (cap - 1)) {
                    uint32_t v = (uint32_t)slot[h];
                    int sb = (int)(v >> 28), sj = (int)(v & 0x0fffffffu) - 1;
                    if ((slot[h] >> 32) == tag && !strcmp(lists[sb]->items[sj].key, nm)) {
                        if (sb != a) b = sb, j = sj; /* (the same list twice: not this check's) */
                        break;
                    }
                }
                if (!slot[h]) slot[h] = tag << 32 | (uint64_t)a << 28 | (uint64_t)(i + 1);
            } else {
                for (int e = 0; e < a && b < 0; e++) {
                    if ((e == 4 && !L->src->named_constraints) || (e == 5 && !L->src->named_nonholonomic)) continue;
                    if ((j = model_find_name(lists[e], nm, len)) >= 0) b = e;
                }
            }
            if (b >= 0)
                rc = mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: duplicate name '%s': already a %s (line %d)",
                               L->src->file, it->key_line, it->key_col, nm, kinds[b], lists[b]->items[j].key_line);
        }
    }
    mbl_free(slot);
    if (rc) return rc;
    /* every ode state has one equation under 'ode', keyed by its name */
    for (int i = 0; i < L->src->ode.n; i++) {
        const mbl_src_item *it = &L->src->ode.items[i];
        if (model_find_name(&L->src->ode_states, it->key, strlen(it->key)) < 0)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: '%s' in ode is not an ode state (declare it under ode_states)",
                             L->src->file, it->key_line, it->key_col, it->key);
    }
    for (int i = 0; i < L->src->ode_states.n; i++) {
        const mbl_src_item *it = &L->src->ode_states.items[i];
        if (model_find_name(&L->src->ode, it->key, strlen(it->key)) < 0)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: ode state '%s' has no equation under 'ode'", L->src->file,
                             it->key_line, it->key_col, it->key);
    }
    /* keys that must name coordinates (velocities: the other keys define generalized speeds) */
    const mbl_src_list *bycoord[] = {&L->src->forces};
    const char *bykind[] = {"forces"};
    for (int a = 0; a < 1; a++)
        for (int i = 0; i < bycoord[a]->n; i++) {
            const mbl_src_item *it = &bycoord[a]->items[i];
            if (model_find_name(&L->src->coordinates, it->key, strlen(it->key)) < 0)
                return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: '%s' in %s is not a coordinate", L->src->file,
                                 it->key_line, it->key_col, it->key, bykind[a]);
        }
    for (int i = 0; i < L->src->mass_matrix.n; i++) {
        const mbl_src_item *it = &L->src->mass_matrix.items[i];
        if (model_find_name(&L->src->coordinates, it->key, strlen(it->key)) < 0)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: mass_matrix row '%s' is not a coordinate", L->src->file,
                             it->key_line, it->key_col, it->key);
        if (model_find_name(&L->src->coordinates, it->key2, strlen(it->key2)) < 0)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: mass_matrix column '%s' is not a coordinate", L->src->file,
                             it->key_line, it->key_col, it->key2);
    }
    return 0;
}

/* Generalized speeds (source 000 Eq. 14): a `velocities` key that is not a coordinate defines
 * u = T(q) q' by an expression linear in der(.). It becomes a variable of that name (usable in every
 * expression, der(u) its total derivative) and a user velocity state (W = u preferred by the state
 * selection), so the augmented matrix carries T = du/dq' and [T q']_q in its W rows. */
static int take_speed(loader *L, mbl_src_item it);

int model_take_speeds(loader *L)
{
    mbl_src *s = L->src;
    mbl_model *md = L->md;
    int keep = 0, nspd = 0;
    for (int i = 0; i < s->velocities.n; i++)
        if (model_find_name(&s->coordinates, s->velocities.items[i].key, strlen(s->velocities.items[i].key)) < 0) nspd++;
    if (!nspd) return 0;
    md->spd_what = mbl_calloc((size_t)nspd, sizeof *md->spd_what);
    if (!md->spd_what) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
    int rc = 0, i = 0, nvel = s->velocities.n;
    for (; i < nvel && !rc; i++) {
        mbl_src_item it = s->velocities.items[i];
        if (model_find_name(&s->coordinates, it.key, strlen(it.key)) >= 0) {
            s->velocities.items[keep++] = it;
            continue;
        }
        rc = take_speed(L, it);
        if (rc == 1) { /* moved to the variables, then failed: it is theirs now */
            rc = MBL_ENOMEM;
            i++;
            break;
        }
        if (rc) break;
    }
    /* on an error, the items not examined stay velocities (each item has exactly one owner) */
    for (; rc && i < nvel; i++) s->velocities.items[keep++] = s->velocities.items[i];
    s->velocities.n = keep;
    model_name_index_reset(); /* the lists changed: their name indexes are rebuilt when next searched */
    return rc;
}

/* one speed `it` of take_speeds: checked, then a variable and a velocity state; 0, a negative
 * code with it still owned by the velocities, or 1 (out of memory after the variables took it) */
static int take_speed(loader *L, mbl_src_item it)
{
    mbl_src *s = L->src;
    mbl_model *md = L->md;
    {
        if (!strstr(it.text, "der("))
            return mbl_error(L->st, MBL_EMODEL,
                             "%s:%d:%d: '%s' in velocities is not a coordinate (a generalized speed u = T(q) q' is "
                             "defined by an expression in der(.))",
                             s->file, it.key_line, it.key_col, it.key);
        if (model_find_name(&s->variables, it.key, strlen(it.key)) >= 0)
            return mbl_error(L->st, MBL_EMODEL, "%s:%d:%d: duplicate name '%s': the speed is also a variable", s->file,
                             it.key_line, it.key_col, it.key);
        mbl_src_list *lists[2] = {&s->variables, &s->velocity_states};
        for (int a = 0; a < 2; a++) {
            mbl_src_list *l = lists[a];
            if (l->n == l->cap) {
                int cap = l->cap ? 2 * l->cap : 8;
                mbl_src_item *x = mbl_realloc_array(l->items, (size_t)cap, sizeof *x);
                if (!x) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
                l->items = x;
                l->cap = cap;
            }
        }
        mbl_src_item st_it;
        memset(&st_it, 0, sizeof st_it);
        st_it.text = model_str_dup(it.key);
        if (!st_it.text) return mbl_error(L->st, MBL_ENOMEM, "out of memory");
        st_it.line = st_it.key_line = it.key_line;
        st_it.col = st_it.key_col = it.key_col;
        s->velocity_states.items[s->velocity_states.n++] = st_it;
        s->variables.items[s->variables.n++] = it; /* owns key and text from here */
        char buf[512];
        snprintf(buf, sizeof buf, "%s:%d:%d: speed '%s'", s->file, it.key_line, it.key_col, it.key);
        md->spd_what[md->nspd] = model_str_dup(buf);
        if (!md->spd_what[md->nspd++]) {
            mbl_error(L->st, MBL_ENOMEM, "out of memory");
            return 1;
        }
    }
    return 0;
}
