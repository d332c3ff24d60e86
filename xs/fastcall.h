/*
 * Method calls at keyword speed, invisibly.
 *
 * `$q->push($v)` compiles to pushmark, the arguments, a method_named op and
 * an entersub. At run time method_named looks the method up (hashing the
 * name in the invocant's stash) and pushes the CV; entersub then checks the
 * CV and calls the XSUB. Together that is most of what a call costs.
 *
 * Where `use Data::Queue::Shared` (or a class module) is in effect, an
 * op-check hook on entersub (wrap_op_checker) gives the method_named op of
 * a call to one of our method names its own pp function; the op tree, op
 * types and flags stay as they were, so B::Deparse, B::Concise and the
 * debugger see the same program. At run time that pp function takes the
 * short cut only behind an exact guard:
 *
 *  - the invocant is a plain reference (no get-magic) to an object blessed
 *    exactly into one of our four classes (a pointer compare against the
 *    stashes cached at boot; subclasses take perl's own call);
 *  - that class's method of this name is still our XSUB: the stash's glob
 *    was looked up when the stash's package generation and
 *    PL_sub_generation were what they are now, and its CV slot still
 *    holds the XSUB CV registered at boot, still an XSUB with our function
 *    (redefinition, `local *...::push = sub {}`, deleting the glob, `undef
 *    &...::push` all change one of these);
 *  - the entersub is perl's own (a profiler such as Devel::NYTProf that
 *    replaced pp_entersub sees every call) and a plain call: not compiled
 *    under the debugger (OPpENTERSUB_DB), not in lvalue or dereferencing
 *    context, @_ not passed through.
 *
 * Then PL_op becomes the entersub (so TARG, GIMME_V, croak and caller see
 * what they see on the normal path). push, pop, peek, size, push_front and
 * pop_back with the right number of arguments run in place through the
 * helpers the keyword ops use (ops.h: op_int_push ...), which do
 * what those XSUBs do, croak texts naming the method. Every other call does
 * what pp_entersub does for an XSUB, minus the method lookup and the checks
 * the guard has made: the XSUB runs on the arguments already on the stack, a
 * scalar-context result is trimmed to one value, and what the XSUB saved on
 * the save stack is released. Either way conversions, croak texts, signal
 * dispatch and results are the XSUBs'. Anything else runs perl's own
 * method_named, untouched.
 *
 * Counted with callgrind (instructions per iteration of a loop of push +
 * pop pairs, perl 5.36, x86_64): an Int push + pop
 * pair 1,572 -> 742 instructions, a Str pair of 50 bytes 1,868 -> 990; with
 * the helpers inlined into the pp functions (always_inline) 713 and 980.
 */

#ifndef DQS_XS_FASTCALL_H
#define DQS_XS_FASTCALL_H

#include <pthread.h>

#include "ops.h"

#define FASTCALL_HINT "Data::Queue::Shared/methods"

/* perl's own pp_entersub (pp_proto.h, which only the core includes). */
PERL_CALLCONV OP *Perl_pp_entersub(pTHX);

/* The method names taken over; each class's XSUB of that name (if it has
 * one) is registered at boot. */
static const char *const fast_names[] = {
    "push",       "pop",           "peek",           "size",          "push_wait",
    "pop_wait",   "push_multi",    "pop_multi",      "push_wait_multi", "pop_wait_multi",
    "drain",      "push_front",    "pop_back",       "push_front_wait", "pop_back_wait",
    "capacity",   "is_empty",      "is_full",
};
#define N_FAST (sizeof fast_names / sizeof fast_names[0])

struct fast_slot {
    HV *stash;         /* the class's stash at boot */
    CV *cv;            /* the XSUB CV registered at boot (NULL: none) */
    GV *gv;            /* its glob of this name, as found at the last lookup */
    XSUBADDR_t xsub;   /* the registered CV's C function */
    U32 pkg_gen;       /* generations when gv was looked up (at boot, a */
    U32 sub_gen;       /* sub_gen that cannot match: not looked up yet) */
    int ours;          /* the lookup found our CV */
    int k;             /* the class: 0-2 Int, Int32, Int16; 3 Str */
};
static struct fast_slot fast_slots[N_FAST][4];

/* The slots describe the stashes and CVs of one interpreter: the first to
 * load us. Under ithreads the stashes of interpreters that load us later
 * never match (both are alive, so their addresses differ) and they take
 * perl's own call; when the owner is destroyed its stashes are cleared from
 * the slots, and the next interpreter to load us takes over. Boots and
 * that release are serialised by the mutex. */
#ifdef MULTIPLICITY
static PerlInterpreter *fast_owner;
#else
static int fast_owner;
#endif
static pthread_mutex_t fast_mutex = PTHREAD_MUTEX_INITIALIZER;

/* Calls that took the short cut, for the tests (Data::Queue::Shared::
 * _fastcall_hits): one add per call. */
static UV fast_hits;

