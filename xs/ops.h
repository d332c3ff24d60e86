#ifndef DQS_XS_OPS_H
#define DQS_XS_OPS_H

#include "glue.h"

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

#endif /* DQS_XS_OPS_H */
