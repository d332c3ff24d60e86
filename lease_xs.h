/*
 * lease_xs.h: the Perl glue of leased pops (pop_lease, ack, release,
 * lease_stats, leases and the constructors' { max_leases, lease_bytes }
 * option hash), included by Queue-Shared.xs. The xsubs themselves are at
 * the end of the Int and Str sections there; these are their helpers.
 */

/* Create options from a trailing hash ref: -1 means the default. */
typedef struct {
    int64_t max_leases;
    int64_t lease_bytes;
} lease_opts_t;

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
    lease_opts_t o = { -1, -1 };
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
        else
            croak("%s->%s: unknown option '%s' (known: max_leases, lease_bytes)", CLASS(ix),
                  METHOD, k);
    }
    return o;
}

/* A lease timeout in seconds: absent or undef is none (-1). */
static double
lease_timeout_arg(pTHX_ SV *sv, int ix, CV *cv)
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
    if (nv != nv || nv < 0)
        croak("%s->%s: lease timeout %" NVgf " is not a number of seconds >= 0", CLASS(ix), METHOD,
              nv);
    return (double)nv;
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
    return sv_2mortal(newRV_noinc((SV *)hv));
}

static const char *const lease_state_names[] = { "free", "taking", "held", "returned",
                                                 "returning" };

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
                  newSVpv(v[i].state < 5 ? lease_state_names[v[i].state] : "corrupt", 0));
        hv_stores(hv, "pid", newSVuv((UV)v[i].pid));
        hv_stores(hv, "seq", newSVuv((UV)v[i].seq));
        hv_stores(hv, "age", newSVnv((NV)v[i].age_ns / 1e9));
        if (v[i].left_ns)
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
 * once), pushing up to count [value, lease] pairs; stops early when the
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
    uint64_t lease;
    IV n, i;
    int rc;
    n = pop_count_arg(aTHX_ count_sv, ix, cv);
    lt = lease_timeout_arg(aTHX_ lease_timeout, ix, cv);
    q = dqs_self(aTHX_ self, ix, cv);
    for (i = 0; i < n; i++) {
        AV *pair;
        if (ix == CLASS_STR)
            rc = dqs_str_pop_lease(q, lt, &it, &lease, &err);
        else
            rc = dqs_int_pop_lease(q, lt, &v, &lease, &err);
        if (rc == DQS_ERROR && i == 0)
            croak_err(aTHX_ ix, cv, &err);
        if (rc != DQS_DONE)
            break;
        pair = newAV();
        av_extend(pair, 1);
        av_push(pair, ix == CLASS_STR ? str_sv(aTHX_ newSV(0), &it) : newSViv((IV)v));
        av_push(pair, newSVuv((UV)lease));
        XPUSHs(sv_2mortal(newRV_noinc((SV *)pair)));
    }
    return sp;
}
