/*
 * The glue every XSUB and op of Queue-Shared.xs stands on: the classes, the
 * queue handle behind an object (checked, wrapped, guarded against
 * change), croaks in the methods' words with $! set, and the conversions
 * of Perl values into the C ABI's arguments and back.
 *
 * The classes are numbered 0-2 (Int, Int32, Int16) and CLASS_STR (Str): an
 * XSUB's alias index `ix` is its class wherever a croak names it.
 */
#ifndef DQS_XS_GLUE_H
#define DQS_XS_GLUE_H

#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

#include <string.h>
#include <errno.h>

#include "data_queue_shared.h"

/* The hot helpers, inlined even into the large pp functions of the method
 * short cut (gcc's own budget leaves them out of line there). */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

#define N_INT_CLASSES 3
#define CLASS_STR 3
#define CLASS_STR_NAME "Data::Queue::Shared::Str"

static const char *const class_names[4] = {
    "Data::Queue::Shared::Int",
    "Data::Queue::Shared::Int32",
    "Data::Queue::Shared::Int16",
    "Data::Queue::Shared::Str",
};
static const uint32_t class_variants[4] = { DQS_INT64, DQS_INT32, DQS_INT16, DQS_STR };

/* Stashes cached at boot: the hot-path type check is one pointer compare. */
static HV *class_stashes[4];

static const char *
method_name(pTHX_ CV *cv)
{
    GV *gv = CvGV(cv);
    return gv ? GvNAME(gv) : "method";
}

#define CLASS(ix) (class_names[(ix)])
#define METHOD method_name(aTHX_ cv)

/* $! after a croak of the core's: the system's error for a failed system
 * call, else the error number that says the same thing (the system calls
 * made on the way leave errno at whatever the last one set: EEXIST from
 * the O_EXCL create that found the file, say). See ERRORS in the manual. */
static void
set_errno_of(pTHX_ const DqsError *err)
{
    int e;
    switch (err->kind) {
    case DQS_E_IO:
        e = err->os_errno ? err->os_errno : EIO;
        break;
    case DQS_E_UNSUPPORTED:
        e = EOPNOTSUPP;
        break;
    case DQS_E_CORRUPT:
        e = EBADMSG;
        break;
    default: /* DQS_E_ARG, DQS_E_INCOMPATIBLE, DQS_E_INCOMPLETE, DQS_E_TOO_SMALL */
        e = EINVAL;
        break;
    }
    SETERRNO(e, 0);
}

static void croak_err(pTHX_ int ix, CV *cv, const DqsError *err) __attribute__((noreturn));
static void
croak_err(pTHX_ int ix, CV *cv, const DqsError *err)
{
    set_errno_of(aTHX_ err);
    croak("%s->%s: %s", CLASS(ix), METHOD, err->msg);
}

/* Who a croak names after the class: the keyword `kw` when one is given
 * (keyword ops have no CV), else the method the XSUB `cv` was called as. */
#define WHO(cv, kw) ((kw) ? (kw) : method_name(aTHX_ (cv)))

/* croak_err naming the keyword `kw` when one is given. */
static void croak_err_as(pTHX_ int ix, CV *cv, const char *kw, const DqsError *err)
    __attribute__((noreturn, noinline, cold));
static void
croak_err_as(pTHX_ int ix, CV *cv, const char *kw, const DqsError *err)
{
    set_errno_of(aTHX_ err);
    croak("%s->%s: %s", CLASS(ix), WHO(cv, kw), err->msg);
}

/* The handle behind a queue object of a class derived from ix's (not
 * blessed exactly into it), or a croak naming the method (or the keyword
 * `kw`). Out of line: the exact class is the hot path. */
static DqsQueue *
dqs_self_slow(pTHX_ SV *self, int ix, CV *cv, const char *kw)
{
    if (SvROK(self)) {
        SV *obj = SvRV(self);
        if (SvOBJECT(obj) && SvTYPE(obj) < SVt_PVAV && SvIOKp(obj)
            && sv_derived_from(self, CLASS(ix))) {
            IV iv = SvIVX(obj);
            if (!iv)
                croak("%s->%s: the queue object has been destroyed", CLASS(ix), WHO(cv, kw));
            return INT2PTR(DqsQueue *, iv);
        }
    }
    croak("%s->%s: invocant is not of type %s", CLASS(ix), WHO(cv, kw), CLASS(ix));
    return NULL; /* not reached */
}

