# The methods every class has, written once: each XSUB is
# Data::Queue::Shared::Int's, aliased into Int32, Int16 and Str, and `ix`
# (0, 1, 2, CLASS_STR) is the class, for the DqsQueue * typemap's check and
# for croak texts. Included into Queue-Shared.xs in a section of its own.

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
    ST(0) = boolSV(dqs_is_full(q));
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
eventfd(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::eventfd = 1
    Data::Queue::Shared::Int16::eventfd = 2
    Data::Queue::Shared::Str::eventfd = 3
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

# The descriptor set (returned), or a croak.
void
eventfd_set(self, fd_sv)
    SV *self
    SV *fd_sv
  ALIAS:
    Data::Queue::Shared::Int32::eventfd_set = 1
    Data::Queue::Shared::Int16::eventfd_set = 2
    Data::Queue::Shared::Str::eventfd_set = 3
  PREINIT:
    dXSTARG;
    DqsError err;
    IV fd;
  PPCODE:
    SvGETMAGIC(fd_sv);
    if (!SvOK(fd_sv) || !looks_like_number(fd_sv))
        croak("%s->%s: fd must be a file descriptor number", CLASS(ix), METHOD);
    fd = SvIV_nomg(fd_sv);
    /* -1 (what fileno returns without one) turns notification off */
    if (fd < -1 || fd > INT_MAX)
        croak("%s->%s: fd %" IVdf " is not a valid file descriptor", CLASS(ix), METHOD, fd);
    if (dqs_eventfd_set(dqs_self(aTHX_ self, ix, cv), (int)fd, &err) != 0)
        croak_err(aTHX_ ix, cv, &err);
    XSprePUSH;
    PUSHi(fd);
    XSRETURN(1);

void
fileno(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::fileno = 1
    Data::Queue::Shared::Int16::fileno = 2
    Data::Queue::Shared::Str::fileno = 3
  PREINIT:
    dXSTARG;
  PPCODE:
    XSprePUSH;
    PUSHi((IV)dqs_eventfd_fileno(q));
    XSRETURN(1);

# False without an eventfd, or when the write failed ($! says why, e.g.
# EBADF after the fd was closed from Perl): never a croak, so a producer
# cannot die on a watcher's mistake.
void
notify(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::notify = 1
    Data::Queue::Shared::Int16::notify = 2
    Data::Queue::Shared::Str::notify = 3
  PREINIT:
    DqsError err;
    int rc;
  PPCODE:
    rc = dqs_notify(q, &err);
    if (rc == DQS_ERROR)
        SETERRNO(err.os_errno, 0);
    ST(0) = boolSV(rc == DQS_DONE);
    XSRETURN(1);

# The count; undef when nothing is pending (as in the C implementation),
# without an eventfd, or when the read failed ($! set).
void
eventfd_consume(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::eventfd_consume = 1
    Data::Queue::Shared::Int16::eventfd_consume = 2
    Data::Queue::Shared::Str::eventfd_consume = 3
  PREINIT:
    dXSTARG;
    DqsError err;
    uint64_t count = 0;
    int rc;
  PPCODE:
    rc = dqs_eventfd_consume(q, &count, &err);
    if (rc != DQS_DONE || count == 0) {
        if (rc == DQS_ERROR)
            SETERRNO(err.os_errno, 0);
        XSRETURN_UNDEF;
    }
    XSprePUSH;
    PUSHu((UV)count);
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

# Of the object's file, or (class method) of `path_sv`. True when removed;
# false with $! set when the file system refused; a croak otherwise.
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

# A new hash reference.
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
        hv_stores(hv, "compressed", newSVuv((UV)s.compressed));
        hv_stores(hv, "compressed_saved", newSVuv((UV)s.compressed_saved));
    }
    ST(0) = sv_2mortal(newRV_noinc((SV *)hv));
    XSRETURN(1);

# Only our own objects (a blessed IV made by wrap_handle, of one of our
# classes or a subclass); this unmaps the handle and never touches shared
# state.
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
    MAGIC *mg;
  PPCODE:
    PERL_UNUSED_VAR(ix);
    if (SvROK(self)) {
        obj = SvRV(self);
        if (SvOBJECT(obj) && SvTYPE(obj) < SVt_PVAV && SvIOKp(obj) && (iv = SvIVX(obj)) != 0
            && SvSMAGICAL(obj) && (mg = mg_findext(obj, PERL_MAGIC_ext, &handle_vtbl)) != NULL
            && mg->mg_ptr == INT2PTR(char *, iv) && is_our_object(aTHX_ self)) {
            SvIV_set(obj, 0);
            mg->mg_ptr = NULL;
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

# ---- Leases (lease.h, src/lease/)

void
pop_lease_multi(self, count_sv, lease_timeout = NULL)
    SV *self
    SV *count_sv
    SV *lease_timeout
  ALIAS:
    Data::Queue::Shared::Int32::pop_lease_multi = 1
    Data::Queue::Shared::Int16::pop_lease_multi = 2
    Data::Queue::Shared::Str::pop_lease_multi = 3
  PPCODE:
    SP = pop_lease_multi_list(aTHX_ SP, self, count_sv, lease_timeout, ix, cv);
    PUTBACK;
    return;

void
lease_stats(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::lease_stats = 1
    Data::Queue::Shared::Int16::lease_stats = 2
    Data::Queue::Shared::Str::lease_stats = 3
  PPCODE:
    ST(0) = lease_stats_hv(aTHX_ q);
    XSRETURN(1);

void
leases(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::leases = 1
    Data::Queue::Shared::Int16::leases = 2
    Data::Queue::Shared::Str::leases = 3
  PPCODE:
    SP = push_leases(aTHX_ SP, q);
    PUTBACK;
    return;

# ack, release and nack: ix / 4 is the method (0 ack, 1 release, 2 nack),
# ix % 4 the class. release and nack take an optional delay.
void
ack(self, lease, delay_sv = NULL)
    SV *self
    SV *lease
    SV *delay_sv
  ALIAS:
    Data::Queue::Shared::Int32::ack = 1
    Data::Queue::Shared::Int16::ack = 2
    Data::Queue::Shared::Str::ack = 3
    Data::Queue::Shared::Int::release = 4
    Data::Queue::Shared::Int32::release = 5
    Data::Queue::Shared::Int16::release = 6
    Data::Queue::Shared::Str::release = 7
    Data::Queue::Shared::Int::nack = 8
    Data::Queue::Shared::Int32::nack = 9
    Data::Queue::Shared::Int16::nack = 10
    Data::Queue::Shared::Str::nack = 11
  PREINIT:
    DqsError err;
    DqsQueue *q;
    uint64_t id;
    double delay = 0;
    int rc;
    const int cls = ix % 4;
  PPCODE:
    if (delay_sv && ix < 4)
        croak("%s->%s: too many arguments (a delay is for release)", CLASS(cls), METHOD);
    id = lease_arg(aTHX_ lease, cls, cv);
    if (delay_sv)
        delay = delay_arg(aTHX_ delay_sv, cls, cv);
    q = dqs_self(aTHX_ self, cls, cv);
    rc = delay > 0 ? dqs_release_after(q, id, delay, &err) : dqs_end_lease(q, id, ix >= 4, &err);
    if (rc == DQS_ERROR)
        croak_err(aTHX_ cls, cv, &err);
    ST(0) = boolSV(rc == DQS_DONE);
    XSRETURN(1);

# bury (ix / 4 == 0) and touch (1): true while the lease was held.
void
bury(self, lease, timeout_sv = NULL)
    SV *self
    SV *lease
    SV *timeout_sv
  ALIAS:
    Data::Queue::Shared::Int32::bury = 1
    Data::Queue::Shared::Int16::bury = 2
    Data::Queue::Shared::Str::bury = 3
    Data::Queue::Shared::Int::touch = 4
    Data::Queue::Shared::Int32::touch = 5
    Data::Queue::Shared::Int16::touch = 6
    Data::Queue::Shared::Str::touch = 7
  PREINIT:
    DqsError err;
    DqsQueue *q;
    uint64_t id;
    double lt = -1.0;
    int rc;
    const int cls = ix % 4;
  PPCODE:
    if (timeout_sv && ix < 4)
        croak("%s->%s: too many arguments", CLASS(cls), METHOD);
    id = lease_arg(aTHX_ lease, cls, cv);
    if (ix >= 4)
        lt = touch_timeout_arg(aTHX_ timeout_sv, cls, cv);
    q = dqs_self(aTHX_ self, cls, cv);
    rc = ix < 4 ? dqs_bury(q, id, &err) : dqs_touch(q, id, lt, &err);
    if (rc == DQS_ERROR)
        croak_err(aTHX_ cls, cv, &err);
    ST(0) = boolSV(rc == DQS_DONE);
    XSRETURN(1);

# The delivery count of a held lease, undef once it has ended.
void
deliveries(self, lease)
    SV *self
    SV *lease
  ALIAS:
    Data::Queue::Shared::Int32::deliveries = 1
    Data::Queue::Shared::Int16::deliveries = 2
    Data::Queue::Shared::Str::deliveries = 3
  PREINIT:
    DqsError err;
    uint64_t id, n;
    int rc;
  PPCODE:
    id = lease_arg(aTHX_ lease, ix, cv);
    rc = dqs_deliveries(dqs_self(aTHX_ self, ix, cv), id, &n, &err);
    if (rc == DQS_ERROR)
        croak_err(aTHX_ ix, cv, &err);
    if (rc != DQS_DONE)
        XSRETURN_UNDEF;
    ST(0) = sv_2mortal(newSVuv((UV)n));
    XSRETURN(1);

# ---- The dead-letter area (lease.h)

void
dead_count(q)
    DqsQueue *q
  ALIAS:
    Data::Queue::Shared::Int32::dead_count = 1
    Data::Queue::Shared::Int16::dead_count = 2
    Data::Queue::Shared::Str::dead_count = 3
  PREINIT:
    dXSTARG;
  PPCODE:
    XSprePUSH;
    PUSHu((UV)dqs_dead_count(q));
    XSRETURN(1);

# dead_peek (ix / 4 == 0): the oldest as a hash ref or undef; dead_list
# (1): all, oldest first.
void
dead_peek(self)
    SV *self
  ALIAS:
    Data::Queue::Shared::Int32::dead_peek = 1
    Data::Queue::Shared::Int16::dead_peek = 2
    Data::Queue::Shared::Str::dead_peek = 3
    Data::Queue::Shared::Int::dead_list = 4
    Data::Queue::Shared::Int32::dead_list = 5
    Data::Queue::Shared::Int16::dead_list = 6
    Data::Queue::Shared::Str::dead_list = 7
  PREINIT:
    DqsQueue *q;
    const int cls = ix % 4;
  PPCODE:
    q = dqs_self(aTHX_ self, cls, cv);
    SP = push_dead(aTHX_ SP, q, ix < 4 ? 1 : UINT64_MAX, 0, cls, cv);
    if (ix < 4 && SP == PL_stack_base + ax - 1)
        XPUSHs(&PL_sv_undef);
    PUTBACK;
    return;

# Up to $n (default all) dead items out, as hash refs.
void
dead_drain(self, n_sv = NULL)
    SV *self
    SV *n_sv
  ALIAS:
    Data::Queue::Shared::Int32::dead_drain = 1
    Data::Queue::Shared::Int16::dead_drain = 2
    Data::Queue::Shared::Str::dead_drain = 3
  PREINIT:
    uint64_t n;
  PPCODE:
    n = dead_count_arg(aTHX_ n_sv, ix, cv);
    SP = push_dead(aTHX_ SP, dqs_self(aTHX_ self, ix, cv), n, 1, ix, cv);
    PUTBACK;
    return;

# Up to $n (default all) dead items back to the live queue's front; how
# many moved.
void
kick(self, n_sv = NULL)
    SV *self
    SV *n_sv
  ALIAS:
    Data::Queue::Shared::Int32::kick = 1
    Data::Queue::Shared::Int16::kick = 2
    Data::Queue::Shared::Str::kick = 3
  PREINIT:
    DqsError err;
    uint64_t n, moved = 0;
  PPCODE:
    n = dead_count_arg(aTHX_ n_sv, ix, cv);
    if (dqs_kick(dqs_self(aTHX_ self, ix, cv), n, &moved, &err) == DQS_ERROR)
        croak_err(aTHX_ ix, cv, &err);
    ST(0) = sv_2mortal(newSVuv((UV)moved));
    XSRETURN(1);
