//! The crate's error type.

use std::fmt;
use std::io;

/// Why opening or using a queue failed.
///
/// Every variant carries enough context to print a one-line message that
/// names the thing at fault (a path, a value, a size). The C API reports
/// the variants as `DQS_E_*` kinds (see [`crate::ffi::DqsError`]).
///
/// # Examples
///
/// ```
/// use data_queue_shared::{Error, IntQueue, StrQueue};
/// let e = IntQueue::<i64>::anonymous(0).err().unwrap();
/// assert!(matches!(e, Error::InvalidArgument(_)));
/// assert_eq!(e.to_string(), "capacity 0 is out of range (1 .. 1073741824)");
///
/// let path = std::env::temp_dir().join(format!("dqs-err-{}.shm", std::process::id()));
/// let q = IntQueue::<i32>::open(&path, 8, 0o600)?;
/// match StrQueue::open(&path, 8, 0, 0o600) {
///     Err(Error::Incompatible { why, .. }) => assert_eq!(why, "it holds an Int32 queue"),
///     _ => panic!("a Str handle must refuse an Int32 file"),
/// }
/// q.unlink()?;
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug)]
pub enum Error {
    /// An argument was out of range; the string says which and why.
    InvalidArgument(String),
    /// A system call failed; `what` names the call and the object.
    Io {
        /// What was being done, e.g. `open /tmp/q.shm`.
        what: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// The file or fd does not hold a queue of the requested variant, or its
    /// header is inconsistent.
    Incompatible {
        /// The path or fd.
        who: String,
        /// What exactly is wrong (shown in parentheses).
        why: String,
    },
    /// The file is an interrupted create: size right, header partly written.
    IncompleteCreate(String),
    /// The fd or file is too small to hold a queue header (the message
    /// reads `<who>: invalid or incompatible queue file (too small: ...)`).
    TooSmall(String),
    /// The operation does not apply to this queue (for example `unlink` on
    /// an anonymous queue).
    Unsupported(&'static str),
    /// An item could not be read back: a compressed item whose bytes do
    /// not decode (its shared memory was scribbled over). The item has
    /// been removed (a peek leaves it); the queue goes on.
    Corrupt(String),
}

impl Error {
    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn last_os(what: impl Into<String>) -> Self {
        Self::io(what, io::Error::last_os_error())
    }

    /// The OS error number behind this error, when there is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::IntQueue;
    /// let e = IntQueue::<i64>::open("/nonexistent-dir/q.shm", 8, 0o600).err().unwrap();
    /// assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    /// ```
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            Error::Io { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidArgument(s) => f.write_str(s),
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::Incompatible { who, why } => {
                write!(f, "{who}: invalid or incompatible queue file ({why})")
            }
            Error::IncompleteCreate(who) => write!(
                f,
                "{who}: incomplete queue file left by an interrupted create; remove it and retry"
            ),
            Error::TooSmall(s) => f.write_str(s),
            Error::Unsupported(s) => f.write_str(s),
            Error::Corrupt(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
