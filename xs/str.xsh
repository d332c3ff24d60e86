# Data::Queue::Shared::Str: the byte-string deque. Included into the Str
# section of Queue-Shared.xs; the methods every class has are in
# common.xsh. The class is the constant CLASS_STR here.

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
    create_opts_set(&lo);
    q = path ? dqs_open_path(path, DQS_STR, cap, arena, mode, &err)
             : dqs_open_anon(DQS_STR, cap, arena, &err);
    create_opts_reset();
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
    create_opts_set(&lo);
    q = dqs_open_memfd(name, DQS_STR, cap, arena, &err);
    create_opts_reset();
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

# ---- Leases (lease.h, src/lease/): pop_lease, pop_lease_wait and
# push_delayed of Str; the other lease methods are in common.xsh.

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
    uint64_t lease, deliveries;
    int rc;
  PPCODE:
    if (items > 2 + ix)
        croak("%s->%s: too many arguments", CLASS(cls), METHOD);
    if (ix == 0) {
        lt = lease_timeout_arg(aTHX_ items > 1 ? ST(1) : NULL, cls, cv);
        rc = dqs_str_pop_lease(dqs_self(aTHX_ self, cls, cv), lt, &it, &lease, &deliveries, &err);
    }
    else {
        /* pop_lease_wait($timeout, $lease_timeout) */
        dl = deadline_arg(aTHX_ items > 1 ? ST(1) : NULL, cls, cv);
        lt = lease_timeout_arg(aTHX_ items > 2 ? ST(2) : NULL, cls, cv);
        for (;;) {
            rc = dqs_str_pop_lease_wait(dqs_self(aTHX_ self, cls, cv), &dl, lt, &it, &lease, &deliveries, &err);
            if (rc != DQS_INTERRUPTED)
                break;
            PERL_ASYNC_CHECK();
        }
    }
    if (rc == DQS_ERROR)
        croak_err(aTHX_ cls, cv, &err);
    if (rc != DQS_DONE)
        XSRETURN_EMPTY;
    EXTEND(SP, 3);
    PUSHs(str_sv(aTHX_ sv_newmortal(), &it));
    mPUSHu((UV)lease);
    mPUSHu((UV)deliveries);
    XSRETURN(3);

void
push_delayed(self, delay_sv, value)
    SV *self
    SV *delay_sv
    SV *value
  PREINIT:
    DqsError err;
    double delay;
    STRLEN len;
    int utf8;
    const char *p;
  PPCODE:
    /* The delay first: its magic could change the value's buffer. */
    delay = delay_arg(aTHX_ delay_sv, CLASS_STR, cv);
    p = str_value(aTHX_ value, &len, &utf8, CLASS_STR, cv, NULL);
    if (dqs_str_push_delayed(dqs_self(aTHX_ self, CLASS_STR, cv), delay, (const uint8_t *)p, len,
                             utf8, &err)
        != DQS_DONE)
        croak_err(aTHX_ CLASS_STR, cv, &err);
    XSRETURN_YES;