/* The handle behind a queue object, or a croak naming the method (or the
 * keyword `kw`). */
ALWAYS_INLINE DqsQueue *
dqs_self_as(pTHX_ SV *self, int ix, CV *cv, const char *kw)
{
    if (SvROK(self)) {
        SV *obj = SvRV(self);
        if (SvOBJECT(obj) && SvTYPE(obj) < SVt_PVAV && SvIOKp(obj)
            && SvSTASH(obj) == class_stashes[ix] && SvIVX(obj))
            return INT2PTR(DqsQueue *, SvIVX(obj));
    }
    return dqs_self_slow(aTHX_ self, ix, cv, kw);
}

PERL_STATIC_INLINE DqsQueue *
dqs_self(pTHX_ SV *self, int ix, CV *cv)
{
    return dqs_self_as(aTHX_ self, ix, cv, NULL);
}

static int
is_our_object(pTHX_ SV *self)
{
    HV *stash = SvSTASH(SvRV(self));
    int i;
    for (i = 0; i < 4; i++)
        if (stash == class_stashes[i])
            return 1;
    for (i = 0; i < 4; i++)
        if (sv_derived_from(self, class_names[i]))
            return 1;
    return 0;
}

/* The handle's IV must not be changed from Perl ($$q = 42 would make the
 * next call use a made-up pointer), yet the object must stay re-blessable
 * (bless $q, 'My::Queue'), which SvREADONLY forbids. So the IV carries set
 * magic that puts the handle back and croaks when the value changed: the
 * assignment is undone before anything can use it. mg_ptr holds the handle (NULL once
 * destroyed); DESTROY acts only on objects with this magic. */
static int
handle_set(pTHX_ SV *sv, MAGIC *mg)
{
    /* sv_bless runs set magic of this type too: the value is unchanged */
    if (SvIOK(sv) && SvIVX(sv) == PTR2IV(mg->mg_ptr))
        return 0;
    sv_setiv(sv, PTR2IV(mg->mg_ptr)); /* no set magic: no recursion */
    croak("%s", PL_no_modify);
    return 0; /* not reached */
}

/* A clear callback makes perl flag the SV RMAGICAL too, which puts it on
 * the slow (magic-calling) path of ops whose fast path skips set magic on
 * a plain IOK scalar: $$q++ in rvalue context (pp_postinc) would otherwise
 * change the handle unseen. */
static int
handle_clear(pTHX_ SV *sv, MAGIC *mg)
{
    PERL_UNUSED_ARG(sv);
    PERL_UNUSED_ARG(mg);
    return 0;
}

static MGVTBL handle_vtbl = { NULL, handle_set, NULL, handle_clear, NULL, NULL, NULL, NULL };

static SV *
wrap_handle(pTHX_ SV *class_sv, int ix, DqsQueue *q)
{
    /* Class->new blesses into Class (subclasses welcome); $obj->new into
     * the object's own class. */
    HV *stash = SvROK(class_sv) && SvOBJECT(SvRV(class_sv)) ? SvSTASH(SvRV(class_sv))
        : SvOK(class_sv) ? gv_stashsv(class_sv, GV_ADD) : class_stashes[ix];
    SV *obj = newSViv(PTR2IV(q));
    SV *ref = newRV_noinc(obj);
    sv_bless(ref, stash);
    sv_magicext(obj, NULL, PERL_MAGIC_ext, &handle_vtbl, (const char *)q, 0);
    return sv_2mortal(ref);
}

/* Whether a defined argument can be taken as a number: a number, a
 * numeric string, or an object with overloading; not a plain reference or
 * a string like 'abc' (which Perl would quietly read as 0). Get-magic must
 * have run. */
#define NUMERIC_ARG(sv) \
    (SvNIOK(sv) || (SvROK(sv) ? SvAMAGIC(sv) : looks_like_number(sv)))

/* A positive integer count argument (capacity, arena bytes); with
 * `optional`, absent or undef gives 0. Values too large for the core are
 * passed through saturated so that its error names them. Runs get-magic
 * once. */