/* Look the method up again in the class's own stash: it is ours when the
 * glob holds the registered CV itself (not a cached inherited entry). A
 * method defined in the class wins over any parent, AUTOLOAD or UNIVERSAL
 * (so @ISA and the method caches of parents do not matter), and perl's
 * method resolution finds exactly this glob. The package generation counts
 * every change of a method in the stash (definition, glob assignment,
 * `local`, deletion); PL_sub_generation every global invalidation. */
static void
fast_lookup(pTHX_ struct fast_slot *s, const char *name)
{
    SV **svp = hv_fetch(s->stash, name, (I32)strlen(name), 0);
    GV *gv = svp && isGV_with_GP(*svp) ? (GV *)*svp : NULL;
    s->pkg_gen = HvMROMETA(s->stash)->pkg_gen;
    s->sub_gen = PL_sub_generation;
    s->ours = s->cv && gv && GvCV(gv) == s->cv && !GvCVGEN(gv);
    /* Held, so that reading its CV slot is safe even if it leaves the stash
     * in a way no generation counts. */
    SvREFCNT_dec(s->gv);
    s->gv = s->ours ? (GV *)SvREFCNT_inc_simple_NN(gv) : NULL;
}

/* Indexes into fast_names of the one-value methods done in place. */
enum { F_PUSH, F_POP, F_PEEK, F_SIZE, F_PUSH_FRONT = 11, F_POP_BACK = 12 };

static inline __attribute__((always_inline)) OP *
fast_method(pTHX_ const int m)
{
    OP *ent = PL_op->op_next;
    SV **mark = PL_stack_base + TOPMARK;
    SV *inv;
    HV *stash;
    struct fast_slot *s;
    CV *cv;
    int k;
    SSize_t markix;
    I32 old_ss;
    bool is_scalar;

    if (mark >= PL_stack_sp)
        goto slow;
    inv = mark[1];
    if ((SvFLAGS(inv) & (SVf_ROK | SVs_GMG)) != SVf_ROK || !SvOBJECT(SvRV(inv)))
        goto slow;
    stash = SvSTASH(SvRV(inv));
    s = fast_slots[m];
    if (s->stash != stash && (++s)->stash != stash && (++s)->stash != stash
        && (++s)->stash != stash)
        goto slow;
    if (s->pkg_gen != HvMROMETA(stash)->pkg_gen || s->sub_gen != PL_sub_generation)
        fast_lookup(aTHX_ s, fast_names[m]);
    if (!s->ours)
        goto slow;
    cv = s->cv;
    if (GvCV(s->gv) != cv || CvXSUB(cv) != s->xsub || !CvISXSUB(cv))
        goto slow;
    if (ent->op_ppaddr != Perl_pp_entersub || !(ent->op_flags & OPf_STACKED)
        || (ent->op_private & (OPpENTERSUB_DB | OPpLVAL_INTRO | OPpDEREF)) || PL_curcopdb)
        goto slow;
    k = s->k;
    fast_hits++;

    /* The one-value methods, in place: what their XSUBs do, through the
     * same helpers (which end with PL_op->op_next, the entersub's next).
     * With another number of arguments the XSUB croaks its usage. */
    if (m == F_PUSH || m == F_PUSH_FRONT) {
        if (PL_stack_sp - mark == 2) {
            POPMARK;
            PL_op = ent;
            return k == CLASS_STR ? op_str_push(aTHX_ m == F_PUSH_FRONT, cv, NULL)
                                  : op_int_push(aTHX_ k, cv, NULL);
        }
    }
    else if (m == F_POP || m == F_PEEK || m == F_SIZE || m == F_POP_BACK) {
        if (PL_stack_sp - mark == 1) {
            /* dXSTARG's choice */
            SV *targ = ent->op_private & OPpENTERSUB_HASTARG ? PAD_SV(ent->op_targ)
                                                             : sv_newmortal();
            POPMARK;
            PL_op = ent;
            if (m == F_SIZE)
                return op_size(aTHX_ k, cv, NULL, targ);
            return k == CLASS_STR ? op_str_pop(aTHX_ m == F_POP_BACK, m == F_PEEK, cv, NULL, targ)
                                  : op_int_pop(aTHX_ k, m == F_PEEK, cv, NULL, targ);
        }
    }

    /* The others: pp_entersub's XSUB branch, with PL_op the entersub as
     * there (for dXSTARG, GIMME_V, croak and caller). */
    PL_op = ent;
    markix = TOPMARK;
    old_ss = PL_savestack_ix;
    is_scalar = GIMME_V == G_SCALAR;
    CvXSUB(cv)(aTHX_ cv);
    if (is_scalar) {
        SV **svp = PL_stack_base + markix + 1;
        if (svp != PL_stack_sp) {
            *svp = svp > PL_stack_sp ? &PL_sv_undef : *PL_stack_sp;
            PL_stack_sp = svp;
        }
    }
    if (PL_savestack_ix > old_ss)
        leave_scope(old_ss);
    return ent->op_next;

slow:
    return PL_ppaddr[OP_METHOD_NAMED](aTHX);
}

