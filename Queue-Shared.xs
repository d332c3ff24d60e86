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

#define N_INT_CLASSES 3
#define CLASS_STR 3

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

static void croak_err(pTHX_ int ix, CV *cv, const DqsError *err) __attribute__((noreturn));
static void
croak_err(pTHX_ int ix, CV *cv, const DqsError *err)
{
    if (err->os_errno)
        SETERRNO(err->os_errno, 0);
    croak("%s->%s: %s", CLASS(ix), METHOD, err->msg);
}

/* The handle behind a queue object, or a croak. */
static DqsQueue *
dqs_self(pTHX_ SV *self, int ix, CV *cv)
{
    if (SvROK(self)) {
        SV *obj = SvRV(self);
        if (SvOBJECT(obj) && SvTYPE(obj) < SVt_PVAV && SvIOKp(obj)
            && (SvSTASH(obj) == class_stashes[ix] || sv_derived_from(self, CLASS(ix)))) {
            IV iv = SvIVX(obj);
            if (!iv)
                croak("%s->%s: the queue object has been destroyed", CLASS(ix), METHOD);
            return INT2PTR(DqsQueue *, iv);
        }
    }
    croak("%s->%s: invocant is not of type %s", CLASS(ix), METHOD, CLASS(ix));
    return NULL; /* not reached */
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
    SvREADONLY_on(obj);
    return sv_2mortal(ref);
}

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
        return UINT64_MAX;
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
    s = SvPV_nomg(sv, len);
    if (memchr(s, '\0', len))
        croak("%s->%s: %s contains a NUL byte", CLASS(ix), METHOD, what);
    return s;
}

/* A timeout in seconds: absent/undef/negative/+Inf wait forever, 0 tries once. */
static DqsDeadline
deadline_arg(pTHX_ SV *sv, int ix, CV *cv)
{
    NV t;
    if (!sv)
        return dqs_deadline(-1.0);
    SvGETMAGIC(sv);
    if (!SvOK(sv))
        return dqs_deadline(-1.0);
    t = SvNV_nomg(sv);
    if (Perl_isnan(t))
        croak("%s->%s: timeout is not a number", CLASS(ix), METHOD);
    return dqs_deadline((double)t);
}

/* Convert every value first (may run Perl code or die: then nothing has
 * been enqueued), into a buffer freed at scope exit. */
static int64_t *
int_values(pTHX_ SV **svs, SSize_t n)
{
    int64_t *buf;
    SSize_t i;
    Newx(buf, n > 0 ? n : 1, int64_t);
    SAVEFREEPV(buf);
    for (i = 0; i < n; i++)
        buf[i] = (int64_t)SvIV(svs[i]);
    return buf;
}

#define POP_CHUNK 256

/* A string to push: undef and plain references are refused (a queue item
 * is a string; undef is how pop says "empty"); overloaded objects are
 * stringified. Runs get-magic and overloading exactly once. */
static const char *
str_value(pTHX_ SV *sv, STRLEN *len, int *utf8, int ix, CV *cv)
{
    const char *p;
    SvGETMAGIC(sv);
    if (!SvOK(sv))
        croak("%s->%s: cannot push undef", CLASS(ix), METHOD);
    if (SvROK(sv) && !SvAMAGIC(sv))
        croak("%s->%s: cannot push a reference (%" SVf ")", CLASS(ix), METHOD, SVfARG(sv));
    p = SvPV_nomg(sv, *len);
    *utf8 = SvUTF8(sv) ? 1 : 0;
    return p;
}

/* Convert a list of values into one buffer owned by a mortal (freed even
 * when a later conversion dies), then describe them as DqsStrItems. All
 * Perl code (magic, overloading) has run before the queue is touched. */
static DqsStrItem *
str_values(pTHX_ SV **svs, SSize_t n, int ix, CV *cv)
{
    SV *buf = sv_2mortal(newSV(64));
    SV *meta = sv_2mortal(newSV(n > 0 ? n * sizeof(DqsStrItem) : 1));
    DqsStrItem *items = (DqsStrItem *)SvPVX(meta);
    SSize_t i;
    SvPOK_only(buf);
    SvCUR_set(buf, 0);
    for (i = 0; i < n; i++) {
        STRLEN len;
        int utf8;
        const char *p = str_value(aTHX_ svs[i], &len, &utf8, ix, cv);
        items[i].ptr = (const uint8_t *)(uintptr_t)SvCUR(buf); /* offset for now */
        items[i].len = len;
        items[i].utf8 = utf8;
        sv_catpvn_nomg(buf, p, len);
    }
    for (i = 0; i < n; i++)
        items[i].ptr = (const uint8_t *)SvPVX(buf) + (uintptr_t)items[i].ptr;
    return items;
}