static uint64_t
count_arg(pTHX_ SV *sv, int ix, CV *cv, const char *what, int optional)
{
    NV nv;
    if (!sv)
        return 0;
    SvGETMAGIC(sv);
    if (!SvOK(sv)) {
        if (optional)
            return 0;
        croak("%s->%s: %s is required", CLASS(ix), METHOD, what);
    }
    if (SvIOK(sv) && !SvIsUV(sv)) {
        IV iv = SvIVX(sv);
        if (iv < 1)
            croak("%s->%s: %s must be a positive integer, got %" IVdf, CLASS(ix), METHOD, what, iv);
        return (uint64_t)iv;
    }
    if (SvIOK(sv))
        return (uint64_t)SvUVX(sv);
    if (!looks_like_number(sv))
        croak("%s->%s: %s must be a positive integer, got '%" SVf "'", CLASS(ix), METHOD, what,
              SVfARG(sv));
    nv = SvNV_nomg(sv);
    if (Perl_isnan(nv) || nv < 1.0)
        croak("%s->%s: %s must be a positive integer, got %" NVgf, CLASS(ix), METHOD, what, nv);
    if (nv >= 18446744073709551615.0)
        croak("%s->%s: %s %" NVgf " is too large", CLASS(ix), METHOD, what, nv);
    return (uint64_t)nv;
}

/* A path or name argument: a byte string without NUL, or NULL for undef.
 * Runs get-magic once. */
static const char *
str_arg(pTHX_ SV *sv, int ix, CV *cv, const char *what)
{
    STRLEN len;
    const char *s;
    SvGETMAGIC(sv);
    if (!SvOK(sv))
        return NULL;
    if (SvROK(sv) && !SvAMAGIC(sv))
        croak("%s->%s: %s must be a string, not a reference (%" SVf ")", CLASS(ix), METHOD, what,
              SVfARG(sv));
    s = SvPV_nomg(sv, len);
    if (memchr(s, '\0', len))
        croak("%s->%s: %s contains a NUL byte", CLASS(ix), METHOD, what);
    return s;
}

/* How many items a pop_multi / pop_wait_multi may take: a number, its
 * fraction dropped. 0 takes none; a negative count (-1) takes all there
 * are, as in the C implementation (see COMPATIBILITY), and so does one
 * that does not fit an IV. undef, plain references and non-numeric
 * strings croak. Runs get-magic once. */
static IV
pop_count_arg(pTHX_ SV *sv, int ix, CV *cv)
{
    NV nv;
    SvGETMAGIC(sv);
    if (SvIOK(sv) && !SvROK(sv))
        return SvIsUV(sv) || SvIVX(sv) < 0 ? IV_MAX : SvIVX(sv);
    if (!SvOK(sv))
        croak("%s->%s: count is required", CLASS(ix), METHOD);
    if (!NUMERIC_ARG(sv))
        croak("%s->%s: count must be a number, got '%" SVf "'", CLASS(ix), METHOD, SVfARG(sv));
    nv = SvNV_nomg(sv);
    if (Perl_isnan(nv))
        croak("%s->%s: count must be a number, got NaN", CLASS(ix), METHOD);
    if (nv >= (NV)IV_MAX || nv <= -1.0)
        return IV_MAX;
    return nv < 1.0 ? 0 : (IV)nv;
}

/* A timeout in seconds: negative/+Inf wait forever, 0 tries once; absent
 * or undef gives `undef_secs`: -1 (forever) in deadline_arg, 0 for
 * push_wait_multi, whose timeout is a required argument that the C
 * implementation read as a number (see COMPATIBILITY). */
static DqsDeadline
deadline_arg_or(pTHX_ SV *sv, double undef_secs, int ix, CV *cv)
{
    NV t;
    if (!sv)
        return dqs_deadline(undef_secs);
    SvGETMAGIC(sv);
    if (!SvOK(sv))
        return dqs_deadline(undef_secs);
    if (!NUMERIC_ARG(sv))
        croak("%s->%s: timeout must be a number of seconds, got '%" SVf "'", CLASS(ix), METHOD,
              SVfARG(sv));
    t = SvNV_nomg(sv);
    if (Perl_isnan(t))
        croak("%s->%s: timeout is not a number", CLASS(ix), METHOD);
    return dqs_deadline((double)t);
}

static DqsDeadline
deadline_arg(pTHX_ SV *sv, int ix, CV *cv)
{
    return deadline_arg_or(aTHX_ sv, -1.0, ix, cv);
}

