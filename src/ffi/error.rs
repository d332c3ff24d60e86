//! How a failed call describes its failure: [`DqsError`] and its kinds.

use std::ffi::{c_char, c_int};

use super::{DQS_DONE, DQS_ERROR, DQS_NONE};
use crate::error::Error;

/// Error kind (in `DqsError.kind`): an argument out of range or
/// malformed.
pub const DQS_E_ARG: c_int = 1;
/// An OS call failed (`DqsError.os_errno` says which error).
pub const DQS_E_IO: c_int = 2;
/// Not a queue of this variant, or a corrupt header.
pub const DQS_E_INCOMPATIBLE: c_int = 3;
/// An interrupted create left a partial header.
pub const DQS_E_INCOMPLETE: c_int = 4;
/// The fd is too small to hold a header.
pub const DQS_E_TOO_SMALL: c_int = 5;
/// The operation does not apply to this queue (or needs a feature this
/// build lacks, such as decoding a compressed item without `zstd`).
pub const DQS_E_UNSUPPORTED: c_int = 6;
/// An item could not be read back: a compressed item whose bytes do not
/// decode (shared memory scribbled over). It was removed (by a pop; a
/// peek leaves it).
pub const DQS_E_CORRUPT: c_int = 7;

/// Where a failed call describes its failure.
#[repr(C)]
pub struct DqsError {
    /// One of the `DQS_E_*` kinds.
    pub kind: c_int,
    /// The OS error number for `DQS_E_IO`, else 0.
    pub os_errno: c_int,
    /// A NUL-terminated one-line message without a trailing newline.
    pub msg: [c_char; 512],
}

pub(super) fn set_error(err: *mut DqsError, e: &Error) {
    if err.is_null() {
        return;
    }
    let kind = match e {
        Error::InvalidArgument(_) => DQS_E_ARG,
        Error::Io { .. } => DQS_E_IO,
        Error::Incompatible { .. } => DQS_E_INCOMPATIBLE,
        Error::IncompleteCreate(_) => DQS_E_INCOMPLETE,
        Error::TooSmall(_) => DQS_E_TOO_SMALL,
        Error::Unsupported(_) => DQS_E_UNSUPPORTED,
        Error::Corrupt(_) => DQS_E_CORRUPT,
    };
    let text = e.to_string();
    // SAFETY: the caller passed a valid, writable DqsError.
    let err = unsafe { &mut *err };
    err.kind = kind;
    err.os_errno = e.raw_os_error().unwrap_or(0);
    let n = text.len().min(err.msg.len() - 1);
    for (d, s) in err.msg.iter_mut().zip(text.as_bytes()[..n].iter()) {
        *d = *s as c_char;
    }
    err.msg[n] = 0;
}

pub(super) fn push_status(r: crate::Result<bool>, err: *mut DqsError) -> c_int {
    match r {
        Ok(true) => DQS_DONE,
        Ok(false) => DQS_NONE,
        Err(e) => {
            set_error(err, &e);
            DQS_ERROR
        }
    }
}
