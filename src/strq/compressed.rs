//! Compression for `StrQueue`: the producer setting and the hooks marked
//! `HOOK(compress)` in the other files. The codec itself is in
//! `compress.rs`.

use super::items::{never_fits, Item, LEN_PACKED};
use super::locking::Ends;
use super::StrQueue;
use crate::arena::align8;
use crate::compress;
use crate::error::{Error, Result};
use crate::sync::Ordering;

/// Compression: the producer setting and the hooks.
impl StrQueue {
    /// Store the strings of at least `min_bytes` bytes that this handle
    /// pushes (by every push call) compressed with zstd at `level`, when
    /// that makes them shorter; `min_bytes` 0 turns it off. Returns the
    /// previous `min_bytes` (0: it was off). This handle only (not
    /// shared): readers need no setting, every pop decodes.
    ///
    /// A compressed item takes its compressed length in the arena, so an
    /// item longer than the arena may fit; it is compressed before the
    /// lock is taken, and decoded by the reader after the lock is
    /// released.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a level zstd does not have (0 is
    /// refused; negative levels are zstd's fast ones), and
    /// [`Error::Unsupported`] to turn it on in a build without the `zstd`
    /// feature.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(4, 4096)?;
    /// assert_eq!(q.set_compress(512, 3)?, 0);
    /// let doc = "{\"id\":1,\"tags\":[\"a\",\"b\"]} ".repeat(300); // 9.6 KB
    /// assert!(q.push(doc.as_bytes(), true)?); // fits a 4 KB arena compressed
    /// let s = q.stats();
    /// assert_eq!(s.compressed, 1);
    /// assert!(s.arena_used < 1000);
    /// let mut buf = Vec::new();
    /// assert_eq!(q.pop(false, &mut buf), Some(true));
    /// assert_eq!(buf, doc.as_bytes());
    /// assert_eq!(q.set_compress(0, 3)?, 512); // off again
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    #[cfg_attr(not(feature = "zstd"), allow(unused_variables))]
    pub fn set_compress(&self, min_bytes: u64, level: i32) -> Result<u64> {
        let min = compress::check_setting(min_bytes, level)?;
        self.compress.level.store(level, Ordering::Relaxed);
        Ok(match self.compress.min.swap(min, Ordering::Relaxed) {
            u64::MAX => 0,
            m => m,
        })
    }

    /// The compression setting: `(min_bytes, level)`, `min_bytes` 0 when
    /// off.
    pub fn compress(&self) -> (u64, i32) {
        let min = match self.compress.min.load(Ordering::Relaxed) {
            u64::MAX => 0,
            m => m,
        };
        (min, self.compress.level.load(Ordering::Relaxed))
    }

    /// Whether this handle compresses `bytes` (`min` is `u64::MAX` when
    /// off, so this is one compare).
    #[inline(always)]
    pub(super) fn packs(&self, bytes: &[u8]) -> bool {
        bytes.len() as u64 >= self.compress.min.load(Ordering::Relaxed)
    }

    /// A push (at the back, or the `front`) of a string this handle
    /// compresses: compressed before the lock is taken; stored as it is
    /// when compressing does not make it shorter.
    #[cold]
    #[inline(never)]
    pub(super) fn push_packed(&self, bytes: &[u8], utf8: bool, front: bool) -> Result<bool> {
        let level = self.compress.level.load(Ordering::Relaxed);
        compress::with_packed(bytes, level, |stored, packed| {
            if !packed {
                return if front {
                    self.push_front_plain(bytes, utf8)
                } else {
                    self.push_plain(bytes, utf8)
                };
            }
            let orig = bytes.len() as u64;
            self.check_stored(stored.len(), Some(orig))?;
            let Some(mut l) = self.locked::<true>(Ends::push(front)) else {
                return Ok(false);
            };
            let ok = l.put_any(stored, utf8, front, Some(orig));
            l.release();
            self.after_put(ok)
        })
    }

    /// [`StrQueue::check`] of `stored` bytes to store for a string of
    /// `packed` bytes (compressed) or of `stored` bytes (`None`).
    pub(super) fn check_stored(&self, stored: usize, packed: Option<u64>) -> Result<()> {
        match (never_fits(stored as u64, self.usable), packed) {
            (None, _) => Ok(()),
            (Some(e), None) => Err(e),
            (Some(_), Some(orig)) => Err(Error::InvalidArgument(format!(
                "string of {orig} bytes ({stored} compressed) exceeds the arena of {} bytes",
                self.usable
            ))),
        }
    }

    /// Under the lock: the item just written to slot `idx` is the zstd
    /// frame (`stored` bytes) of a string of `orig` bytes. Flag it, and
    /// count it in the header (load + store: only written under the lock).
    #[cold]
    #[inline(never)]
    pub(super) fn mark_packed(&self, idx: u64, stored: u64, orig: u64) {
        self.flag_packed(idx, stored);
        self.count_packed(stored, orig);
    }

    /// Under the lock: count an item stored compressed (`stored` bytes of
    /// a string of `orig` bytes) in the header.
    pub(super) fn count_packed(&self, stored: u64, orig: u64) {
        let h = self.header();
        let n = h.compressed.load(Ordering::Relaxed);
        h.compressed.store(n.wrapping_add(1), Ordering::Relaxed);
        let saved = align8(orig).saturating_sub(align8(stored));
        let v = h.compressed_saved.load(Ordering::Relaxed);
        h.compressed_saved
            .store(v.wrapping_add(saved), Ordering::Relaxed);
    }

    /// Under the lock: flag the item just written to slot `idx` (`stored`
    /// bytes) as a zstd frame, without counting it (an item back from a
    /// lease was counted when it was first pushed).
    pub(super) fn flag_packed(&self, idx: u64, stored: u64) {
        // `stored <= MAX_ITEM < 2^31` was checked by the caller.
        self.slot(idx)
            .len
            .store(stored as u32 | LEN_PACKED, Ordering::Relaxed);
    }

    /// Under the lock: the length a batch budget counts for the item
    /// `read_end` described (decoded, for a compressed one).
    pub(super) fn item_len(&self, item: Item) -> u64 {
        let Item {
            off, len, packed, ..
        } = item;
        if !packed {
            return len;
        }
        // A frame header is at most 18 bytes.
        let n = len.min(18) as usize;
        // SAFETY: `off + len <= usable` (read_item), so these `n <=
        // len` bytes lie in the mapped arena; we hold the lock, so nobody
        // writes them; they are only read.
        let head = unsafe { std::slice::from_raw_parts(self.arena_ptr(off), n) };
        self.packed_len(head, len)
    }

    /// The decoded length of the compressed item of `stored` bytes whose
    /// first bytes are `frame` (`stored` if its header says none: it will
    /// fail to decode anyway).
    pub(super) fn packed_len(&self, frame: &[u8], stored: u64) -> u64 {
        compress::content_size(frame).unwrap_or(stored)
    }
}