/* The range every integer class accepts before storing (Int32 and Int16
 * then keep the low 32 or 16 bits of the int64, see DESCRIPTION in
 * Data::Queue::Shared::Int). */
#define INT_RANGE "-9223372036854775808 .. 9223372036854775807"

/* The croaks of int_value_slow: the value as given, quoted and escaped
 * like a Perl string (cut after 40 characters) when it is one. */
static void int_value_croak(pTHX_ SV *sv, int ix, CV *cv, const char *kw, const char *why)
    __attribute__((noreturn, noinline, cold));
static void
int_value_croak(pTHX_ SV *sv, int ix, CV *cv, const char *kw, const char *why)
{
    SV *shown = sv_newmortal();
    if (SvPOK(sv)) {
        STRLEN len;
        const char *p = SvPV_nomg(sv, len);
        pv_pretty(shown, p, len, 40, NULL, NULL,
                  PERL_PV_PRETTY_QUOTE | PERL_PV_PRETTY_ELLIPSES
                      | (SvUTF8(sv) ? PERL_PV_ESCAPE_UNI : 0));
    }
    else if (SvIOK(sv) && SvIsUV(sv))
        sv_setpvf(shown, "%" UVuf, SvUVX(sv));
    else if (SvNOK(sv)) {
        sv_setnv(shown, SvNVX(sv)); /* as Perl prints it: 1.84467440737096e+19, Inf */
        (void)SvPV_nolen(shown);
    }
    else
        sv_copypv_nomg(shown, sv);
    croak("%s->%s: value %" SVf " %s", CLASS(ix), WHO(cv, kw), SVfARG(shown), why);
}

/* Everything but a plain integer IV: see int_value. `sv` is defined and
 * its get-magic has run. */
static IV
int_value_slow(pTHX_ SV *sv, int ix, CV *cv, const char *kw)
{
    static const char out_of_range[] = "is out of range (" INT_RANGE ")";
    static const char not_a_number[] = "is not a number";
    NV nv;
    if (SvROK(sv)) {
        /* numeric overloading (or "" / bool standing in for it), called
         * as perl's own numification calls it */
        SV *num;
        if (!SvAMAGIC(sv)
            || !(num = amagic_call(sv, &PL_sv_undef, numer_amg, AMGf_noright | AMGf_unary))
            || (SvROK(num) && SvRV(num) == SvRV(sv)))
            croak("%s->%s: cannot push a reference (%" SVf ")", CLASS(ix), WHO(cv, kw),
                  SVfARG(sv));
        SvGETMAGIC(num);
        if (!SvOK(num))
            croak("%s->%s: cannot push undef (from the numeric overloading of %" SVf ")",
                  CLASS(ix), WHO(cv, kw), SVfARG(sv));
        return int_value_slow(aTHX_ num, ix, cv, kw);
    }
    if (SvIOK(sv)) {
        if (!SvIsUV(sv))
            return SvIVX(sv);
        if (SvUVX(sv) <= (UV)IV_MAX)
            return (IV)SvUVX(sv);
        int_value_croak(aTHX_ sv, ix, cv, kw, out_of_range);
    }
    if (SvPOK(sv)) {
        /* A string: whole numbers exactly (not through an NV, which would
         * round "-9223372036854775809" into the range), a fraction cut
         * off as int() cuts it; "1e3", "Inf" and the like (grok_number
         * does not give them as a UV) go on as an NV, and so does the
         * number of a dualvar whose string is not one. */
        STRLEN len;
        const char *p = SvPV_nomg(sv, len);
        UV uv;
        int t = grok_number(p, len, &uv);
        if (!t && !SvNOK(sv))
            int_value_croak(aTHX_ sv, ix, cv, kw, not_a_number);
        if ((t & (IS_NUMBER_IN_UV | IS_NUMBER_GREATER_THAN_UV_MAX)) == IS_NUMBER_IN_UV) {
            if (!(t & IS_NUMBER_NEG) && uv <= (UV)IV_MAX)
                return (IV)uv;
            if (t & IS_NUMBER_NEG && uv <= (UV)IV_MAX + 1)
                return uv == (UV)IV_MAX + 1 ? IV_MIN : -(IV)uv;
            int_value_croak(aTHX_ sv, ix, cv, kw, out_of_range);
        }
    }
    else if (!SvNOK(sv) && !looks_like_number(sv))
        int_value_croak(aTHX_ sv, ix, cv, kw, not_a_number);
    nv = SvNV_nomg(sv);
    if (Perl_isnan(nv))
        int_value_croak(aTHX_ sv, ix, cv, kw, not_a_number);
    if (!(nv >= -9223372036854775808.0 && nv < 9223372036854775808.0))
        int_value_croak(aTHX_ sv, ix, cv, kw, out_of_range);
    return (IV)nv; /* toward zero, as int() */
}

