# The integer classes: Data::Queue::Shared::Int, aliased into Int32 and
# Int16 with `ix` (0, 1, 2) selecting the class. Included into the Int
# section of Queue-Shared.xs; the methods every class has are in common.xsh.

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
    create_opts_set(&lo);
    q = path ? dqs_open_path(path, class_variants[ix], cap, 0, mode, &err)
             : dqs_open_anon(class_variants[ix], cap, 0, &err);
    create_opts_reset();
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
    create_opts_set(&lo);
    q = dqs_open_memfd(name, class_variants[ix], cap, 0, &err);
    create_opts_reset();
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
     * and a producer as fast as this loop cannot grow the list forever.
     * The items back from leases wait beside the slots, so a full ring
     * with some of them holds more than the capacity: the lap is the size
     * at the call when that is larger. */
    {
        UV lap = dqs_capacity(q);
        UV now = dqs_size(q);
        if (now > lap)
            lap = now;
        if (want > lap)
            want = lap;
    }
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

# ---- Leases (lease.h, src/lease/): pop_lease, pop_lease_wait and
# push_delayed of the integer classes; the other lease methods are in
# common.xsh.

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
    uint64_t lease, deliveries;
    int rc;
  PPCODE:
    lt = lease_timeout_arg(aTHX_ lease_timeout, ix, cv);
    rc = dqs_int_pop_lease(dqs_self(aTHX_ self, ix, cv), lt, &v, &lease, &deliveries, &err);
    if (rc == DQS_ERROR)
        croak_err(aTHX_ ix, cv, &err);
    if (rc != DQS_DONE)
        XSRETURN_EMPTY;
    EXTEND(SP, 3);
    mPUSHi((IV)v);
    mPUSHu((UV)lease);
    mPUSHu((UV)deliveries);
    XSRETURN(3);

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
    uint64_t lease, deliveries;
    int rc;
  PPCODE:
    dl = deadline_arg(aTHX_ timeout, ix, cv);
    lt = lease_timeout_arg(aTHX_ lease_timeout, ix, cv);
    for (;;) {
        rc = dqs_int_pop_lease_wait(dqs_self(aTHX_ self, ix, cv), &dl, lt, &v, &lease, &deliveries, &err);
        if (rc != DQS_INTERRUPTED)
            break;
        PERL_ASYNC_CHECK();
    }
    if (rc == DQS_ERROR)
        croak_err(aTHX_ ix, cv, &err);
    if (rc != DQS_DONE)
        XSRETURN_EMPTY;
    EXTEND(SP, 3);
    mPUSHi((IV)v);
    mPUSHu((UV)lease);
    mPUSHu((UV)deliveries);
    XSRETURN(3);

void
push_delayed(self, delay_sv, value)
    SV *self
    SV *delay_sv
    SV *value
  ALIAS:
    Data::Queue::Shared::Int32::push_delayed = 1
    Data::Queue::Shared::Int16::push_delayed = 2
  PREINIT:
    DqsError err;
    double delay;
    IV v;
  PPCODE:
    delay = delay_arg(aTHX_ delay_sv, ix, cv);
    v = int_value(aTHX_ value, ix, cv, NULL);
    if (dqs_int_push_delayed(dqs_self(aTHX_ self, ix, cv), delay, (int64_t)v, &err) != DQS_DONE)
        croak_err(aTHX_ ix, cv, &err);
    XSRETURN_YES;
