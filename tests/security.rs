//! Files at a queue path that the caller did not make, through the public
//! Rust API: an existing empty or all-zero file is initialised only when
//! the effective uid owns it (and then gets the requested mode); one owned
//! by another uid is refused and left as it was. A foreign owner needs
//! root (chown): those tests return early, saying so, when not root.
//! Also the files of the C implementation and other things that are not
//! queues, by path and by fd.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use data_queue_shared::{AnyQueue, Error, IntQueue, StrQueue, Variant};

const FOREIGN: u32 = 65534;

struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!("dqs-sec-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir(&p).unwrap();
        TempDir(p)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A file of `len` zero bytes with `mode`, owned by `uid` when given.
fn plant(p: &Path, len: u64, mode: u32, uid: Option<u32>) {
    let f = fs::File::create(p).unwrap();
    f.set_len(len).unwrap();
    drop(f);
    if let Some(uid) = uid {
        let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid path.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), uid, uid) }, 0);
    }
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
}

fn mode_of(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// Open `p` as each variant through the typed constructors and AnyQueue.
fn open_each(p: &Path) -> Vec<(&'static str, Result<(), Error>)> {
    vec![
        (
            "IntQueue<i64>",
            IntQueue::<i64>::open(p, 8, 0o600).map(drop),
        ),
        (
            "IntQueue<i32>",
            IntQueue::<i32>::open(p, 8, 0o600).map(drop),
        ),
        (
            "IntQueue<i16>",
            IntQueue::<i16>::open(p, 8, 0o600).map(drop),
        ),
        ("StrQueue", StrQueue::open(p, 8, 0, 0o600).map(drop)),
        (
            "AnyQueue::create",
            AnyQueue::create(p, Variant::Str, 8, 0, 0o600).map(drop),
        ),
    ]
}

fn assert_refused(p: &Path, len: u64) {
    for (what, r) in open_each(p) {
        let e = r.expect_err(what);
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("{}: refusing to initialize file not owned by us (owner uid {FOREIGN}, we are uid 0)", p.display())),
            "{what}: {msg}"
        );
        assert_eq!(e.raw_os_error(), Some(libc::EPERM), "{what}");
        let md = fs::metadata(p).unwrap();
        assert_eq!(
            (md.len(), md.uid(), mode_of(p)),
            (len, FOREIGN, 0o666),
            "{what}: untouched"
        );
    }
}

#[test]
fn an_empty_file_of_another_uid_is_refused() {
    if !is_root() {
        eprintln!("skipped: a foreign owner needs root");
        return;
    }
    let d = TempDir::new("empty");
    let p = d.0.join("q");
    plant(&p, 0, 0o666, Some(FOREIGN));
    assert_refused(&p, 0);
}

#[test]
fn an_all_zero_file_of_another_uid_is_refused() {
    if !is_root() {
        eprintln!("skipped: a foreign owner needs root");
        return;
    }
    let d = TempDir::new("zero");
    let p = d.0.join("q");
    let len = IntQueue::<i64>::anonymous(8).unwrap().region().mapped_len();
    plant(&p, len, 0o666, Some(FOREIGN));
    let e = IntQueue::<i64>::open(&p, 8, 0o600).err().unwrap();
    assert!(
        e.to_string()
            .contains("refusing to initialize file not owned by us"),
        "{e}"
    );
    let md = fs::metadata(&p).unwrap();
    assert_eq!((md.len(), mode_of(&p)), (len, 0o666));
    assert!(fs::read(&p).unwrap().iter().all(|&b| b == 0));
}

#[test]
fn an_empty_file_we_own_gets_the_requested_mode() {
    let d = TempDir::new("own");
    let p = d.0.join("q");
    plant(&p, 0, 0o666, None);
    let q = IntQueue::<i32>::open(&p, 8, 0o600).unwrap();
    assert_eq!(mode_of(&p), 0o600);
    assert!(q.push(5));
    drop(q);
    fs::remove_file(&p).unwrap();
    plant(&p, 0, 0o644, None);
    let q = StrQueue::open(&p, 8, 0, 0o640).unwrap();
    assert_eq!(mode_of(&p), 0o640);
    assert!(q.push(b"x", false).unwrap());
}