/* An integer to push (int64): a plain integer IV as it is (the hot path:
 * one flag test); anything else through int_value_slow, which takes
 * unsigned integers up to 2**63-1, numbers with a fraction cut off toward
 * zero as int() does, numeric strings as Perl reads them (leading and
 * trailing blanks, "1e3", "0 but true") and numeric overloading, and
 * croaks for undef, plain references, strings that are not numbers, NaN,
 * infinities and anything outside int64, naming the method (or the
 * keyword `kw`) and the value. Runs get-magic exactly once. */
ALWAYS_INLINE IV
int_value(pTHX_ SV *sv, int ix, CV *cv, const char *kw)
{
    SvGETMAGIC(sv);
    if ((SvFLAGS(sv) & (SVf_IOK | SVf_IVisUV | SVf_ROK)) == SVf_IOK)
        return SvIVX(sv);
    if (!SvOK(sv))
        croak("%s->%s: cannot push undef", CLASS(ix), WHO(cv, kw));
    return int_value_slow(aTHX_ sv, ix, cv, kw);
}

/* Values a batch converts into a buffer on the C stack; more go to the
 * heap. */
#define STACK_VALUES 128

/* Convert every value first (may run Perl code or die: then nothing has
 * been enqueued), into `stackbuf` (STACK_VALUES long) or, for more, a
 * buffer freed at scope exit. Reads the values straight from the Perl
 * stack: conversions that run Perl code (tie, overloading) do it on a
 * stack of their own. */
static int64_t *
int_values(pTHX_ SV **svs, SSize_t n, int ix, CV *cv, int64_t *stackbuf)
{
    int64_t *buf = stackbuf;
    SSize_t i;
    if (n > STACK_VALUES) {
        Newx(buf, n, int64_t);
        SAVEFREEPV(buf);
    }
    for (i = 0; i < n; i++) {
        SV *sv = svs[i];
        /* a plain integer (one flag test): what int_value takes first */
        buf[i] = (SvFLAGS(sv) & (SVf_IOK | SVf_IVisUV | SVs_GMG | SVf_ROK)) == SVf_IOK
                     ? (int64_t)SvIVX(sv)
                     : (int64_t)int_value(aTHX_ sv, ix, cv, NULL);
    }
    return buf;
}

/* Push the integers buf[0..n) onto the Perl stack as new mortals. An IV
 * lives in the SV head (sv.h, SET_SVANY_FOR_BODYLESS_IV), so a new SV
 * needs no body and no sv_setiv upgrade: newSV_type(SVt_IV) (inline from
 * perl 5.36: an SV head off the arena) sets its any-pointer; flags and
 * value are all that is left to set. Room on the Perl and mortal stacks is
 * made once; newSV_type touches neither, so their tops stay in registers.
 * Returns the new stack pointer. */
static SV **
push_ivs(pTHX_ SV **sp, const int64_t *buf, size_t n)
{
    SSize_t ix;
    SV **tmps;
    size_t i;
    EXTEND(sp, (SSize_t)n);
    EXTEND_MORTAL((SSize_t)n);
    ix = PL_tmps_ix;
    tmps = PL_tmps_stack;
    for (i = 0; i < n; i++) {
        SV *sv = newSV_type(SVt_IV);
        SvFLAGS(sv) = SVt_IV | SVf_IOK | SVp_IOK | SVs_TEMP;
        SvIV_set(sv, (IV)buf[i]);
        tmps[++ix] = sv;
        *++sp = sv;
    }
    PL_tmps_ix = ix;
    return sp;
}
#define PUSH_IVS(buf, n) (SP = push_ivs(aTHX_ SP, (buf), (n)))

#define POP_CHUNK 256

/* A string to push: undef and plain references are refused (a queue item
 * is a string; undef is how pop says "empty"); overloaded objects are
 * stringified. Runs get-magic and overloading exactly once. */
