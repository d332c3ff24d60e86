/*
 * The Perl glue of leased pops: the constructors' { max_leases, lease_bytes }
 * option hash, the lease timeout and lease id arguments, and the results
 * of lease_stats, leases and pop_lease_multi. The XSUBs are in int.xsh,
 * str.xsh (pop_lease, pop_lease_wait, ack, release, nack) and common.xsh.
 */
#ifndef DQS_XS_LEASE_H
#define DQS_XS_LEASE_H

#include "glue.h"

/* Create options from a trailing hash ref: -1 means the default. */
typedef struct {
    int64_t max_leases;
    int64_t lease_bytes;
    int64_t max_deliveries;
    int64_t max_dead;
} lease_opts_t;

/* Set the core's create options of this thread from `o` right before an
 * open call, and back to the defaults right after it. */
static void
create_opts_set(const lease_opts_t *o)
{
    dqs_set_create_leases(o->max_leases, o->lease_bytes);
    dqs_set_create_work(o->max_deliveries, o->max_dead);
}

static void
create_opts_reset(void)
{
    dqs_set_create_leases(-1, -1);
    dqs_set_create_work(-1, -1);
}

/* Whether `sv` (a constructor's last argument) is an option hash: an
 * unblessed hash reference. */
static int
is_opts(pTHX_ SV *sv)
{
    return sv && SvROK(sv) && SvTYPE(SvRV(sv)) == SVt_PVHV && !SvOBJECT(SvRV(sv));
}

static int64_t
opt_count(pTHX_ SV *v, const char *key, int ix, CV *cv)
{
    NV nv;
    SvGETMAGIC(v);
    if (!SvOK(v) || !NUMERIC_ARG(v))
        croak("%s->%s: option %s '%" SVf "' is not a count", CLASS(ix), METHOD, key, SVfARG(v));
    nv = SvNV_nomg(v);
    if (nv != nv || nv < 0 || nv > 9.0e15 || nv != (NV)(int64_t)nv)
        croak("%s->%s: option %s %" NVgf " is not a count", CLASS(ix), METHOD, key, nv);
    return (int64_t)nv;
}

/* Parse the option hash `sv` (NULL: none). Croaks on unknown keys and bad
 * values; nothing is set in the core until the caller applies the result
 * right around its open call. */
static lease_opts_t
lease_opts(pTHX_ SV *sv, int ix, CV *cv)
{
    lease_opts_t o = { -1, -1, -1, -1 };
    HV *hv;
    HE *he;
    if (!sv)
        return o;
    if (!is_opts(aTHX_ sv))
        croak("%s->%s: options must be a hash reference", CLASS(ix), METHOD);
    hv = (HV *)SvRV(sv);
    hv_iterinit(hv);
    while ((he = hv_iternext(hv))) {
        STRLEN kl;
        const char *k = HePV(he, kl);
        SV *v = HeVAL(he);
        if (kl == 10 && memEQ(k, "max_leases", 10))
            o.max_leases = opt_count(aTHX_ v, "max_leases", ix, cv);
        else if (kl == 11 && memEQ(k, "lease_bytes", 11)) {
            if (ix != CLASS_STR)
                croak("%s->%s: option lease_bytes applies to Str queues only", CLASS(ix), METHOD);
            o.lease_bytes = opt_count(aTHX_ v, "lease_bytes", ix, cv);
        }
        else if (kl == 14 && memEQ(k, "max_deliveries", 14)) {
            o.max_deliveries = opt_count(aTHX_ v, "max_deliveries", ix, cv);
            if (o.max_deliveries > 4294967295LL)
                croak("%s->%s: option max_deliveries %" IVdf " is out of range (0 .. 4294967295)",
                      CLASS(ix), METHOD, (IV)o.max_deliveries);
        }
        else if (kl == 8 && memEQ(k, "max_dead", 8)) {
            o.max_dead = opt_count(aTHX_ v, "max_dead", ix, cv);
            if (o.max_dead > 65536)
                croak("%s->%s: option max_dead %" IVdf " is out of range (0 .. 65536)", CLASS(ix),
                      METHOD, (IV)o.max_dead);
        }
        else
            croak("%s->%s: unknown option '%s' (known: max_leases, lease_bytes, max_deliveries, "
                  "max_dead)",
                  CLASS(ix), METHOD, k);
    }
    return o;
}

