/*
 * Perl glue for the data_queue_shared Rust core (include/data_queue_shared.h).
 *
 * Thin by design: convert arguments (running all get-magic, overloading and
 * ties first), fetch the handle, make one C ABI call, build the result. No
 * queue algorithm lives here. The integer classes share one set of XSUBs:
 * each is defined in Data::Queue::Shared::Int and aliased into Int32 and
 * Int16, with `ix` (0, 1, 2) selecting the class.
 */
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
 * then keep the low 32 or 16 bits of the int64, see CLASSES in the
 * manual). */
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

/*
 * The one-value operations on the Perl stack, shared by the keyword ops and
 * the method short cut (fastcall.h): the invocant (and the value) on top of
 * the stack are replaced by the result. The checks, conversions, results
 * and croak texts are the XSUBs': the croak names the keyword `kw` when one
 * is given, else the method the XSUB `cv` is. The order is the method
 * call's: the invocant's get-magic (as method lookup runs it), the value,
 * then the handle. `targ` receives a returned value. PL_stack_sp is read
 * again after the conversions: they may run Perl code.
 */
/* Inlined into each pp function (the method short cut's and the keywords'):
 * a call of its own cost the pair about 20 instructions of register saves. */
#define OP_HELPER ALWAYS_INLINE
#define OP_RETURN1(sv) STMT_START { *PL_stack_sp = (sv); return NORMAL; } STMT_END
#define OP_RETURN2(sv) STMT_START { *--PL_stack_sp = (sv); return NORMAL; } STMT_END

OP_HELPER OP *
op_int_push(pTHX_ int ix, CV *cv, const char *kw)
{
    SV *self = PL_stack_sp[-1];
    SV *value = PL_stack_sp[0];
    IV v;
    SvGETMAGIC(self);
    v = int_value(aTHX_ value, ix, cv, kw);
    OP_RETURN2(boolSV(dqs_int_push(dqs_self_as(aTHX_ self, ix, cv, kw), (int64_t)v) == DQS_DONE));
}

OP_HELPER OP *
op_int_pop(pTHX_ int ix, int peek, CV *cv, const char *kw, SV *targ)
{
    SV *self = *PL_stack_sp;
    DqsQueue *q;
    int64_t v;
    SvGETMAGIC(self);
    q = dqs_self_as(aTHX_ self, ix, cv, kw);
    if ((peek ? dqs_int_peek(q, &v) : dqs_int_pop(q, &v)) != DQS_DONE)
        OP_RETURN1(&PL_sv_undef);
    TARGi((IV)v, 1);
    OP_RETURN1(targ);
}

OP_HELPER OP *
op_size(pTHX_ int ix, CV *cv, const char *kw, SV *targ)
{
    SV *self = *PL_stack_sp;
    SvGETMAGIC(self);
    TARGu((UV)dqs_size(dqs_self_as(aTHX_ self, ix, cv, kw)), 1);
    OP_RETURN1(targ);
}

OP_HELPER OP *
op_str_push(pTHX_ int front, CV *cv, const char *kw)
{
    SV *self = PL_stack_sp[-1];
    SV *value = PL_stack_sp[0];
    STRLEN len;
    int utf8, rc;
    const char *p;
    DqsError err;
    SvGETMAGIC(self);
    p = str_value(aTHX_ value, &len, &utf8, CLASS_STR, cv, kw);
    rc = dqs_str_push(dqs_self_as(aTHX_ self, CLASS_STR, cv, kw), (const uint8_t *)p, len, utf8,
                      front, &err);
    if (rc == DQS_ERROR)
        croak_err_as(aTHX_ CLASS_STR, cv, kw, &err);
    OP_RETURN2(boolSV(rc == DQS_DONE));
}

OP_HELPER OP *
op_str_pop(pTHX_ int back, int peek, CV *cv, const char *kw, SV *targ)
{
    SV *self = *PL_stack_sp;
    DqsStrItem it;
    int rc;
    SvGETMAGIC(self);
    if ((rc = dqs_str_pop(dqs_self_as(aTHX_ self, CLASS_STR, cv, kw), back, peek, &it))
        != DQS_DONE) {
        /* the handle fetched again (the invocant is still on the stack):
         * keeping it across the call would cost the usual case */
        if (rc == DQS_ERROR)
            str_pop_failed(aTHX_ dqs_self_as(aTHX_ *PL_stack_sp, CLASS_STR, cv, kw), cv, kw);
        OP_RETURN1(&PL_sv_undef);
    }
    str_sv(aTHX_ targ, &it);
    SvSETMAGIC(targ);
    OP_RETURN1(targ);
}

#include "fastcall.h"
#include "methods.h"
#include "lease_xs.h"

#ifdef HAVE_XS_PARSE_KEYWORD
/*
 * The keyword API: `q_int_push $q, $v`, `q_int_pop $q`, `q_int_peek $q`,
 * `q_int_size $q`, and the same for int32, int16 and str. XS::Parse::Keyword
 * parses them; each compiles to a custom op (a UNOP or BINOP over the
 * argument expressions) whose pp function checks the invocant and makes the
 * C ABI call itself: no method lookup, no entersub, no call frame. The
 * checks, conversions, results and croak texts are the methods' (with the
 * keyword's name where the method's would be), in the same order: the
 * invocant's get-magic (as the method call does), the value, then the handle.
 *
 * A keyword is enabled where `$^H{"Data::Queue::Shared::<Class>/keywords"}`
 * exists: `use Data::Queue::Shared::<Class>` sets it for the lexical scope
 * being compiled, `no ...` deletes it.
 */
#include "XSParseKeyword.h"