ALWAYS_INLINE const char *
str_value(pTHX_ SV *sv, STRLEN *len, int *utf8, int ix, CV *cv, const char *kw)
{
    const char *p;
    SvGETMAGIC(sv);
    if (!SvOK(sv))
        croak("%s->%s: cannot push undef", CLASS(ix), WHO(cv, kw));
    if (SvROK(sv) && !SvAMAGIC(sv))
        croak("%s->%s: cannot push a reference (%" SVf ")", CLASS(ix), WHO(cv, kw), SVfARG(sv));
    p = SvPV_nomg(sv, *len);
    *utf8 = SvUTF8(sv) ? 1 : 0;
    return p;
}

/* Describe a list of values to push as DqsStrItems, in `stackbuf`
 * (STACK_VALUES long) or, for more, a mortal's buffer. All Perl code
 * (magic, overloading) runs before the queue is touched, in the order of
 * the values, and a croak for a bad value leaves nothing enqueued.
 *
 * With `may_point` and no value that can run Perl code when read (none has
 * get-magic or is a reference, which overloading could stringify), the
 * items point straight at the values' own buffers: reading a plain value
 * runs no Perl code, so nothing can change or free one of them before the
 * core has copied it. Otherwise every value is copied, as it is converted,
 * into one buffer owned by a mortal (freed even when a later conversion
 * dies), so that a later conversion cannot change what an earlier one
 * returned. push_wait_multi passes 0: it runs signal handlers between its
 * core calls. */
static DqsStrItem *
str_values(pTHX_ SV **svs, SSize_t n, int ix, CV *cv, int may_point, DqsStrItem *stackbuf)
{
    DqsStrItem *items = stackbuf;
    SV *buf;
    SSize_t i;
    if (n > STACK_VALUES)
        items = (DqsStrItem *)SvPVX(sv_2mortal(newSV(n * sizeof(DqsStrItem))));
    /* Point at the values until one that could run Perl code turns up; then
     * start again, copying. Up to there nothing but plain reads has
     * happened (and croaks for undef in the order the copy would give). */
    for (i = 0; may_point && i < n; i++) {
        SV *sv = svs[i];
        const U32 flags = SvFLAGS(sv); /* read once: the stores below may alias */
        if ((flags & (SVf_POK | SVs_GMG | SVf_ROK)) == SVf_POK) {
            items[i].ptr = (const uint8_t *)SvPVX(sv);
            items[i].len = SvCUR(sv);
            items[i].utf8 = flags & SVf_UTF8 ? 1 : 0;
        }
        else if (SvGMAGICAL(sv) || SvROK(sv))
            may_point = 0;
        else {
            STRLEN len;
            int utf8;
            items[i].ptr = (const uint8_t *)str_value(aTHX_ sv, &len, &utf8, ix, cv, NULL);
            items[i].len = len;
            items[i].utf8 = utf8;
        }
    }
    if (may_point)
        return items;
    buf = sv_2mortal(newSV(64));
    SvPOK_only(buf);
    SvCUR_set(buf, 0);
    for (i = 0; i < n; i++) {
        STRLEN len;
        int utf8;
        const char *p = str_value(aTHX_ svs[i], &len, &utf8, ix, cv, NULL);
        items[i].ptr = (const uint8_t *)(uintptr_t)SvCUR(buf); /* offset for now */
        items[i].len = len;
        items[i].utf8 = utf8;
        sv_catpvn_nomg(buf, p, len);
    }
    for (i = 0; i < n; i++)
        items[i].ptr = (const uint8_t *)SvPVX(buf) + (uintptr_t)items[i].ptr;
    return items;
}

ALWAYS_INLINE SV *
str_sv(pTHX_ SV *sv, const DqsStrItem *it)
{
    /* A TARG reused call after call already has a buffer that fits: copy
     * into it as sv_setpvn would, without its checks and upgrades. */
    if (SvTYPE(sv) >= SVt_PV && SvTYPE(sv) <= SVt_PVMG && !SvTHINKFIRST(sv) && !SvOOK(sv)
        && SvLEN(sv) > it->len) {
        char *d = SvPVX(sv);
        memcpy(d, it->ptr, it->len);
        d[it->len] = '\0';
        SvCUR_set(sv, it->len);
        (void)SvPOK_only(sv);
    }
    else
        sv_setpvn(sv, (const char *)it->ptr, it->len);
    if (it->utf8)
        SvUTF8_on(sv);
    else
        SvUTF8_off(sv);
    return sv;
}