#[test]
fn a_file_of_the_c_implementation_is_named() {
    let d = TempDir::new("cimpl");
    let p = d.0.join("q");
    for version in [1u32, 2] {
        for len in [64usize, 4096] {
            let mut bytes = vec![0u8; len];
            bytes[..4].copy_from_slice(&0x5155_4531u32.to_le_bytes());
            bytes[4..8].copy_from_slice(&version.to_le_bytes());
            fs::write(&p, &bytes).unwrap();
            for (what, r) in open_each(&p) {
                let msg = r.expect_err(what).to_string();
                assert!(
                    msg.contains("invalid or incompatible queue file (a queue file of another version of Data::Queue::Shared (the C implementation")
                        && msg.contains(&format!("its format {version})"))
                        && msg.contains("remove it and create it again"),
                    "{what}, {len} bytes: {msg}"
                );
            }
            let f = fs::File::open(&p).unwrap();
            let msg = IntQueue::<i64>::from_fd(f.as_raw_fd())
                .err()
                .unwrap()
                .to_string();
            assert!(
                msg.contains("the C implementation"),
                "from_fd, {len} bytes: {msg}"
            );
            let msg = data_queue_shared::any::probe(&p).err().unwrap().to_string();
            assert!(
                msg.contains("the C implementation"),
                "probe, {len} bytes: {msg}"
            );
        }
    }
    // Version 3 is not one of its: just a bad magic.
    let mut bytes = vec![0u8; 4096];
    bytes[..4].copy_from_slice(&0x5155_4531u32.to_le_bytes());
    bytes[4..8].copy_from_slice(&3u32.to_le_bytes());
    fs::write(&p, &bytes).unwrap();
    let msg = IntQueue::<i64>::open(&p, 8, 0o600)
        .err()
        .unwrap()
        .to_string();
    assert!(
        msg.ends_with("invalid or incompatible queue file (bad magic)"),
        "{msg}"
    );
}

#[test]
fn what_is_not_a_queue_says_invalid_or_incompatible() {
    let d = TempDir::new("notq");
    let p = d.0.join("small");
    fs::write(&p, b"0123456789").unwrap();
    let msg = IntQueue::<i64>::open(&p, 8, 0o600)
        .err()
        .unwrap()
        .to_string();
    assert!(
        msg.ends_with(&format!(
            "invalid or incompatible queue file (too small: 10 bytes, a queue header alone is {})",
            data_queue_shared::layout::HEADER_SIZE
        )),
        "{msg}"
    );
    let f = fs::File::open(&p).unwrap();
    let e = IntQueue::<i64>::from_fd(f.as_raw_fd()).err().unwrap();
    assert!(matches!(e, Error::TooSmall(_)), "{e}");
    assert!(
        e.to_string()
            .contains("invalid or incompatible queue file (too small: 10 bytes"),
        "{e}"
    );

    let e = StrQueue::open(&d.0, 8, 0, 0o600).err().unwrap();
    assert!(
        e.to_string()
            .ends_with("invalid or incompatible queue file (a directory, not a regular file)"),
        "{e}"
    );
    let null = fs::File::open("/dev/null").unwrap();
    let e = StrQueue::from_fd(null.as_raw_fd()).err().unwrap();
    assert!(
        e.to_string().ends_with(
            "invalid or incompatible queue file (a character device, not a memfd or regular file)"
        ),
        "{e}"
    );
    let e = IntQueue::<i64>::open("/dev/null", 8, 0o600).err().unwrap();
    assert!(
        e.to_string()
            .ends_with("invalid or incompatible queue file (not a regular file)"),
        "{e}"
    );
    // A regular file whose size says 0 but that reads back content (as in
    // /proc) is not an empty file to initialise: it is refused as no queue,
    // before its mode would be set.
    let e = IntQueue::<i64>::open("/proc/self/status", 8, 0o600)
        .err()
        .unwrap();
    assert!(matches!(e, Error::Incompatible { .. }), "{e}");
    assert!(
        e.to_string().ends_with(
            "invalid or incompatible queue file (its size is 0 bytes, yet reading it gives \
             content: a /proc or /sys file, not a queue)"
        ),
        "{e}"
    );
}
