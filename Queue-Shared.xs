/*
 * Perl glue for the data_queue_shared Rust core (include/data_queue_shared.h).
 *
 * Thin by design: convert arguments (running all get-magic, overloading and
 * ties first), fetch the handle, make one C ABI call, build the result. No
 * queue algorithm lives here. This file is the table of contents; the code
 * is in xs/:
 *
 *   glue.h       the classes, the handle behind an object, croaks, and the
 *                conversions of Perl values into C ABI arguments and back
 *   ops.h        the one-value operations on the Perl stack (push, pop,
 *                peek, size) shared by the keyword ops and the short cut
 *   fastcall.h   the method short cut: $q->push(...) of our exact classes
 *                without Perl's method dispatch
 *   lease.h      the glue of leased pops
 *   keywords.h   the keyword API (q_int_push ...), on XS::Parse::Keyword
 *   int.xsh      the XSUBs of the integer classes (Int, aliased into Int32
 *                and Int16)
 *   str.xsh      the XSUBs of Str
 *   common.xsh   the methods every class has, written once (aliased into
 *                the four classes)
 *   testing.xsh  counters for the tests
 *
 * In int.xsh and common.xsh the alias index `ix` selects the class: 0-2
 * Int, Int32, Int16 (ix % 3 where an XSUB has two methods per class), and
 * CLASS_STR for Str; str.xsh names CLASS_STR itself.
 */
#include "xs/glue.h"
#include "xs/ops.h"
#include "xs/fastcall.h"
#include "xs/lease.h"
#include "xs/keywords.h"

/* The class the DqsQueue * typemap checks for: every XSUB taking one is
 * aliased over the classes it serves, `ix` being the class. */
#define SECTION_CLASS ix

MODULE = Data::Queue::Shared		PACKAGE = Data::Queue::Shared::Int

PROTOTYPES: DISABLE

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

INCLUDE: xs/int.xsh

MODULE = Data::Queue::Shared		PACKAGE = Data::Queue::Shared::Str

INCLUDE: xs/str.xsh

MODULE = Data::Queue::Shared		PACKAGE = Data::Queue::Shared::Int

INCLUDE: xs/common.xsh

MODULE = Data::Queue::Shared		PACKAGE = Data::Queue::Shared

INCLUDE: xs/testing.xsh