/* A string buffer perl will free with Safefree (NULL if out of memory).
 * Where Newx is malloc with checks around it (no perl malloc, no memory
 * debugging headers, no host allocator), malloc itself; the caller keeps
 * errno as Newx does. */
#if !defined(MYMALLOC) && !defined(PERL_TRACK_MEMPOOL) && !defined(PERL_DEBUG_READONLY_COW) \
    && !defined(PERL_IMPLICIT_SYS) && !defined(USE_MDH)
#  define PV_MALLOC(size) ((char *)malloc(size))
#else
#  define PV_MALLOC(size) ((char *)safemalloc(size))
#endif

/* Push the items its[0..n) onto the Perl stack as new mortal strings,
 * each a PV made as such (newSV_type(SVt_PV), inline from perl 5.36: no
 * sv_upgrade from an empty SV) with one buffer allocation of the right
 * size, not sv_newmortal + sv_setpvn. Stacks extended once, as push_ivs. */
static SV **
push_strs(pTHX_ SV **sp, const DqsStrItem *its, size_t n)
{
    SSize_t ix;
    SV **tmps;
    size_t i;
    dSAVE_ERRNO;
    EXTEND(sp, (SSize_t)n);
    EXTEND_MORTAL((SSize_t)n);
    ix = PL_tmps_ix;
    tmps = PL_tmps_stack;
    for (i = 0; i < n; i++) {
        const DqsStrItem *it = &its[i];
        SV *sv = newSV_type(SVt_PV);
        /* the bytes, the NUL, and the spare byte copy-on-write counts in */
        STRLEN size = it->len + 2;
        char *d = PV_MALLOC(size);
        if (UNLIKELY(!d))
            Newx(d, size, char); /* perl's own out-of-memory handling */
        SvPV_set(sv, d);
        SvLEN_set(sv, size);
        memcpy(d, it->ptr, it->len);
        d[it->len] = '\0';
        SvCUR_set(sv, it->len);
        SvFLAGS(sv) |= SVf_POK | SVp_POK | SVs_TEMP | (it->utf8 ? SVf_UTF8 : 0);
        tmps[++ix] = sv;
        *++sp = sv;
    }
    PL_tmps_ix = ix;
    RESTORE_ERRNO;
    return sp;
}
#define PUSH_STRS(its, n) (SP = push_strs(aTHX_ SP, (its), (n)))

/* A Str pop, peek or batch on `q` returned DQS_ERROR (or 0 items): croak
 * with the reason if it met an item it could not decode (compressed, and
 * corrupt or needing the zstd feature); otherwise return. */
static void
str_pop_failed(pTHX_ DqsQueue *q, CV *cv, const char *kw)
{
    DqsError err;
    if (dqs_str_error(q, &err) == DQS_ERROR)
        croak_err_as(aTHX_ CLASS_STR, cv, kw, &err);
}

/* Pop up to `want` items in one call and push them as mortal strings onto
 * the Perl stack (the caller has done PUTBACK; this leaves SP updated). */
static void
str_pop_list(pTHX_ DqsQueue *q, size_t want, int has_budget, uint64_t budget, CV *cv)
{
    dSP;
    const DqsStrItem *its;
    size_t got = dqs_str_pop_multi(q, want, has_budget, budget, 1, &its);
    if (!got)
        str_pop_failed(aTHX_ q, cv, NULL);
    PUSH_STRS(its, got);
    PUTBACK;
}

/* An optional byte budget: undef or absent means none. */
static int
budget_arg(pTHX_ SV *sv, uint64_t *out, int ix, CV *cv)
{
    NV nv;
    if (!sv)
        return 0;
    SvGETMAGIC(sv);
    if (!SvOK(sv))
        return 0;
    if (!NUMERIC_ARG(sv))
        croak("%s->%s: max_bytes must be a non-negative number, got '%" SVf "'", CLASS(ix), METHOD,
              SVfARG(sv));
    nv = SvNV_nomg(sv);
    if (Perl_isnan(nv) || nv < 0)
        croak("%s->%s: max_bytes must be a non-negative number", CLASS(ix), METHOD);
    *out = nv >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)nv;
    return 1;
}

#endif /* DQS_XS_GLUE_H */