/* A lease timeout in seconds: absent or undef is -1 (pop_lease: none;
 * touch: the lease's own length); else a number >= 0 and at most `max`
 * (pop_lease: any, infinity included; touch: finite). */
static double
lease_timeout_upto(pTHX_ SV *sv, int ix, CV *cv, NV max)
{
    NV nv;
    if (!sv)
        return -1.0;
    SvGETMAGIC(sv);
    if (!SvOK(sv))
        return -1.0;
    if (!NUMERIC_ARG(sv))
        croak("%s->%s: lease timeout '%" SVf "' is not a number", CLASS(ix), METHOD, SVfARG(sv));
    nv = SvNV_nomg(sv);
    if (nv != nv || nv < 0 || nv > max)
        croak("%s->%s: lease timeout %" NVgf " is not a number of seconds >= 0", CLASS(ix), METHOD,
              nv);
    return (double)nv;
}

/* pop_lease's lease timeout: absent or undef is none (-1). */
static double
lease_timeout_arg(pTHX_ SV *sv, int ix, CV *cv)
{
    return lease_timeout_upto(aTHX_ sv, ix, cv, NV_INF);
}

/* A delay in seconds (release, push_delayed): a finite number >= 0. */
static double
delay_arg(pTHX_ SV *sv, int ix, CV *cv)
{
    NV nv;
    SvGETMAGIC(sv);
    if (!SvOK(sv))
        croak("%s->%s: delay is undef (a number of seconds >= 0)", CLASS(ix), METHOD);
    if (!NUMERIC_ARG(sv))
        croak("%s->%s: delay '%" SVf "' is not a number", CLASS(ix), METHOD, SVfARG(sv));
    nv = SvNV_nomg(sv);
    if (nv != nv || nv < 0 || nv > 1e15)
        croak("%s->%s: delay %" NVgf " is not a number of seconds >= 0", CLASS(ix), METHOD, nv);
    return (double)nv;
}

/* touch's new lease length: absent or undef keeps the lease's own (-1);
 * else a finite number >= 0. */
static double
touch_timeout_arg(pTHX_ SV *sv, int ix, CV *cv)
{
    return lease_timeout_upto(aTHX_ sv, ix, cv, 1e15);
}

/* How many items kick and dead_drain move: absent or undef is all; else
 * an integer >= 0 (more than there are is clamped by the core). */
static uint64_t
dead_count_arg(pTHX_ SV *sv, int ix, CV *cv)
{
    NV nv;
    if (!sv)
        return UINT64_MAX;
    SvGETMAGIC(sv);
    if (!SvOK(sv))
        return UINT64_MAX;
    if (SvIOK(sv) && !SvROK(sv)) {
        if (SvIsUV(sv))
            return (uint64_t)SvUVX(sv);
        if (SvIVX(sv) >= 0)
            return (uint64_t)SvIVX(sv);
    }
    else if (NUMERIC_ARG(sv)) {
        nv = SvNV_nomg(sv);
        /* big integral values (1e30) mean "all"; NaN, Inf, fractions croak */
        if (nv >= 0 && nv < 18446744073709551616.0 && nv == (NV)(uint64_t)nv)
            return (uint64_t)nv;
        if (nv >= 18446744073709551616.0 && nv < NV_MAX && nv == Perl_floor(nv))
            return UINT64_MAX;
    }
    croak("%s->%s: count '%" SVf "' is not an integer >= 0", CLASS(ix), METHOD, SVfARG(sv));
}