/* One pp function per name, so the name's index is a constant in each. */
#define FAST_PP(i) static OP *pp_fast_##i(pTHX) { return fast_method(aTHX_ i); }
FAST_PP(0) FAST_PP(1) FAST_PP(2) FAST_PP(3) FAST_PP(4) FAST_PP(5)
FAST_PP(6) FAST_PP(7) FAST_PP(8) FAST_PP(9) FAST_PP(10) FAST_PP(11)
FAST_PP(12) FAST_PP(13) FAST_PP(14) FAST_PP(15) FAST_PP(16) FAST_PP(17)
#undef FAST_PP
static OP *(*const fast_pps[N_FAST])(pTHX) = {
    pp_fast_0,  pp_fast_1,  pp_fast_2,  pp_fast_3,  pp_fast_4,  pp_fast_5,
    pp_fast_6,  pp_fast_7,  pp_fast_8,  pp_fast_9,  pp_fast_10, pp_fast_11,
    pp_fast_12, pp_fast_13, pp_fast_14, pp_fast_15, pp_fast_16, pp_fast_17,
};

static Perl_check_t fast_next_ck_entersub;

/* Runs for every entersub compiled anywhere; costs a flag test unless the
 * hint is in effect. Only the method_named op's pp function changes. */
static OP *
fast_ck_entersub(pTHX_ OP *o)
{
    OP *kid, *cvop;
    SV *meth;
    const char *name;
    STRLEN len;
    size_t i;
    o = fast_next_ck_entersub(aTHX_ o);
    if (o->op_type != OP_ENTERSUB || !(PL_hints & HINT_LOCALIZE_HH) || !(o->op_flags & OPf_KIDS)
        || !hv_fetchs(GvHV(PL_hintgv), FASTCALL_HINT, 0))
        return o;
    kid = cUNOPo->op_first;
    if (kid->op_type == OP_NULL && (kid->op_flags & OPf_KIDS))
        kid = cUNOPx(kid)->op_first;
    for (cvop = kid; OpHAS_SIBLING(cvop); cvop = OpSIBLING(cvop))
        ;
    if (cvop->op_type != OP_METHOD_NAMED || cvop->op_ppaddr != PL_ppaddr[OP_METHOD_NAMED])
        return o;
    meth = cMETHOPx_meth(cvop);
    if (!meth || !SvPOK(meth))
        return o;
    name = SvPV_nomg(meth, len);
    for (i = 0; i < N_FAST; i++)
        if (strlen(fast_names[i]) == len && memEQ(fast_names[i], name, len)) {
            cvop->op_ppaddr = fast_pps[i];
            break;
        }
    return o;
}

/* How many method calls in the op tree below `o` were given the short
 * cut (Data::Queue::Shared::_fastcall_sites, for the tests). */
static IV
fast_sites(const OP *o)
{
    IV n = 0;
    size_t i;
    if (o->op_type == OP_METHOD_NAMED)
        for (i = 0; i < N_FAST; i++)
            if (o->op_ppaddr == fast_pps[i])
                n++;
    if (o->op_flags & OPf_KIDS) {
        const OP *kid;
        for (kid = cUNOPx(o)->op_first; kid; kid = OpSIBLING(kid))
            n += fast_sites(kid);
    }
    return n;
}

/* When the owning interpreter is destroyed: its stashes and CVs go. */
static void
fast_release(pTHX_ void *unused)
{
    size_t i;
    int k;
    PERL_UNUSED_ARG(unused);
    pthread_mutex_lock(&fast_mutex);
#ifdef MULTIPLICITY
    if (fast_owner == aTHX) {
#else
    {
#endif
        for (i = 0; i < N_FAST; i++)
            for (k = 0; k < 4; k++)
                fast_slots[i][k].stash = NULL;
        fast_owner = 0;
    }
    pthread_mutex_unlock(&fast_mutex);
}

/* At boot, after the XSUBs are installed. */
static void
fast_boot(pTHX)
{
    /* The order in which fast_method compares the classes: Int and Str,
     * the common ones, first. */
    static const int slot_class[4] = { 0, CLASS_STR, 1, 2 };
    int j;
    size_t i;
    wrap_op_checker(OP_ENTERSUB, fast_ck_entersub, &fast_next_ck_entersub);
    pthread_mutex_lock(&fast_mutex);
    if (fast_owner) {
        pthread_mutex_unlock(&fast_mutex);
        return;
    }
    for (j = 0; j < 4; j++)
        for (i = 0; i < N_FAST; i++) {
            struct fast_slot *s = &fast_slots[i][j];
            int k = slot_class[j];
            SV *full = sv_2mortal(newSVpvf("%s::%s", class_names[k], fast_names[i]));
            CV *cv = get_cvn_flags(SvPVX(full), SvCUR(full), 0);
            memset(s, 0, sizeof *s);
            s->stash = class_stashes[k];
            s->k = k;
            s->sub_gen = PL_sub_generation + 0x80000000U;
            if (cv && CvISXSUB(cv)) {
                s->cv = cv;
                s->xsub = CvXSUB(cv);
            }
        }
#ifdef MULTIPLICITY
    fast_owner = aTHX;
#else
    fast_owner = 1;
#endif
    pthread_mutex_unlock(&fast_mutex);
    call_atexit(fast_release, NULL);
}

#endif /* DQS_XS_FASTCALL_H */
