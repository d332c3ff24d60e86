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