static SV *
str_sv(pTHX_ SV *sv, const DqsStrItem *it)
{
    sv_setpvn(sv, (const char *)it->ptr, it->len);
    if (it->utf8)
        SvUTF8_on(sv);
    else
        SvUTF8_off(sv);
    return sv;
}

/* Pop up to `want` items in one call and push them as mortal strings onto
 * the Perl stack (the caller has done PUTBACK; this leaves SP updated). */
static void
str_pop_list(pTHX_ DqsQueue *q, size_t want, int has_budget, uint64_t budget)
{
    dSP;
    const DqsStrItem *its;
    size_t got, i;
    got = dqs_str_pop_multi(q, want, has_budget, budget, 1, &its);
    EXTEND(SP, (SSize_t)got);
    for (i = 0; i < got; i++)
        PUSHs(str_sv(aTHX_ sv_newmortal(), &its[i]));
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
    nv = SvNV_nomg(sv);
    if (Perl_isnan(nv) || nv < 0)
        croak("%s->%s: max_bytes must be a non-negative number", CLASS(ix), METHOD);
    *out = nv >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)nv;
    return 1;
}

MODULE = Data::Queue::Shared		PACKAGE = Data::Queue::Shared::Int

PROTOTYPES: DISABLE

BOOT:
{
    int i;
    for (i = 0; i < 4; i++)
        class_stashes[i] = gv_stashpv(class_names[i], GV_ADD);
}

void
new(class_sv, path_sv, cap_sv, mode_sv = NULL)
    SV *class_sv
    SV *path_sv
    SV *cap_sv
    SV *mode_sv
  ALIAS:
    Data::Queue::Shared::Int32::new = 1
    Data::Queue::Shared::Int16::new = 2
  PREINIT:
    DqsError err;
    DqsQueue *q;
    uint64_t cap;
    uint32_t mode = 0600;
    const char *path;
  PPCODE:
    cap = count_arg(aTHX_ cap_sv, ix, cv, "capacity", 0);
    if (mode_sv) {
        SvGETMAGIC(mode_sv);
        if (SvOK(mode_sv)) {
            IV m = SvIV_nomg(mode_sv);
            if (m < 0 || m > 07777)
                croak("%s->%s: mode %" IVdf " is not a file mode", CLASS(ix), METHOD, m);
            mode = (uint32_t)m;
        }
    }
    path = str_arg(aTHX_ path_sv, ix, cv, "path");
    q = path ? dqs_open_path(path, class_variants[ix], cap, 0, mode, &err)
             : dqs_open_anon(class_variants[ix], cap, 0, &err);
    if (!q)
        croak_err(aTHX_ ix, cv, &err);
    ST(0) = wrap_handle(aTHX_ class_sv, ix, q);
    XSRETURN(1);