/* One pp function per keyword, so the class is a constant in each. */
#define KW_TARG PAD_SV(PL_op->op_targ)
#define INT_KW_PP(tag, IX)                                                                         \
    static OP *pp_q_##tag##_push(pTHX) { return op_int_push(aTHX_ IX, NULL, "q_" #tag "_push"); } \
    static OP *pp_q_##tag##_pop(pTHX)                                                              \
    { return op_int_pop(aTHX_ IX, 0, NULL, "q_" #tag "_pop", KW_TARG); }                           \
    static OP *pp_q_##tag##_peek(pTHX)                                                             \
    { return op_int_pop(aTHX_ IX, 1, NULL, "q_" #tag "_peek", KW_TARG); }                          \
    static OP *pp_q_##tag##_size(pTHX) { return op_size(aTHX_ IX, NULL, "q_" #tag "_size", KW_TARG); }
INT_KW_PP(int, 0)
INT_KW_PP(int32, 1)
INT_KW_PP(int16, 2)
static OP *pp_q_str_push(pTHX) { return op_str_push(aTHX_ 0, NULL, "q_str_push"); }
static OP *pp_q_str_pop(pTHX) { return op_str_pop(aTHX_ 0, 0, NULL, "q_str_pop", KW_TARG); }
static OP *pp_q_str_peek(pTHX) { return op_str_pop(aTHX_ 0, 1, NULL, "q_str_peek", KW_TARG); }
static OP *pp_q_str_size(pTHX) { return op_size(aTHX_ CLASS_STR, NULL, "q_str_size", KW_TARG); }

struct dqs_keyword {
    const char *name;
    OP *(*pp)(pTHX);
    int ix;     /* class */
    int binary; /* push: invocant and value; the others: invocant only */
    XOP xop;
};

#define KW(tag, IX, op, bin) { "q_" #tag "_" #op, pp_q_##tag##_##op, IX, bin, { 0 } }
static struct dqs_keyword keywords[] = {
    KW(int, 0, push, 1),   KW(int, 0, pop, 0),   KW(int, 0, peek, 0),   KW(int, 0, size, 0),
    KW(int32, 1, push, 1), KW(int32, 1, pop, 0), KW(int32, 1, peek, 0), KW(int32, 1, size, 0),
    KW(int16, 2, push, 1), KW(int16, 2, pop, 0), KW(int16, 2, peek, 0), KW(int16, 2, size, 0),
    KW(str, 3, push, 1),   KW(str, 3, pop, 0),   KW(str, 3, peek, 0),   KW(str, 3, size, 0),
};
#undef KW

static int
kw_build(pTHX_ OP **out, XSParseKeywordPiece *args[], size_t nargs, void *hookdata)
{
    const struct dqs_keyword *k = (const struct dqs_keyword *)hookdata;
    OP *o;
    PERL_UNUSED_ARG(nargs);
    if (k->binary) {
        o = newBINOP(OP_CUSTOM, 0, op_contextualize(args[0]->op, G_SCALAR),
                     op_contextualize(args[1]->op, G_SCALAR));
    }
    else {
        o = newUNOP(OP_CUSTOM, 0, op_contextualize(args[0]->op, G_SCALAR));
        o->op_targ = pad_alloc(OP_CUSTOM, SVs_PADTMP);
    }
    o->op_ppaddr = k->pp;
    *out = o;
    return KEYWORD_PLUGIN_EXPR;
}

/* Parentheses are optional. The operand of the one-argument keywords is
 * parsed like that of a named unary operator (`q_int_pop $q || last` is
 * `(q_int_pop $q) || last`); push takes two comma-separated terms like a
 * list operator (`q_int_push $q, $v or warn` pushes $v). */
static const struct XSParseKeywordPieceType unary_pieces[] = {
    XPK_ARGSCOPE(XPK_ARITHEXPR), { 0 }
};
static const struct XSParseKeywordPieceType binary_pieces[] = {
    XPK_ARGSCOPE(XPK_TERMEXPR, XPK_COMMA, XPK_TERMEXPR), { 0 }
};

#define HOOKS(cls, pieces_)                                                                        \
    { .flags = XPK_FLAG_EXPR, .pieces = pieces_,                                                   \
      .permit_hintkey = "Data::Queue::Shared::" cls "/keywords", .build = kw_build }
static const struct XSParseKeywordHooks kw_hooks[4][2] = {
    { HOOKS("Int", unary_pieces), HOOKS("Int", binary_pieces) },
    { HOOKS("Int32", unary_pieces), HOOKS("Int32", binary_pieces) },
    { HOOKS("Int16", unary_pieces), HOOKS("Int16", binary_pieces) },
    { HOOKS("Str", unary_pieces), HOOKS("Str", binary_pieces) },
};
#undef HOOKS

static void
register_keywords(pTHX)
{
    size_t i;
    boot_xs_parse_keyword(0.33);
    for (i = 0; i < sizeof keywords / sizeof keywords[0]; i++) {
        struct dqs_keyword *k = &keywords[i];
        XopENTRY_set(&k->xop, xop_name, k->name);
        XopENTRY_set(&k->xop, xop_desc, k->name);
        XopENTRY_set(&k->xop, xop_class, k->binary ? OA_BINOP : OA_UNOP);
        Perl_custom_op_register(aTHX_ k->pp, &k->xop);
        register_xs_parse_keyword(k->name, &kw_hooks[k->ix][k->binary], k);
    }
}
#define HAVE_KEYWORDS 1
#else
#define HAVE_KEYWORDS 0
#endif /* HAVE_XS_PARSE_KEYWORD */

MODULE = Data::Queue::Shared		PACKAGE = Data::Queue::Shared::Int

PROTOTYPES: DISABLE

# The class the DqsQueue * typemap checks for: the alias index here (Int,
# Int32, Int16), CLASS_STR in the Str section.
#define SECTION_CLASS ix

BOOT:
{
    int i;
    for (i = 0; i < 4; i++)
        class_stashes[i] = gv_stashpv(class_names[i], GV_ADD);
    sv_setiv(get_sv("Data::Queue::Shared::HAVE_KEYWORDS", GV_ADD), HAVE_KEYWORDS);
    /* Perl's handlers only mark a signal pending; let waits see the mark
     * (PL_sig_pending is process-global, not per interpreter). */
    dqs_set_signal_flag((const int *)&PL_sig_pending);
#ifdef HAVE_XS_PARSE_KEYWORD
    register_keywords(aTHX);
#endif
    fast_boot(aTHX);
}

void
new(class_sv, path_sv, cap_sv, mode_sv = NULL, opts_sv = NULL)
    SV *class_sv
    SV *path_sv
    SV *cap_sv
    SV *mode_sv
    SV *opts_sv
  ALIAS:
    Data::Queue::Shared::Int32::new = 1
    Data::Queue::Shared::Int16::new = 2
  PREINIT:
    DqsError err;
    DqsQueue *q;
    uint64_t cap;
    uint32_t mode = 0600;
    const char *path;
    lease_opts_t lo;
  PPCODE:
    if (!opts_sv && is_opts(aTHX_ mode_sv)) {
        opts_sv = mode_sv;
        mode_sv = NULL;
    }
    lo = lease_opts(aTHX_ opts_sv, ix, cv);
    cap = count_arg(aTHX_ cap_sv, ix, cv, "capacity", 0);
    if (mode_sv) {
        SvGETMAGIC(mode_sv);
        if (SvOK(mode_sv)) {
            IV m;
            if (!NUMERIC_ARG(mode_sv))
                croak("%s->%s: mode '%" SVf "' is not a file mode", CLASS(ix), METHOD,
                      SVfARG(mode_sv));
            m = SvIV_nomg(mode_sv);
            if (m < 0 || m > 07777)
                croak("%s->%s: mode %" IVdf " is not a file mode", CLASS(ix), METHOD, m);
            mode = (uint32_t)m;
        }
    }
    path = str_arg(aTHX_ path_sv, ix, cv, "path");
    dqs_set_create_leases(lo.max_leases, lo.lease_bytes);
    q = path ? dqs_open_path(path, class_variants[ix], cap, 0, mode, &err)
             : dqs_open_anon(class_variants[ix], cap, 0, &err);
    dqs_set_create_leases(-1, -1);
    if (!q)
        croak_err(aTHX_ ix, cv, &err);
    ST(0) = wrap_handle(aTHX_ class_sv, ix, q);
    XSRETURN(1);

void
new_memfd(class_sv, name_sv, cap_sv, opts_sv = NULL)
    SV *class_sv
    SV *name_sv
    SV *cap_sv
    SV *opts_sv
  ALIAS:
    Data::Queue::Shared::Int32::new_memfd = 1
    Data::Queue::Shared::Int16::new_memfd = 2
  PREINIT:
    DqsError err;
    DqsQueue *q;
    uint64_t cap;
    const char *name;
    lease_opts_t lo;
  PPCODE:
    lo = lease_opts(aTHX_ opts_sv, ix, cv);
    cap = count_arg(aTHX_ cap_sv, ix, cv, "capacity", 0);
    if (!(name = str_arg(aTHX_ name_sv, ix, cv, "name")))
        name = "data-queue-shared";
    dqs_set_create_leases(lo.max_leases, lo.lease_bytes);
    q = dqs_open_memfd(name, class_variants[ix], cap, 0, &err);
    dqs_set_create_leases(-1, -1);
    if (!q)
        croak_err(aTHX_ ix, cv, &err);
    ST(0) = wrap_handle(aTHX_ class_sv, ix, q);
    XSRETURN(1);

void
new_from_fd(class_sv, fd_sv)
    SV *class_sv
    SV *fd_sv
  ALIAS:
    Data::Queue::Shared::Int32::new_from_fd = 1
    Data::Queue::Shared::Int16::new_from_fd = 2
  PREINIT:
    DqsError err;
    DqsQueue *q;
    IV fd;
  PPCODE:
    SvGETMAGIC(fd_sv);
    if (!SvOK(fd_sv) || !looks_like_number(fd_sv))
        croak("%s->%s: fd must be a file descriptor number", CLASS(ix), METHOD);
    fd = SvIV_nomg(fd_sv);
    if (fd < 0 || fd > INT_MAX)
        croak("%s->%s: fd %" IVdf " is not a valid file descriptor", CLASS(ix), METHOD, fd);
    q = dqs_open_fd((int)fd, class_variants[ix], &err);
    if (!q)
        croak_err(aTHX_ ix, cv, &err);
    ST(0) = wrap_handle(aTHX_ class_sv, ix, q);
    XSRETURN(1);

void
push(self, value)
    SV *self
    SV *value
  ALIAS:
    Data::Queue::Shared::Int32::push = 1
    Data::Queue::Shared::Int16::push = 2
  PREINIT:
    IV v;
  PPCODE:
    v = int_value(aTHX_ value, ix, cv, NULL);
    ST(0) = boolSV(dqs_int_push(dqs_self(aTHX_ self, ix, cv), (int64_t)v) == DQS_DONE);
    XSRETURN(1);

void
pop(self)
    SV *self
  ALIAS:
    Data::Queue::Shared::Int32::pop = 1
    Data::Queue::Shared::Int16::pop = 2
    Data::Queue::Shared::Int::peek = 3
    Data::Queue::Shared::Int32::peek = 4
    Data::Queue::Shared::Int16::peek = 5
  PREINIT:
    dXSTARG;
    int64_t v;
    int rc;
    DqsQueue *q;
  PPCODE:
    q = dqs_self(aTHX_ self, ix % 3, cv);
    rc = ix < 3 ? dqs_int_pop(q, &v) : dqs_int_peek(q, &v);
    if (rc != DQS_DONE)
        XSRETURN_UNDEF;
    XSprePUSH;
    PUSHi((IV)v);
    XSRETURN(1);

void
push_wait(self, value, timeout = NULL)
    SV *self
    SV *value
    SV *timeout
  ALIAS:
    Data::Queue::Shared::Int32::push_wait = 1
    Data::Queue::Shared::Int16::push_wait = 2
  PREINIT:
    IV v;
    DqsDeadline dl;
    int rc;
  PPCODE:
    v = int_value(aTHX_ value, ix, cv, NULL);
    dl = deadline_arg(aTHX_ timeout, ix, cv);
    for (;;) {
        rc = dqs_int_push_wait(dqs_self(aTHX_ self, ix, cv), (int64_t)v, &dl);
        if (rc != DQS_INTERRUPTED)
            break;
        PERL_ASYNC_CHECK();
    }
    ST(0) = boolSV(rc == DQS_DONE);
    XSRETURN(1);

void
pop_wait(self, timeout = NULL)
    SV *self
    SV *timeout
  ALIAS:
    Data::Queue::Shared::Int32::pop_wait = 1
    Data::Queue::Shared::Int16::pop_wait = 2
  PREINIT:
    dXSTARG;
    DqsDeadline dl;
    int64_t v;
    int rc;
  PPCODE:
    dl = deadline_arg(aTHX_ timeout, ix, cv);
    for (;;) {
        rc = dqs_int_pop_wait(dqs_self(aTHX_ self, ix, cv), &v, &dl);
        if (rc != DQS_INTERRUPTED)
            break;
        PERL_ASYNC_CHECK();
    }
    if (rc != DQS_DONE)
        XSRETURN_UNDEF;
    XSprePUSH;
    PUSHi((IV)v);
    XSRETURN(1);

void
push_multi(self, ...)
    SV *self
  ALIAS:
    Data::Queue::Shared::Int32::push_multi = 1
    Data::Queue::Shared::Int16::push_multi = 2
  PREINIT:
    dXSTARG;
    int64_t *vals, sbuf[STACK_VALUES];
    size_t n = (size_t)(items - 1), done;
  PPCODE:
    vals = int_values(aTHX_ &ST(1), (SSize_t)n, ix, cv, sbuf);
    done = dqs_int_push_multi(dqs_self(aTHX_ self, ix, cv), vals, n);
    XSprePUSH;
    PUSHu((UV)done);
    XSRETURN(1);

void
push_wait_multi(self, timeout, ...)
    SV *self
    SV *timeout
  ALIAS:
    Data::Queue::Shared::Int32::push_wait_multi = 1
    Data::Queue::Shared::Int16::push_wait_multi = 2
  PREINIT:
    dXSTARG;
    int64_t *vals, sbuf[STACK_VALUES];
    size_t n = (size_t)(items - 2), done = 0;
    DqsDeadline dl;
    int rc;
  PPCODE:
    dl = deadline_arg_or(aTHX_ timeout, 0.0, ix, cv);
    vals = int_values(aTHX_ &ST(2), (SSize_t)n, ix, cv, sbuf);
    while (done < n) {
        DqsQueue *q = dqs_self(aTHX_ self, ix, cv);
        done += dqs_int_push_multi(q, vals + done, n - done);
        if (done == n)
            break;
        rc = dqs_int_push_wait(q, vals[done], &dl);
        if (rc == DQS_DONE)
            done++;
        else if (rc == DQS_INTERRUPTED) {
            PERL_ASYNC_CHECK();
        }
        else
            break;
    }
    XSprePUSH;
    PUSHu((UV)done);
    XSRETURN(1);

void
pop_multi(self, count_sv)
    SV *self
    SV *count_sv
  ALIAS:
    Data::Queue::Shared::Int32::pop_multi = 1
    Data::Queue::Shared::Int16::pop_multi = 2
  PREINIT:
    int64_t buf[POP_CHUNK];
    IV want;
    size_t got;
    DqsQueue *q;
  PPCODE:
    want = pop_count_arg(aTHX_ count_sv, ix, cv);
    q = dqs_self(aTHX_ self, ix, cv);
    while (want > 0) {
        size_t chunk = want < POP_CHUNK ? (size_t)want : POP_CHUNK;
        got = dqs_int_pop_multi(q, buf, chunk);
        PUSH_IVS(buf, got);
        want -= (IV)got;
        if (got < chunk)
            break;
    }
    PUTBACK;
    return;

void
drain(self, max_sv = NULL)
    SV *self
    SV *max_sv
  ALIAS:
    Data::Queue::Shared::Int32::drain = 1
    Data::Queue::Shared::Int16::drain = 2
  PREINIT:
    int64_t buf[POP_CHUNK];
    UV want = UV_MAX;
    size_t got;
    DqsQueue *q;
  PPCODE:
    if (max_sv) {
        SvGETMAGIC(max_sv);
        if (SvOK(max_sv)) {
            IV m;
            if (!NUMERIC_ARG(max_sv))
                croak("%s->%s: max must be a number, got '%" SVf "'", CLASS(ix), METHOD,
                      SVfARG(max_sv));
            m = SvIV_nomg(max_sv);
            /* a negative max (-1) is no limit, as in the C implementation */
            want = m < 0 ? UV_MAX : (UV)m;
        }
    }
    q = dqs_self(aTHX_ self, ix, cv);
    /* At most one lap: what was queued at the call has been taken by then,
     * and a producer as fast as this loop cannot grow the list forever. */
    if (want > dqs_capacity(q))
        want = dqs_capacity(q);
    while (want > 0) {
        size_t chunk = want < POP_CHUNK ? (size_t)want : POP_CHUNK;
        got = dqs_int_pop_multi(q, buf, chunk);
        PUSH_IVS(buf, got);
        want -= got;
        if (got < chunk)
            break;
    }
    PUTBACK;
    return;

void
pop_wait_multi(self, count_sv, timeout = NULL)
    SV *self
    SV *count_sv
    SV *timeout
  ALIAS:
    Data::Queue::Shared::Int32::pop_wait_multi = 1
    Data::Queue::Shared::Int16::pop_wait_multi = 2
  PREINIT:
    int64_t buf[POP_CHUNK];
    IV want;
    size_t got;
    DqsDeadline dl;
    int rc;
    DqsQueue *q;
  PPCODE:
    want = pop_count_arg(aTHX_ count_sv, ix, cv);
    dl = deadline_arg(aTHX_ timeout, ix, cv);
    if (want > 0) {
        for (;;) {
            q = dqs_self(aTHX_ self, ix, cv);
            rc = dqs_int_pop_wait(q, &buf[0], &dl);
            if (rc != DQS_INTERRUPTED)
                break;
            PERL_ASYNC_CHECK();
        }
        if (rc == DQS_DONE) {
            PUSH_IVS(buf, 1);
            want--;
            while (want > 0) {
                size_t chunk = want < POP_CHUNK ? (size_t)want : POP_CHUNK;
                got = dqs_int_pop_multi(q, buf, chunk);
                PUSH_IVS(buf, got);
                want -= (IV)got;
                if (got < chunk)
                    break;
            }
        }
    }
    PUTBACK;
    return;

void
size(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::size = 1
    Data::Queue::Shared::Int16::size = 2
  PREINIT:
    dXSTARG;
  PPCODE:
    XSprePUSH;
    PUSHu((UV)dqs_size(q));
    XSRETURN(1);

void
capacity(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::capacity = 1
    Data::Queue::Shared::Int16::capacity = 2
  PREINIT:
    dXSTARG;
  PPCODE:
    XSprePUSH;
    PUSHu((UV)dqs_capacity(q));
    XSRETURN(1);

void
is_empty(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::is_empty = 1
    Data::Queue::Shared::Int16::is_empty = 2
  PPCODE:
    ST(0) = boolSV(dqs_size(q) == 0);
    XSRETURN(1);

void
is_full(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::is_full = 1
    Data::Queue::Shared::Int16::is_full = 2
  PPCODE:
    ST(0) = boolSV(dqs_is_full(q));
    XSRETURN(1);

void
clear(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::clear = 1
    Data::Queue::Shared::Int16::clear = 2
  PPCODE:
    (void)dqs_clear(q);
    XSRETURN_EMPTY;

void
sync(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::sync = 1
    Data::Queue::Shared::Int16::sync = 2
  PREINIT:
    DqsError err;
  PPCODE:
    if (dqs_sync(q, &err) != 0)
        croak_err(aTHX_ ix, cv, &err);
    XSRETURN_YES;

void
memfd(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::memfd = 1
    Data::Queue::Shared::Int16::memfd = 2
  PREINIT:
    dXSTARG;
  PPCODE:
    XSprePUSH;
    PUSHi((IV)dqs_memfd(q));
    XSRETURN(1);

void
eventfd(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::eventfd = 1
    Data::Queue::Shared::Int16::eventfd = 2
  PREINIT:
    dXSTARG;
    DqsError err;
    int fd;
  PPCODE:
    fd = dqs_eventfd(q, &err);
    if (fd < 0)
        croak_err(aTHX_ ix, cv, &err);
    XSprePUSH;
    PUSHi((IV)fd);
    XSRETURN(1);

void
eventfd_set(self, fd_sv)
    SV *self
    SV *fd_sv
  ALIAS:
    Data::Queue::Shared::Int32::eventfd_set = 1
    Data::Queue::Shared::Int16::eventfd_set = 2
  PREINIT:
    dXSTARG;
    IV fd;
  PPCODE:
    fd = m_eventfd_set(aTHX_ self, fd_sv, ix, cv);
    XSprePUSH;
    PUSHi(fd);
    XSRETURN(1);

void
fileno(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::fileno = 1
    Data::Queue::Shared::Int16::fileno = 2
  PREINIT:
    dXSTARG;
  PPCODE:
    XSprePUSH;
    PUSHi((IV)dqs_eventfd_fileno(q));
    XSRETURN(1);

void
notify(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::notify = 1
    Data::Queue::Shared::Int16::notify = 2
  PPCODE:
    ST(0) = m_notify(aTHX_ q);
    XSRETURN(1);

void
eventfd_consume(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::eventfd_consume = 1
    Data::Queue::Shared::Int16::eventfd_consume = 2
  PREINIT:
    dXSTARG;
    uint64_t count;
  PPCODE:
    if (!m_eventfd_consume(aTHX_ q, &count))
        XSRETURN_UNDEF;
    XSprePUSH;
    PUSHu((UV)count);
    XSRETURN(1);

void
path(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::path = 1
    Data::Queue::Shared::Int16::path = 2
  PREINIT:
    const char *p;
  PPCODE:
    p = dqs_path(q);
    if (!p)
        XSRETURN_UNDEF;
    ST(0) = sv_2mortal(newSVpv(p, 0));
    XSRETURN(1);

void
unlink(self, path_sv = NULL)
    SV *self
    SV *path_sv
  ALIAS:
    Data::Queue::Shared::Int32::unlink = 1
    Data::Queue::Shared::Int16::unlink = 2
  PPCODE:
    ST(0) = m_unlink(aTHX_ self, path_sv, ix, cv);
    XSRETURN(1);

void
stats(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::stats = 1
    Data::Queue::Shared::Int16::stats = 2
  PPCODE:
    ST(0) = m_stats(aTHX_ q);
    XSRETURN(1);

void
DESTROY(self)
    SV *self
  ALIAS:
    Data::Queue::Shared::Int32::DESTROY = 1
    Data::Queue::Shared::Int16::DESTROY = 2
  PPCODE:
    PERL_UNUSED_VAR(ix);
    m_destroy(aTHX_ self);
    XSRETURN_EMPTY;

void
CLONE_SKIP(...)
  ALIAS:
    Data::Queue::Shared::Int32::CLONE_SKIP = 1
    Data::Queue::Shared::Int16::CLONE_SKIP = 2
  PPCODE:
    PERL_UNUSED_VAR(ix);
    PERL_UNUSED_VAR(items);
    XSRETURN_IV(1);

# ---- Leases (lease_xs.h, src/lease/): pop_lease, pop_lease_wait, ack,
# release (nack), lease_stats and leases of the integer classes.

void
pop_lease(self, lease_timeout = NULL)
    SV *self
    SV *lease_timeout
  ALIAS:
    Data::Queue::Shared::Int32::pop_lease = 1
    Data::Queue::Shared::Int16::pop_lease = 2
  PREINIT:
    DqsError err;
    double lt;
    int64_t v;
    uint64_t lease;
    int rc;
  PPCODE:
    lt = lease_timeout_arg(aTHX_ lease_timeout, ix, cv);
    rc = dqs_int_pop_lease(dqs_self(aTHX_ self, ix, cv), lt, &v, &lease, &err);
    if (rc == DQS_ERROR)
        croak_err(aTHX_ ix, cv, &err);
    if (rc != DQS_DONE)
        XSRETURN_EMPTY;
    EXTEND(SP, 2);
    mPUSHi((IV)v);
    mPUSHu((UV)lease);
    XSRETURN(2);

void
pop_lease_wait(self, timeout = NULL, lease_timeout = NULL)
    SV *self
    SV *timeout
    SV *lease_timeout
  ALIAS:
    Data::Queue::Shared::Int32::pop_lease_wait = 1
    Data::Queue::Shared::Int16::pop_lease_wait = 2
  PREINIT:
    DqsError err;
    DqsDeadline dl;
    double lt;
    int64_t v;
    uint64_t lease;
    int rc;
  PPCODE:
    dl = deadline_arg(aTHX_ timeout, ix, cv);
    lt = lease_timeout_arg(aTHX_ lease_timeout, ix, cv);
    for (;;) {
        rc = dqs_int_pop_lease_wait(dqs_self(aTHX_ self, ix, cv), &dl, lt, &v, &lease, &err);
        if (rc != DQS_INTERRUPTED)
            break;
        PERL_ASYNC_CHECK();
    }
    if (rc == DQS_ERROR)
        croak_err(aTHX_ ix, cv, &err);
    if (rc != DQS_DONE)
        XSRETURN_EMPTY;
    EXTEND(SP, 2);
    mPUSHi((IV)v);
    mPUSHu((UV)lease);
    XSRETURN(2);

void
pop_lease_multi(self, count_sv, lease_timeout = NULL)
    SV *self
    SV *count_sv
    SV *lease_timeout
  ALIAS:
    Data::Queue::Shared::Int32::pop_lease_multi = 1
    Data::Queue::Shared::Int16::pop_lease_multi = 2
  PPCODE:
    SP = pop_lease_multi_list(aTHX_ SP, self, count_sv, lease_timeout, ix, cv);
    PUTBACK;
    return;

void
ack(self, lease)
    SV *self
    SV *lease
  ALIAS:
    Data::Queue::Shared::Int32::ack = 1
    Data::Queue::Shared::Int16::ack = 2
    Data::Queue::Shared::Int::release = 3
    Data::Queue::Shared::Int32::release = 4
    Data::Queue::Shared::Int16::release = 5
    Data::Queue::Shared::Int::nack = 6
    Data::Queue::Shared::Int32::nack = 7
    Data::Queue::Shared::Int16::nack = 8
  PREINIT:
    DqsError err;
    uint64_t id;
    int rc;
  PPCODE:
    id = lease_arg(aTHX_ lease, ix % 3, cv);
    rc = dqs_end_lease(dqs_self(aTHX_ self, ix % 3, cv), id, ix >= 3, &err);
    if (rc == DQS_ERROR)
        croak_err(aTHX_ ix % 3, cv, &err);
    ST(0) = boolSV(rc == DQS_DONE);
    XSRETURN(1);

void
lease_stats(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::lease_stats = 1
    Data::Queue::Shared::Int16::lease_stats = 2
  PPCODE:
    ST(0) = lease_stats_hv(aTHX_ q);
    XSRETURN(1);

void
leases(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::leases = 1
    Data::Queue::Shared::Int16::leases = 2
  PPCODE:
    SP = push_leases(aTHX_ SP, q);
    PUTBACK;
    return;

MODULE = Data::Queue::Shared		PACKAGE = Data::Queue::Shared::Str

void
new(class_sv, path_sv, cap_sv, arena_sv = NULL, mode_sv = NULL, opts_sv = NULL)
    SV *class_sv
    SV *path_sv
    SV *cap_sv
    SV *arena_sv
    SV *mode_sv
    SV *opts_sv
  PREINIT:
    const int ix = CLASS_STR;
    DqsError err;
    DqsQueue *q;
    uint64_t cap, arena = 0;
    uint32_t mode = 0600;
    const char *path;
    lease_opts_t lo;
  PPCODE:
    if (!opts_sv && is_opts(aTHX_ mode_sv)) {
        opts_sv = mode_sv;
        mode_sv = NULL;
    }
    else if (!opts_sv && !mode_sv && is_opts(aTHX_ arena_sv)) {
        opts_sv = arena_sv;
        arena_sv = NULL;
    }
    lo = lease_opts(aTHX_ opts_sv, ix, cv);
    cap = count_arg(aTHX_ cap_sv, ix, cv, "capacity", 0);
    arena = count_arg(aTHX_ arena_sv, ix, cv, "arena size", 1);
    if (mode_sv) {
        SvGETMAGIC(mode_sv);
        if (SvOK(mode_sv)) {
            IV m;
            if (!NUMERIC_ARG(mode_sv))
                croak("%s->%s: mode '%" SVf "' is not a file mode", CLASS(ix), METHOD,
                      SVfARG(mode_sv));
            m = SvIV_nomg(mode_sv);
            if (m < 0 || m > 07777)
                croak("%s->%s: mode %" IVdf " is not a file mode", CLASS(ix), METHOD, m);
            mode = (uint32_t)m;
        }
    }
    path = str_arg(aTHX_ path_sv, ix, cv, "path");
    dqs_set_create_leases(lo.max_leases, lo.lease_bytes);
    q = path ? dqs_open_path(path, DQS_STR, cap, arena, mode, &err)
             : dqs_open_anon(DQS_STR, cap, arena, &err);
    dqs_set_create_leases(-1, -1);
    if (!q)
        croak_err(aTHX_ ix, cv, &err);
    ST(0) = wrap_handle(aTHX_ class_sv, ix, q);
    XSRETURN(1);

void
new_memfd(class_sv, name_sv, cap_sv, arena_sv = NULL, opts_sv = NULL)
    SV *class_sv
    SV *name_sv
    SV *cap_sv
    SV *arena_sv
    SV *opts_sv
  PREINIT:
    const int ix = CLASS_STR;
    DqsError err;
    DqsQueue *q;
    uint64_t cap, arena = 0;
    const char *name;
    lease_opts_t lo;
  PPCODE:
    if (!opts_sv && is_opts(aTHX_ arena_sv)) {
        opts_sv = arena_sv;
        arena_sv = NULL;
    }
    lo = lease_opts(aTHX_ opts_sv, ix, cv);
    cap = count_arg(aTHX_ cap_sv, ix, cv, "capacity", 0);
    arena = count_arg(aTHX_ arena_sv, ix, cv, "arena size", 1);
    if (!(name = str_arg(aTHX_ name_sv, ix, cv, "name")))
        name = "data-queue-shared";
    dqs_set_create_leases(lo.max_leases, lo.lease_bytes);
    q = dqs_open_memfd(name, DQS_STR, cap, arena, &err);
    dqs_set_create_leases(-1, -1);
    if (!q)
        croak_err(aTHX_ ix, cv, &err);
    ST(0) = wrap_handle(aTHX_ class_sv, ix, q);
    XSRETURN(1);

void
new_from_fd(class_sv, fd_sv)
    SV *class_sv
    SV *fd_sv
  PREINIT:
    const int ix = CLASS_STR;
    DqsError err;
    DqsQueue *q;
    IV fd;
  PPCODE:
    SvGETMAGIC(fd_sv);
    if (!SvOK(fd_sv) || !looks_like_number(fd_sv))
        croak("%s->%s: fd must be a file descriptor number", CLASS(ix), METHOD);
    fd = SvIV_nomg(fd_sv);
    if (fd < 0 || fd > INT_MAX)
        croak("%s->%s: fd %" IVdf " is not a valid file descriptor", CLASS(ix), METHOD, fd);
    q = dqs_open_fd((int)fd, DQS_STR, &err);
    if (!q)
        croak_err(aTHX_ ix, cv, &err);
    ST(0) = wrap_handle(aTHX_ class_sv, ix, q);
    XSRETURN(1);

# The methods every class has (their bodies shared through methods.h);
# SECTION_CLASS is the class the DqsQueue * typemap checks for.

#undef SECTION_CLASS
#define SECTION_CLASS CLASS_STR

void
size(q)
    DqsQueue *q
  PREINIT:
    dXSTARG;
  PPCODE:
    XSprePUSH;
    PUSHu((UV)dqs_size(q));
    XSRETURN(1);

void
capacity(q)
    DqsQueue *q
  PREINIT:
    dXSTARG;
  PPCODE:
    XSprePUSH;
    PUSHu((UV)dqs_capacity(q));
    XSRETURN(1);

void
is_empty(q)
    DqsQueue *q
  PPCODE:
    ST(0) = boolSV(dqs_size(q) == 0);
    XSRETURN(1);

void
is_full(q)
    DqsQueue *q
  PPCODE:
    ST(0) = boolSV(dqs_is_full(q));
    XSRETURN(1);

void
clear(q)
    DqsQueue *q
  PPCODE:
    (void)dqs_clear(q);
    XSRETURN_EMPTY;

void
sync(q)
    DqsQueue *q
  PREINIT:
    DqsError err;
  PPCODE:
    if (dqs_sync(q, &err) != 0)
        croak_err(aTHX_ CLASS_STR, cv, &err);
    XSRETURN_YES;

void
memfd(q)
    DqsQueue *q
  PREINIT:
    dXSTARG;
  PPCODE:
    XSprePUSH;
    PUSHi((IV)dqs_memfd(q));
    XSRETURN(1);

void
eventfd(q)
    DqsQueue *q
  PREINIT:
    dXSTARG;
    DqsError err;
    int fd;
  PPCODE:
    fd = dqs_eventfd(q, &err);
    if (fd < 0)
        croak_err(aTHX_ CLASS_STR, cv, &err);
    XSprePUSH;
    PUSHi((IV)fd);
    XSRETURN(1);

void
eventfd_set(self, fd_sv)
    SV *self
    SV *fd_sv
  PREINIT:
    dXSTARG;
    IV fd;
  PPCODE:
    fd = m_eventfd_set(aTHX_ self, fd_sv, CLASS_STR, cv);
    XSprePUSH;
    PUSHi(fd);
    XSRETURN(1);

void
fileno(q)
    DqsQueue *q
  PREINIT:
    dXSTARG;
  PPCODE:
    XSprePUSH;
    PUSHi((IV)dqs_eventfd_fileno(q));
    XSRETURN(1);

void
notify(q)
    DqsQueue *q
  PPCODE:
    ST(0) = m_notify(aTHX_ q);
    XSRETURN(1);

void
eventfd_consume(q)
    DqsQueue *q
  PREINIT:
    dXSTARG;
    uint64_t count;
  PPCODE:
    if (!m_eventfd_consume(aTHX_ q, &count))
        XSRETURN_UNDEF;
    XSprePUSH;
    PUSHu((UV)count);
    XSRETURN(1);

void
path(q)
    DqsQueue *q
  PREINIT:
    const char *p;
  PPCODE:
    p = dqs_path(q);
    if (!p)
        XSRETURN_UNDEF;
    ST(0) = sv_2mortal(newSVpv(p, 0));
    XSRETURN(1);

void
unlink(self, path_sv = NULL)
    SV *self
    SV *path_sv
  PPCODE:
    ST(0) = m_unlink(aTHX_ self, path_sv, CLASS_STR, cv);
    XSRETURN(1);

void
stats(q)
    DqsQueue *q
  PPCODE:
    ST(0) = m_stats(aTHX_ q);
    XSRETURN(1);

void
DESTROY(self)
    SV *self
  PPCODE:
    m_destroy(aTHX_ self);
    XSRETURN_EMPTY;

void
CLONE_SKIP(...)
  PPCODE:
    PERL_UNUSED_VAR(items);
    XSRETURN_IV(1);

void
push(self, value)
    SV *self
    SV *value
  ALIAS:
    push_front = 1
  PREINIT:
    STRLEN len;
    int utf8, rc;
    const char *p;
    DqsError err;
  PPCODE:
    p = str_value(aTHX_ value, &len, &utf8, CLASS_STR, cv, NULL);
    rc = dqs_str_push(dqs_self(aTHX_ self, CLASS_STR, cv), (const uint8_t *)p, len, utf8, ix,
                      &err);
    if (rc == DQS_ERROR)
        croak_err(aTHX_ CLASS_STR, cv, &err);
    ST(0) = boolSV(rc == DQS_DONE);
    XSRETURN(1);

void
push_wait(self, value, timeout = NULL)
    SV *self
    SV *value
    SV *timeout
  ALIAS:
    push_front_wait = 1
  PREINIT:
    STRLEN len;
    int utf8, rc;
    const char *p;
    DqsError err;
    DqsDeadline dl;
  PPCODE:
    /* The timeout first: its magic could change the value's buffer. */
    dl = deadline_arg(aTHX_ timeout, CLASS_STR, cv);
    p = str_value(aTHX_ value, &len, &utf8, CLASS_STR, cv, NULL);
    for (;;) {
        rc = dqs_str_push_wait(dqs_self(aTHX_ self, CLASS_STR, cv), (const uint8_t *)p, len,
                               utf8, ix, &dl, &err);
        if (rc != DQS_INTERRUPTED)
            break;
        PERL_ASYNC_CHECK();
    }
    if (rc == DQS_ERROR)
        croak_err(aTHX_ CLASS_STR, cv, &err);
    ST(0) = boolSV(rc == DQS_DONE);
    XSRETURN(1);

void
pop(self)
    SV *self
  ALIAS:
    pop_back = 1
    peek = 2
  PREINIT:
    dXSTARG;
    DqsStrItem it;
    int rc;
  PPCODE:
    if ((rc = dqs_str_pop(dqs_self(aTHX_ self, CLASS_STR, cv), ix == 1, ix == 2, &it))
        != DQS_DONE) {
        /* the handle fetched again (ST(0) is still there): keeping it
         * across the call would cost the usual case */
        if (rc == DQS_ERROR)
            str_pop_failed(aTHX_ dqs_self(aTHX_ ST(0), CLASS_STR, cv), cv, NULL);
        XSRETURN_UNDEF;
    }
    str_sv(aTHX_ TARG, &it);
    XSprePUSH;
    PUSHTARG;
    XSRETURN(1);

void
pop_wait(self, timeout = NULL)
    SV *self
    SV *timeout
  ALIAS:
    pop_back_wait = 1
  PREINIT:
    dXSTARG;
    DqsStrItem it;
    DqsDeadline dl;
    DqsQueue *q;
    int rc;
  PPCODE:
    dl = deadline_arg(aTHX_ timeout, CLASS_STR, cv);
    for (;;) {
        q = dqs_self(aTHX_ self, CLASS_STR, cv);
        rc = dqs_str_pop_wait(q, ix == 1, &dl, &it);
        if (rc != DQS_INTERRUPTED)
            break;
        PERL_ASYNC_CHECK();
    }
    if (rc == DQS_ERROR)
        str_pop_failed(aTHX_ q, cv, NULL);
    if (rc != DQS_DONE)
        XSRETURN_UNDEF;
    str_sv(aTHX_ TARG, &it);
    XSprePUSH;
    PUSHTARG;
    XSRETURN(1);

void
push_multi(self, ...)
    SV *self
  PREINIT:
    dXSTARG;
    DqsStrItem *vals, sbuf[STACK_VALUES];
    DqsError err;
    IV done;
  PPCODE:
    vals = str_values(aTHX_ &ST(1), items - 1, CLASS_STR, cv, 1, sbuf);
    done = (IV)dqs_str_push_multi(dqs_self(aTHX_ self, CLASS_STR, cv), vals,
                                  (size_t)(items - 1), &err);
    if (done < 0)
        croak_err(aTHX_ CLASS_STR, cv, &err);
    XSprePUSH;
    PUSHi(done);
    XSRETURN(1);

void
push_wait_multi(self, timeout, ...)
    SV *self
    SV *timeout
  PREINIT:
    dXSTARG;
    DqsStrItem *vals, sbuf[STACK_VALUES];
    DqsError err;
    DqsDeadline dl;
    size_t n = (size_t)(items - 2), done = 0;
    int rc;
  PPCODE:
    dl = deadline_arg_or(aTHX_ timeout, 0.0, CLASS_STR, cv);
    vals = str_values(aTHX_ &ST(2), items - 2, CLASS_STR, cv, 0, sbuf);
    while (done < n) {
        DqsQueue *q = dqs_self(aTHX_ self, CLASS_STR, cv);
        size_t k = 0;
        /* Its wait for the back lock ends at the deadline too. */
        rc = dqs_str_push_multi_until(q, vals + done, n - done, &dl, &k, &err);
        if (rc == DQS_ERROR)
            croak_err(aTHX_ CLASS_STR, cv, &err);
        if (rc == DQS_INTERRUPTED) {
            PERL_ASYNC_CHECK();
            continue;
        }
        if (rc != DQS_DONE)
            break;
        done += k;
        if (done == n)
            break;
        rc = dqs_str_push_wait(q, vals[done].ptr, vals[done].len, vals[done].utf8, 0, &dl, &err);
        if (rc == DQS_DONE)
            done++;
        else if (rc == DQS_INTERRUPTED) {
            PERL_ASYNC_CHECK();
        }
        else if (rc == DQS_ERROR)
            croak_err(aTHX_ CLASS_STR, cv, &err);
        else
            break;
    }
    XSprePUSH;
    PUSHu((UV)done);
    XSRETURN(1);

void
pop_multi(self, count_sv, max_sv = NULL)
    SV *self
    SV *count_sv
    SV *max_sv
  PREINIT:
    IV want;
    uint64_t budget = 0;
    int has_budget;
  PPCODE:
    want = pop_count_arg(aTHX_ count_sv, CLASS_STR, cv);
    has_budget = budget_arg(aTHX_ max_sv, &budget, CLASS_STR, cv);
    PUTBACK;
    if (want > 0)
        str_pop_list(aTHX_ dqs_self(aTHX_ self, CLASS_STR, cv), (size_t)want, has_budget, budget,
                     cv);
    return;

void
drain(self, max_sv = NULL)
    SV *self
    SV *max_sv
  PREINIT:
    size_t want = SIZE_MAX;
  PPCODE:
    if (max_sv) {
        SvGETMAGIC(max_sv);
        if (SvOK(max_sv)) {
            IV m;
            if (!NUMERIC_ARG(max_sv))
                croak("%s->%s: max must be a number, got '%" SVf "'", CLASS_STR_NAME, METHOD,
                      SVfARG(max_sv));
            m = SvIV_nomg(max_sv);
            /* a negative max (-1) is no limit, as in the C implementation */
            want = m < 0 ? SIZE_MAX : (size_t)m;
        }
    }
    PUTBACK;
    if (want > 0)
        str_pop_list(aTHX_ dqs_self(aTHX_ self, CLASS_STR, cv), want, 0, 0, cv);
    return;

void
compress(self, min_sv, level_sv = NULL)
    SV *self
    SV *min_sv
    SV *level_sv
  PREINIT:
    dXSTARG;
    DqsError err;
    NV m;
    IV level = 3;
    int64_t prev;
  PPCODE:
    SvGETMAGIC(min_sv);
    if (!SvOK(min_sv) || !NUMERIC_ARG(min_sv))
        croak("%s->%s: min_bytes must be a non-negative integer, got '%" SVf "'", CLASS_STR_NAME,
              METHOD, SVfARG(min_sv));
    m = SvNV_nomg(min_sv);
    if (Perl_isnan(m) || m < 0 || m != Perl_floor(m))
        croak("%s->%s: min_bytes must be a non-negative integer, got %" NVgf, CLASS_STR_NAME, METHOD,
              m);
    if (level_sv) {
        SvGETMAGIC(level_sv);
        if (SvOK(level_sv)) {
            NV l;
            if (!NUMERIC_ARG(level_sv))
                croak("%s->%s: level must be an integer, got '%" SVf "'", CLASS_STR_NAME, METHOD,
                      SVfARG(level_sv));
            l = SvNV_nomg(level_sv);
            if (Perl_isnan(l) || l != Perl_floor(l) || l < -1e9 || l > 1e9)
                croak("%s->%s: level must be an integer, got %" NVgf, CLASS_STR_NAME, METHOD, l);
            level = (IV)l;
        }
    }
    prev = dqs_str_set_compress(dqs_self(aTHX_ self, CLASS_STR, cv),
                                m >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)m, (int)level,
                                &err);
    if (prev < 0)
        croak_err(aTHX_ CLASS_STR, cv, &err);
    XSprePUSH;
    PUSHu((UV)prev);
    XSRETURN(1);

void
lock_timeout(self, secs_sv = NULL)
    SV *self
    SV *secs_sv
  PREINIT:
    DqsQueue *q;
    NV t;
  PPCODE:
    if (items > 1) {
        SvGETMAGIC(secs_sv);
        if (!SvOK(secs_sv))
            t = -1.0;
        else {
            if (!looks_like_number(secs_sv))
                croak("%s->%s: timeout must be a number of seconds, got '%" SVf "'", CLASS_STR_NAME,
                      METHOD, SVfARG(secs_sv));
            t = SvNV_nomg(secs_sv);
            if (Perl_isnan(t) || t < 0)
                croak("%s->%s: timeout must be a number of seconds, got %" NVgf, CLASS_STR_NAME,
                      METHOD, t);
        }
        q = dqs_self(aTHX_ self, CLASS_STR, cv);
        dqs_str_set_lock_timeout(q, (double)t);
    }
    q = dqs_self(aTHX_ self, CLASS_STR, cv);
    t = dqs_str_lock_timeout(q);
    ST(0) = t < 0 ? &PL_sv_undef : sv_2mortal(newSVnv(t));
    XSRETURN(1);

void
pop_wait_multi(self, count_sv, timeout = NULL, max_sv = NULL)
    SV *self
    SV *count_sv
    SV *timeout
    SV *max_sv
  PREINIT:
    const DqsStrItem *its;
    DqsStrItem first;
    size_t got;
    IV want;
    uint64_t budget = 0;
    int has_budget, rc;
    DqsDeadline dl;
    DqsQueue *q;
  PPCODE:
    want = pop_count_arg(aTHX_ count_sv, CLASS_STR, cv);
    dl = deadline_arg(aTHX_ timeout, CLASS_STR, cv);
    has_budget = budget_arg(aTHX_ max_sv, &budget, CLASS_STR, cv);
    if (want > 0) {
        for (;;) {
            q = dqs_self(aTHX_ self, CLASS_STR, cv);
            rc = dqs_str_pop_wait(q, 0, &dl, &first);
            if (rc != DQS_INTERRUPTED)
                break;
            PERL_ASYNC_CHECK();
        }
        if (rc == DQS_ERROR)
            str_pop_failed(aTHX_ q, cv, NULL);
        if (rc == DQS_DONE) {
            uint64_t used = first.len;
            PUSH_STRS(&first, 1);
            want--;
            if (want > 0 && (!has_budget || used <= budget)) {
                /* the first item was the one the budget always allows;
                 * the rest must fit in what is left of it */
                got = dqs_str_pop_multi(q, (size_t)want, has_budget, budget - used, 0, &its);
                if (!got)
                    str_pop_failed(aTHX_ q, cv, NULL);
                PUSH_STRS(its, got);
            }
        }
    }
    PUTBACK;
    return;

# ---- Leases (lease_xs.h, src/lease/): pop_lease, pop_lease_wait, ack,
# release (nack), lease_stats and leases of Str.

void
pop_lease(self, ...)
    SV *self
  ALIAS:
    Data::Queue::Shared::Str::pop_lease_wait = 1
  PREINIT:
    const int cls = CLASS_STR;
    DqsError err;
    DqsDeadline dl;
    DqsStrItem it;
    double lt;
    uint64_t lease;
    int rc;
  PPCODE:
    if (items > 2 + ix)
        croak("%s->%s: too many arguments", CLASS(cls), METHOD);
    if (ix == 0) {
        lt = lease_timeout_arg(aTHX_ items > 1 ? ST(1) : NULL, cls, cv);
        rc = dqs_str_pop_lease(dqs_self(aTHX_ self, cls, cv), lt, &it, &lease, &err);
    }
    else {
        /* pop_lease_wait($timeout, $lease_timeout) */
        dl = deadline_arg(aTHX_ items > 1 ? ST(1) : NULL, cls, cv);
        lt = lease_timeout_arg(aTHX_ items > 2 ? ST(2) : NULL, cls, cv);
        for (;;) {
            rc = dqs_str_pop_lease_wait(dqs_self(aTHX_ self, cls, cv), &dl, lt, &it, &lease, &err);
            if (rc != DQS_INTERRUPTED)
                break;
            PERL_ASYNC_CHECK();
        }
    }
    if (rc == DQS_ERROR)
        croak_err(aTHX_ cls, cv, &err);
    if (rc != DQS_DONE)
        XSRETURN_EMPTY;
    EXTEND(SP, 2);
    PUSHs(str_sv(aTHX_ sv_newmortal(), &it));
    mPUSHu((UV)lease);
    XSRETURN(2);

void
pop_lease_multi(self, count_sv, lease_timeout = NULL)
    SV *self
    SV *count_sv
    SV *lease_timeout
  PPCODE:
    SP = pop_lease_multi_list(aTHX_ SP, self, count_sv, lease_timeout, CLASS_STR, cv);
    PUTBACK;
    return;

void
ack(self, lease)
    SV *self
    SV *lease
  ALIAS:
    Data::Queue::Shared::Str::release = 1
    Data::Queue::Shared::Str::nack = 2
  PREINIT:
    DqsError err;
    uint64_t id;
    int rc;
  PPCODE:
    id = lease_arg(aTHX_ lease, CLASS_STR, cv);
    rc = dqs_end_lease(dqs_self(aTHX_ self, CLASS_STR, cv), id, ix >= 1, &err);
    if (rc == DQS_ERROR)
        croak_err(aTHX_ CLASS_STR, cv, &err);
    ST(0) = boolSV(rc == DQS_DONE);
    XSRETURN(1);

void
lease_stats(q)
    DqsQueue *q
  PPCODE:
    ST(0) = lease_stats_hv(aTHX_ q);
    XSRETURN(1);

void
leases(q)
    DqsQueue *q
  PPCODE:
    SP = push_leases(aTHX_ SP, q);
    PUTBACK;
    return;

MODULE = Data::Queue::Shared		PACKAGE = Data::Queue::Shared

# For the tests of the method short cut (t/36-method-fastpath.t).

IV
_fastcall_sites(code)
    CV *code
  CODE:
    RETVAL = CvISXSUB(code) || !CvROOT(code) ? 0 : fast_sites(CvROOT(code));
  OUTPUT:
    RETVAL

UV
_fastcall_hits()
  CODE:
    RETVAL = fast_hits;
  OUTPUT:
    RETVAL

# Tests only: sleepers this process has woken with FUTEX_WAKE (queue
# waiters and lock sleepers), so a lost wake-up fails by count.
NV
_futex_woken()
  CODE:
    RETVAL = (NV)dqs_futex_woken();
  OUTPUT:
    RETVAL