/* A lease id as pop_lease returned it. */
static uint64_t
lease_arg(pTHX_ SV *sv, int ix, CV *cv)
{
    SvGETMAGIC(sv);
    if (!SvOK(sv))
        croak("%s->%s: lease is undef (pop_lease returned no item?)", CLASS(ix), METHOD);
    if (SvIOK(sv) && (SvIsUV(sv) || SvIVX(sv) >= 0))
        return (uint64_t)SvUVX(sv);
    if (looks_like_number(sv) && !SvROK(sv)) {
        NV nv = SvNV_nomg(sv);
        if (nv >= 0 && nv < 18446744073709551616.0 && nv == (NV)(UV)nv)
            return (uint64_t)SvUV_nomg(sv);
    }
    croak("%s->%s: '%" SVf "' is not a lease", CLASS(ix), METHOD, SVfARG(sv));
}

static SV *
lease_stats_hv(pTHX_ DqsQueue *q)
{
    DqsLeaseStats s;
    HV *hv = newHV();
    dqs_lease_stats(q, &s);
    hv_stores(hv, "max_leases", newSVuv((UV)s.max_leases));
    hv_stores(hv, "open", newSVuv((UV)s.open));
    hv_stores(hv, "waiting", newSVuv((UV)s.waiting));
    hv_stores(hv, "acked", newSVuv((UV)s.acked));
    hv_stores(hv, "released", newSVuv((UV)s.released));
    hv_stores(hv, "returned_dead", newSVuv((UV)s.returned_dead));
    hv_stores(hv, "returned_timeout", newSVuv((UV)s.returned_timeout));
    if (dqs_variant(q) == DQS_STR)
        hv_stores(hv, "lease_bytes", newSVuv((UV)s.lease_bytes));
    hv_stores(hv, "max_deliveries", newSVuv((UV)s.max_deliveries));
    hv_stores(hv, "max_dead", newSVuv((UV)s.max_dead));
    hv_stores(hv, "delivered", newSVuv((UV)s.delivered));
    hv_stores(hv, "dead", newSVuv((UV)s.dead));
    hv_stores(hv, "buried", newSVuv((UV)s.buried));
    hv_stores(hv, "kicked", newSVuv((UV)s.kicked));
    hv_stores(hv, "drained", newSVuv((UV)s.drained));
    hv_stores(hv, "delayed", newSVuv((UV)s.delayed));
    hv_stores(hv, "touched", newSVuv((UV)s.touched));
    hv_stores(hv, "dead_full", newSVuv((UV)s.dead_full));
    hv_stores(hv, "dead_items", newSVuv((UV)s.dead_items));
    return sv_2mortal(newRV_noinc((SV *)hv));
}

static const char *const lease_state_names[] = { "free",      "taking", "held", "returned",
                                                 "returning", "delayed" };
#define N_LEASE_STATES 6

/* Push one hash ref per open or waiting lease. */
static SV **
push_leases(pTHX_ SV **sp, DqsQueue *q)
{
    DqsLeaseInfo buf[64], *v = buf;
    size_t n = dqs_leases(q, buf, 64), i;
    if (n > 64) {
        Newx(v, n, DqsLeaseInfo);
        SAVEFREEPV(v);
        n = dqs_leases(q, v, n);
    }
    EXTEND(sp, (SSize_t)n);
    for (i = 0; i < n; i++) {
        HV *hv = newHV();
        hv_stores(hv, "lease", newSVuv((UV)v[i].id));
        hv_stores(hv, "state",
                  newSVpv(v[i].state < N_LEASE_STATES ? lease_state_names[v[i].state] : "corrupt", 0));
        hv_stores(hv, "pid", newSVuv((UV)v[i].pid));
        hv_stores(hv, "seq", newSVuv((UV)v[i].seq));
        hv_stores(hv, "age", newSVnv((NV)v[i].age_ns / 1e9));
        hv_stores(hv, "deliveries", newSVuv((UV)v[i].deliveries));
        if (v[i].state == 5)
            hv_stores(hv, "due", newSVnv((NV)v[i].left_ns / 1e9));
        else if (v[i].left_ns)
            hv_stores(hv, "left", newSVnv((NV)v[i].left_ns / 1e9));
        if (dqs_variant(q) == DQS_STR) {
            hv_stores(hv, "length", newSViv((IV)v[i].value));
            hv_stores(hv, "stored", newSVuv((UV)v[i].stored));
        }
        else
            hv_stores(hv, "value", newSViv((IV)v[i].value));
        PUSHs(sv_2mortal(newRV_noinc((SV *)hv)));
    }
    return sp;
}