void
new_memfd(class_sv, name_sv, cap_sv)
    SV *class_sv
    SV *name_sv
    SV *cap_sv
  ALIAS:
    Data::Queue::Shared::Int32::new_memfd = 1
    Data::Queue::Shared::Int16::new_memfd = 2
  PREINIT:
    DqsError err;
    DqsQueue *q;
    uint64_t cap;
    const char *name;
  PPCODE:
    cap = count_arg(aTHX_ cap_sv, ix, cv, "capacity", 0);
    if (!(name = str_arg(aTHX_ name_sv, ix, cv, "name")))
        name = "data-queue-shared";
    q = dqs_open_memfd(name, class_variants[ix], cap, 0, &err);
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
    v = SvIV(value);
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
    v = SvIV(value);
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
    int64_t *vals;
    size_t n = (size_t)(items - 1), done;
  PPCODE:
    vals = int_values(aTHX_ &ST(1), (SSize_t)n);
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
    int64_t *vals;
    size_t n = (size_t)(items - 2), done = 0;
    DqsDeadline dl;
    int rc;
  PPCODE:
    dl = deadline_arg(aTHX_ timeout, ix, cv);
    vals = int_values(aTHX_ &ST(2), (SSize_t)n);
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
    size_t got, i;
    DqsQueue *q;
  PPCODE:
    want = SvIV(count_sv);
    q = dqs_self(aTHX_ self, ix, cv);
    while (want > 0) {
        size_t chunk = want < POP_CHUNK ? (size_t)want : POP_CHUNK;
        got = dqs_int_pop_multi(q, buf, chunk);
        EXTEND(SP, (SSize_t)got);
        for (i = 0; i < got; i++)
            mPUSHi((IV)buf[i]);
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
    size_t got, i;
    DqsQueue *q;
  PPCODE:
    if (max_sv) {
        SvGETMAGIC(max_sv);
        if (SvOK(max_sv)) {
            IV m = SvIV_nomg(max_sv);
            want = m > 0 ? (UV)m : 0;
        }
    }
    q = dqs_self(aTHX_ self, ix, cv);
    while (want > 0) {
        size_t chunk = want < POP_CHUNK ? (size_t)want : POP_CHUNK;
        got = dqs_int_pop_multi(q, buf, chunk);
        EXTEND(SP, (SSize_t)got);
        for (i = 0; i < got; i++)
            mPUSHi((IV)buf[i]);
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
    size_t got, i;
    DqsDeadline dl;
    int rc;
    DqsQueue *q;
  PPCODE:
    want = SvIV(count_sv);
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
            EXTEND(SP, 1);
            mPUSHi((IV)buf[0]);
            want--;
            while (want > 0) {
                size_t chunk = want < POP_CHUNK ? (size_t)want : POP_CHUNK;
                got = dqs_int_pop_multi(q, buf, chunk);
                EXTEND(SP, (SSize_t)got);
                for (i = 0; i < got; i++)
                    mPUSHi((IV)buf[i]);
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
    Data::Queue::Shared::Str::size = 3
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
    Data::Queue::Shared::Str::capacity = 3
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
    Data::Queue::Shared::Str::is_empty = 3
  PPCODE:
    ST(0) = boolSV(dqs_size(q) == 0);
    XSRETURN(1);

void
is_full(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::is_full = 1
    Data::Queue::Shared::Int16::is_full = 2
    Data::Queue::Shared::Str::is_full = 3
  PPCODE:
    ST(0) = boolSV(dqs_size(q) >= dqs_capacity(q));
    XSRETURN(1);

void
clear(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::clear = 1
    Data::Queue::Shared::Int16::clear = 2
    Data::Queue::Shared::Str::clear = 3
  PPCODE:
    (void)dqs_clear(q);
    XSRETURN_EMPTY;

void
sync(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::sync = 1
    Data::Queue::Shared::Int16::sync = 2
    Data::Queue::Shared::Str::sync = 3
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
    Data::Queue::Shared::Str::memfd = 3
  PREINIT:
    dXSTARG;
  PPCODE:
    XSprePUSH;
    PUSHi((IV)dqs_memfd(q));
    XSRETURN(1);

void
path(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::path = 1
    Data::Queue::Shared::Int16::path = 2
    Data::Queue::Shared::Str::path = 3
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
    Data::Queue::Shared::Str::unlink = 3
  PREINIT:
    DqsError err;
    int rc;
  PPCODE:
    if (SvROK(self)) {
        rc = dqs_unlink(dqs_self(aTHX_ self, ix, cv), &err);
    } else {
        const char *path = path_sv ? str_arg(aTHX_ path_sv, ix, cv, "path") : NULL;
        if (!path)
            croak("%s->%s: a path is required", CLASS(ix), METHOD);
        rc = dqs_unlink_path(path, &err);
    }
    if (rc == 0)
        XSRETURN_YES;
    if (err.kind != DQS_E_IO)
        croak_err(aTHX_ ix, cv, &err);
    SETERRNO(err.os_errno, 0);
    XSRETURN_NO;

void
stats(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::stats = 1
    Data::Queue::Shared::Int16::stats = 2
    Data::Queue::Shared::Str::stats = 3
  PREINIT:
    DqsStats s;
    HV *hv;
  PPCODE:
    dqs_stats(q, &s);
    hv = newHV();
    hv_stores(hv, "size", newSVuv((UV)s.size));
    hv_stores(hv, "capacity", newSVuv((UV)s.capacity));
    hv_stores(hv, "mmap_size", newSVuv((UV)s.mmap_size));
    hv_stores(hv, "push_ok", newSVuv((UV)s.push_ok));
    hv_stores(hv, "pop_ok", newSVuv((UV)s.pop_ok));
    hv_stores(hv, "push_full", newSVuv((UV)s.push_full));
    hv_stores(hv, "pop_empty", newSVuv((UV)s.pop_empty));
    hv_stores(hv, "recoveries", newSVuv((UV)s.recoveries));
    hv_stores(hv, "push_waiters", newSVuv((UV)s.push_waiters));
    hv_stores(hv, "pop_waiters", newSVuv((UV)s.pop_waiters));
    if (dqs_variant(q) == DQS_STR) {
        hv_stores(hv, "arena_cap", newSVuv((UV)s.arena_cap));
        hv_stores(hv, "arena_used", newSVuv((UV)s.arena_used));
        hv_stores(hv, "lock_acquired", newSVuv((UV)s.lock_acquired));
        hv_stores(hv, "lock_contended", newSVuv((UV)s.lock_contended));
    }
    ST(0) = sv_2mortal(newRV_noinc((SV *)hv));
    XSRETURN(1);

void
DESTROY(self)
    SV *self
  ALIAS:
    Data::Queue::Shared::Int32::DESTROY = 1
    Data::Queue::Shared::Int16::DESTROY = 2
    Data::Queue::Shared::Str::DESTROY = 3
  PREINIT:
    SV *obj;
    IV iv;
  PPCODE:
    PERL_UNUSED_VAR(ix);
    /* Only our own objects (a blessed IV of one of our classes); this
     * unmaps the handle and never touches shared state. */
    if (SvROK(self)) {
        obj = SvRV(self);
        if (SvOBJECT(obj) && SvTYPE(obj) < SVt_PVAV && SvIOKp(obj) && (iv = SvIVX(obj)) != 0
            && is_our_object(aTHX_ self)) {
            SvREADONLY_off(obj);
            SvIV_set(obj, 0);
            SvREADONLY_on(obj);
            dqs_close(INT2PTR(DqsQueue *, iv));
        }
    }
    XSRETURN_EMPTY;

void
CLONE_SKIP(...)
  ALIAS:
    Data::Queue::Shared::Int32::CLONE_SKIP = 1
    Data::Queue::Shared::Int16::CLONE_SKIP = 2
    Data::Queue::Shared::Str::CLONE_SKIP = 3
  PPCODE:
    PERL_UNUSED_VAR(ix);
    PERL_UNUSED_VAR(items);
    XSRETURN_IV(1);

MODULE = Data::Queue::Shared		PACKAGE = Data::Queue::Shared::Str

void
new(class_sv, path_sv, cap_sv, arena_sv = NULL, mode_sv = NULL)
    SV *class_sv
    SV *path_sv
    SV *cap_sv
    SV *arena_sv
    SV *mode_sv
  PREINIT:
    const int ix = CLASS_STR;
    DqsError err;
    DqsQueue *q;
    uint64_t cap, arena = 0;
    uint32_t mode = 0600;
    const char *path;
  PPCODE:
    cap = count_arg(aTHX_ cap_sv, ix, cv, "capacity", 0);
    arena = count_arg(aTHX_ arena_sv, ix, cv, "arena size", 1);
    if (mode_sv) {
        SvGETMAGIC(mode_sv);
        if (SvOK(mode_sv)) {
            IV m = SvIV_nomg(mode_sv);
            if (m < 0 || m > 07777)
                croak("%s->%s: mode %" IVdf " is not a file mode", CLASS(ix), METHOD, m);
            mode = (uint32_t)m;
        }
    }
    path = str_arg(aTHX_ path_sv, ix, cv, "path");
    q = path ? dqs_open_path(path, DQS_STR, cap, arena, mode, &err)
             : dqs_open_anon(DQS_STR, cap, arena, &err);
    if (!q)
        croak_err(aTHX_ ix, cv, &err);
    ST(0) = wrap_handle(aTHX_ class_sv, ix, q);
    XSRETURN(1);

void
new_memfd(class_sv, name_sv, cap_sv, arena_sv = NULL)
    SV *class_sv
    SV *name_sv
    SV *cap_sv
    SV *arena_sv
  PREINIT:
    const int ix = CLASS_STR;
    DqsError err;
    DqsQueue *q;
    uint64_t cap, arena = 0;
    const char *name;
  PPCODE:
    cap = count_arg(aTHX_ cap_sv, ix, cv, "capacity", 0);
    arena = count_arg(aTHX_ arena_sv, ix, cv, "arena size", 1);
    if (!(name = str_arg(aTHX_ name_sv, ix, cv, "name")))
        name = "data-queue-shared";
    q = dqs_open_memfd(name, DQS_STR, cap, arena, &err);
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
    p = str_value(aTHX_ value, &len, &utf8, CLASS_STR, cv);
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
    p = str_value(aTHX_ value, &len, &utf8, CLASS_STR, cv);
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
  PPCODE:
    if (dqs_str_pop(dqs_self(aTHX_ self, CLASS_STR, cv), ix == 1, ix == 2, &it) != DQS_DONE)
        XSRETURN_UNDEF;
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
    int rc;
  PPCODE:
    dl = deadline_arg(aTHX_ timeout, CLASS_STR, cv);
    for (;;) {
        rc = dqs_str_pop_wait(dqs_self(aTHX_ self, CLASS_STR, cv), ix == 1, &dl, &it);
        if (rc != DQS_INTERRUPTED)
            break;
        PERL_ASYNC_CHECK();
    }
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
    DqsStrItem *vals;
    DqsError err;
    IV done;
  PPCODE:
    vals = str_values(aTHX_ &ST(1), items - 1, CLASS_STR, cv);
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
    DqsStrItem *vals;
    DqsError err;
    DqsDeadline dl;
    size_t n = (size_t)(items - 2), done = 0;
    IV got;
    int rc;
  PPCODE:
    dl = deadline_arg(aTHX_ timeout, CLASS_STR, cv);
    vals = str_values(aTHX_ &ST(2), items - 2, CLASS_STR, cv);
    while (done < n) {
        DqsQueue *q = dqs_self(aTHX_ self, CLASS_STR, cv);
        got = (IV)dqs_str_push_multi(q, vals + done, n - done, &err);
        if (got < 0)
            croak_err(aTHX_ CLASS_STR, cv, &err);
        done += (size_t)got;
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
    want = SvIV(count_sv);
    has_budget = budget_arg(aTHX_ max_sv, &budget, CLASS_STR, cv);
    PUTBACK;
    if (want > 0)
        str_pop_list(aTHX_ dqs_self(aTHX_ self, CLASS_STR, cv), (size_t)want, has_budget, budget);
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
            IV m = SvIV_nomg(max_sv);
            want = m > 0 ? (size_t)m : 0;
        }
    }
    PUTBACK;
    if (want > 0)
        str_pop_list(aTHX_ dqs_self(aTHX_ self, CLASS_STR, cv), want, 0, 0);
    return;

void
pop_wait_multi(self, count_sv, timeout = NULL, max_sv = NULL)
    SV *self
    SV *count_sv
    SV *timeout
    SV *max_sv
  PREINIT:
    const DqsStrItem *its;
    DqsStrItem first;
    size_t got, i;
    IV want;
    uint64_t budget = 0;
    int has_budget, rc;
    DqsDeadline dl;
    DqsQueue *q;
  PPCODE:
    want = SvIV(count_sv);
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
        if (rc == DQS_DONE) {
            uint64_t used = first.len;
            EXTEND(SP, 1);
            PUSHs(str_sv(aTHX_ sv_newmortal(), &first));
            want--;
            if (want > 0 && (!has_budget || used < budget)) {
                /* the first item was the one the budget always allows;
                 * the rest must fit in what is left of it */
                got = dqs_str_pop_multi(q, (size_t)want, has_budget, budget - used, 0, &its);
                EXTEND(SP, (SSize_t)got);
                for (i = 0; i < got; i++)
                    PUSHs(str_sv(aTHX_ sv_newmortal(), &its[i]));
            }
        }
    }
    PUTBACK;
    return;
