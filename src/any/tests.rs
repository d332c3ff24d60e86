//! Unit tests of `AnyQueue`: attaching files of every variant (never
//! creating one), refusing junk, and the integer ranges.

use super::*;
use std::path::PathBuf;

struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("dqs-any-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn attach_reads_each_variant_from_the_header() {
    let d = TempDir::new("variants");
    for (name, v) in [
        ("int", Variant::Int64),
        ("int32", Variant::Int32),
        ("int16", Variant::Int16),
        ("str", Variant::Str),
    ] {
        assert_eq!(variant_from_name(name), Some(v));
        let p = d.0.join(name);
        AnyQueue::create(&p, v, 5, 0, 0o600).unwrap();
        let q = AnyQueue::attach(&p).unwrap();
        assert_eq!(q.variant(), v);
        assert_eq!(q.capacity(), 8);
        assert!(q.is_empty());
        assert_eq!(probe(&p).unwrap().variant, v);
    }
    assert_eq!(variant_from_name("INT16"), Some(Variant::Int16));
    assert_eq!(variant_from_name("float"), None);
}

#[test]
fn attach_never_creates() {
    let d = TempDir::new("missing");
    let p = d.0.join("nope");
    let e = AnyQueue::attach(&p).err().unwrap();
    assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    assert!(e.to_string().contains("no such queue file"), "{e}");
    assert!(!p.exists());
}

#[test]
fn attach_refuses_junk_empty_and_incomplete_files() {
    let d = TempDir::new("junk");
    let p = d.0.join("junk");
    std::fs::write(&p, vec![7u8; 4096]).unwrap();
    let e = AnyQueue::attach(&p).err().unwrap().to_string();
    assert!(e.contains("bad magic"), "{e}");
    std::fs::write(&p, b"").unwrap();
    let e = AnyQueue::attach(&p).err().unwrap().to_string();
    assert!(e.contains("too small"), "{e}");
    std::fs::write(&p, vec![0u8; 4096]).unwrap();
    assert!(matches!(
        AnyQueue::attach(&p).err().unwrap(),
        Error::IncompleteCreate(_)
    ));
    assert!(AnyQueue::attach(&d.0).is_err(), "a directory");
}

#[test]
fn create_refuses_other_variant_or_geometry_and_accepts_the_same() {
    let d = TempDir::new("create");
    let p = d.0.join("q");
    let q = AnyQueue::create(&p, Variant::Str, 16, 8192, 0o640).unwrap();
    if let AnyQueue::Str(s) = &q {
        assert!(s.push(b"kept", false).unwrap());
    }
    let again = AnyQueue::create(&p, Variant::Str, 9, 8192, 0o600).unwrap();
    assert_eq!(again.len(), 1, "same geometry attaches");
    let e = AnyQueue::create(&p, Variant::Str, 32, 8192, 0o600)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("capacity 16") && e.contains("not 32"), "{e}");
    let e = AnyQueue::create(&p, Variant::Str, 16, 0, 0o600)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("8192-byte arena"), "{e}");
    let e = AnyQueue::create(&p, Variant::Int32, 16, 0, 0o600)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("it holds a Str queue"), "{e}");
    assert_eq!(AnyQueue::attach(&p).unwrap().clear(), 1);
}

#[test]
fn int_ranges() {
    assert_eq!(int_range(Variant::Int16), Some((-32768, 32767)));
    assert_eq!(
        int_range(Variant::Int32),
        Some((i32::MIN as i64, i32::MAX as i64))
    );
    assert_eq!(int_range(Variant::Int64), Some((i64::MIN, i64::MAX)));
    assert_eq!(int_range(Variant::Str), None);
}
