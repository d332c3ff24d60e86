//! A new integer queue touches no slot (format 5: zeroed memory is an empty
//! ring), so a large queue costs resident memory only for the slots it has
//! used, whatever backs it.
//!
//! Resident memory is read per mapping, from the `Rss:` line of
//! `/proc/self/smaps` for the queue's own mapping, so nothing else the test
//! process does (other tests' threads, the allocator) can move it. RSS is a
//! count of pages, not a timing: asserting it is deterministic. The bounds
//! leave room for the kernel's fault-around (up to 16 pages mapped on a
//! read fault of a file page already in the page cache); a queue that
//! initialised its 2^20 slots would show 8 or 16 MiB.

use data_queue_shared::{Element, IntQueue};

const SLOTS: u64 = 1 << 20;

/// Resident KiB of the mapping that starts at `base`.
fn mapping_rss_kib(base: usize) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("read /proc/self/smaps");
    let mut lines = smaps.lines();
    while let Some(line) = lines.next() {
        let Some((range, _)) = line.split_once(' ') else {
            continue;
        };
        let Some((start, _)) = range.split_once('-') else {
            continue;
        };
        if usize::from_str_radix(start, 16).ok() != Some(base) {
            continue;
        }
        for l in lines.by_ref() {
            if let Some(kb) = l.strip_prefix("Rss:") {
                return kb.trim().trim_end_matches("kB").trim().parse().unwrap();
            }
        }
    }
    panic!("no mapping at {base:#x} in /proc/self/smaps");
}

/// Create-time and after-use RSS of `q`'s mapping; asserts the bounds.
fn check<T: Element>(what: &str, q: &IntQueue<T>) {
    let base = std::ptr::from_ref(q.region().header()) as usize;
    let len = q.region().mapped_len();
    // Header and slots, then (format 7) the ring's 32 intent records on
    // a 64-byte boundary, then (format 6) the default lease table
    // (format 8: a 192-byte head, 64 records of 128 bytes and 64
    // dead-letter records of 64 bytes).
    let body = data_queue_shared::layout::HEADER_SIZE as u64
        + SLOTS * std::mem::size_of::<T::Slot>() as u64;
    assert_eq!(
        len,
        ((body + 63) & !63) + 32 * 64 + 192 + 64 * 128 + 64 * 64
    );
    let created = mapping_rss_kib(base);
    assert!(
        created <= 64,
        "{what}: a new queue of {len} bytes has {created} KiB resident"
    );
    for i in 0..1000 {
        assert!(q.push(T::from_i64(i)));
        assert_eq!(q.pop().map(T::to_i64), Some(T::from_i64(i).to_i64()));
    }
    let used = mapping_rss_kib(base);
    assert!(
        used < 1024,
        "{what}: 1000 push+pop pairs left {used} KiB resident"
    );
    eprintln!("{what}: {created} KiB resident at create, {used} KiB after use");
    let st = q.stats();
    assert_eq!((st.size, st.push_ok, st.pop_ok), (0, 1000, 1000), "{what}");
}

fn every_backing<T: Element>() {
    let name = std::any::type_name::<T>();
    check(
        &format!("{name} anonymous"),
        &IntQueue::<T>::anonymous(SLOTS).unwrap(),
    );
    let label = c"lazy";
    check(
        &format!("{name} memfd"),
        &IntQueue::<T>::memfd(label, SLOTS).unwrap(),
    );
    // The temporary directory, and tmpfs too, where posix_fallocate puts
    // the pages in the page cache at create (they must still not be
    // mapped into the process until used).
    let mut dirs = vec![std::env::temp_dir()];
    if std::path::Path::new("/dev/shm").is_dir() {
        dirs.push("/dev/shm".into());
    }
    for dir in dirs {
        let path = dir.join(format!("dqs-lazy-{}-{name}.q", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let q = IntQueue::<T>::open(&path, SLOTS, 0o600).unwrap();
        q.unlink().unwrap();
        check(&format!("{name} file in {}", dir.display()), &q);
    }
}

#[test]
fn a_big_new_queue_has_only_its_header_resident_and_grows_with_use() {
    every_backing::<i64>();
    every_backing::<i32>();
    every_backing::<i16>();
}