/* pop_lease_multi: one lease call per item (each takes the lease lock
 * once), pushing up to count [value, lease, deliveries] triples; stops early when the
 * queue is empty or every lease is taken (croaks only if that leaves
 * none). `ix` is the class (CLASS_STR for Str). */
static SV **
pop_lease_multi_list(pTHX_ SV **sp, SV *self, SV *count_sv, SV *lease_timeout, int ix, CV *cv)
{
    DqsError err;
    DqsQueue *q;
    DqsStrItem it;
    double lt;
    int64_t v;
    uint64_t lease, dl;
    IV n, i;
    int rc;
    n = pop_count_arg(aTHX_ count_sv, ix, cv);
    lt = lease_timeout_arg(aTHX_ lease_timeout, ix, cv);
    q = dqs_self(aTHX_ self, ix, cv);
    for (i = 0; i < n; i++) {
        AV *pair;
        if (ix == CLASS_STR)
            rc = dqs_str_pop_lease(q, lt, &it, &lease, &dl, &err);
        else
            rc = dqs_int_pop_lease(q, lt, &v, &lease, &dl, &err);
        if (rc == DQS_ERROR && i == 0)
            croak_err(aTHX_ ix, cv, &err);
        if (rc != DQS_DONE)
            break;
        pair = newAV();
        av_extend(pair, 2);
        av_push(pair, ix == CLASS_STR ? str_sv(aTHX_ newSV(0), &it) : newSViv((IV)v));
        av_push(pair, newSVuv((UV)lease));
        av_push(pair, newSVuv((UV)dl));
        XPUSHs(sv_2mortal(newRV_noinc((SV *)pair)));
    }
    return sp;
}

static const char *const dead_reason_names[] = { "unknown", "released", "deadline", "holder died",
                                                "buried" };

/* A dead item as a hash ref: value (Str: the string, plus length and
 * stored), deliveries, reason, when (epoch seconds), seq. */
static SV *
dead_hv(pTHX_ const DqsDeadInfo *d, const DqsStrItem *it)
{
    HV *hv = newHV();
    if (it) {
        hv_stores(hv, "value", str_sv(aTHX_ newSV(0), it));
        hv_stores(hv, "length", newSViv((IV)d->value));
        hv_stores(hv, "stored", newSVuv((UV)d->stored));
    }
    else
        hv_stores(hv, "value", newSViv((IV)d->value));
    hv_stores(hv, "deliveries", newSVuv((UV)d->deliveries));
    hv_stores(hv, "reason",
              newSVpv(d->reason >= 1 && d->reason <= 4 ? dead_reason_names[d->reason] : "unknown",
                      0));
    hv_stores(hv, "when", newSVnv((NV)d->when_ns / 1e9));
    hv_stores(hv, "seq", newSVuv((UV)d->seq));
    return sv_2mortal(newRV_noinc((SV *)hv));
}

/* The dead items, oldest first: `take` 0 lists up to n (dead_peek: 1,
 * dead_list: all), 1 removes up to n (dead_drain). */
static SV **
push_dead(pTHX_ SV **sp, DqsQueue *q, uint64_t n, int take, int ix, CV *cv)
{
    DqsDeadInfo d;
    DqsStrItem it;
    DqsError err;
    uint64_t k;
    const int str = dqs_variant(q) == DQS_STR;
    for (k = 0; k < n; k++) {
        int rc = take ? dqs_dead_take(q, &d, str ? &it : NULL, &err)
                      : dqs_dead_nth(q, k, &d, str ? &it : NULL, &err);
        if (rc == DQS_ERROR)
            croak_err(aTHX_ ix, cv, &err);
        if (rc != DQS_DONE)
            break;
        XPUSHs(dead_hv(aTHX_ &d, str ? &it : NULL));
    }
    return sp;
}

#endif /* DQS_XS_LEASE_H */
