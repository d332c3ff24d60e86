/*
 * The methods every class has (included by Queue-Shared.xs): the bodies
 * that are more than a line, shared by the XSUBs each class's section
 * declares for itself. `ix` is the class (CLASS_STR for Str), for croak
 * texts; `cv` the XSUB, whose name croaks give as the method.
 */

/* eventfd_set: the descriptor set (returned), or a croak. */
static IV
m_eventfd_set(pTHX_ SV *self, SV *fd_sv, int ix, CV *cv)
{
    DqsError err;
    IV fd;
    SvGETMAGIC(fd_sv);
    if (!SvOK(fd_sv) || !looks_like_number(fd_sv))
        croak("%s->%s: fd must be a file descriptor number", CLASS(ix), METHOD);
    fd = SvIV_nomg(fd_sv);
    /* -1 (what fileno returns without one) turns notification off */
    if (fd < -1 || fd > INT_MAX)
        croak("%s->%s: fd %" IVdf " is not a valid file descriptor", CLASS(ix), METHOD, fd);
    if (dqs_eventfd_set(dqs_self(aTHX_ self, ix, cv), (int)fd, &err) != 0)
        croak_err(aTHX_ ix, cv, &err);
    return fd;
}

/* notify: false without an eventfd, or when the write failed ($! says why,
 * e.g. EBADF after the fd was closed from Perl): never a croak, so a
 * producer cannot die on a watcher's mistake. */
static SV *
m_notify(pTHX_ DqsQueue *q)
{
    DqsError err;
    int rc = dqs_notify(q, &err);
    if (rc == DQS_ERROR)
        SETERRNO(err.os_errno, 0);
    return boolSV(rc == DQS_DONE);
}

/* eventfd_consume: the count (into *count, returning 1); 0 when nothing is
 * pending (undef, as in the C implementation), without an eventfd, or when
 * the read failed ($! set). */
static int
m_eventfd_consume(pTHX_ DqsQueue *q, uint64_t *count)
{
    DqsError err;
    int rc;
    *count = 0;
    rc = dqs_eventfd_consume(q, count, &err);
    if (rc != DQS_DONE || *count == 0) {
        if (rc == DQS_ERROR)
            SETERRNO(err.os_errno, 0);
        return 0;
    }
    return 1;
}

/* unlink: of the object's file, or (class method) of `path_sv`. True when
 * removed; false with $! set when the file system refused; a croak
 * otherwise. */
static SV *
m_unlink(pTHX_ SV *self, SV *path_sv, int ix, CV *cv)
{
    DqsError err;
    int rc;
    if (SvROK(self)) {
        rc = dqs_unlink(dqs_self(aTHX_ self, ix, cv), &err);
    } else {
        const char *path = path_sv ? str_arg(aTHX_ path_sv, ix, cv, "path") : NULL;
        if (!path)
            croak("%s->%s: a path is required", CLASS(ix), METHOD);
        rc = dqs_unlink_path(path, &err);
    }
    if (rc == 0)
        return &PL_sv_yes;
    if (err.kind != DQS_E_IO)
        croak_err(aTHX_ ix, cv, &err);
    SETERRNO(err.os_errno, 0);
    return &PL_sv_no;
}

/* stats: a new hash reference (mortal). */
static SV *
m_stats(pTHX_ DqsQueue *q)
{
    DqsStats s;
    HV *hv;
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
    return sv_2mortal(newRV_noinc((SV *)hv));
}

/* DESTROY: only our own objects (a blessed IV made by wrap_handle, of one
 * of our classes or a subclass); this unmaps the handle and never touches
 * shared state. */
static void
m_destroy(pTHX_ SV *self)
{
    SV *obj;
    IV iv;
    MAGIC *mg;
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
}
