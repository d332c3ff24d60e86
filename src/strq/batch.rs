//! A batch push over the items where they lie: the C ABI's array of item
//! descriptions is read in place, not first copied into a slice of pairs.

use super::StrQueue;
use crate::error::Result;
use crate::sync::Ordering;

impl StrQueue {
    /// [`StrQueue::push_multi`] of the items `items` yields, each
    /// `(bytes, utf8)`: walked once to check that every item can ever fit
    /// (nothing is pushed otherwise), then again to store them under one
    /// lock. A handle that compresses, with an item long enough for it,
    /// takes [`StrQueue::push_multi`] on a collected copy.
    ///
    /// # Errors
    /// As [`StrQueue::push_multi`].
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(4, 0)?;
    /// let words = ["a", "b", "c", "d", "e"];
    /// assert_eq!(q.push_multi_iter(words.iter().map(|w| (w.as_bytes(), false)))?, 4);
    /// let mut buf = Vec::new();
    /// assert_eq!(q.pop(false, &mut buf), Some(false));
    /// assert_eq!(buf, b"a");
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn push_multi_iter<'b, I>(&self, items: I) -> Result<usize>
    where
        I: ExactSizeIterator<Item = (&'b [u8], bool)> + Clone,
    {
        // HOOK(compress): as push_multi decides it.
        let min = self.compress.min.load(Ordering::Relaxed);
        if min != u64::MAX && items.clone().any(|(b, _)| b.len() as u64 >= min) {
            let batch: Vec<(&[u8], bool)> = items.collect();
            return self.push_multi(&batch);
        }
        for (b, _) in items.clone() {
            self.check(b.len())?;
        }
        Ok(self.push_multi_stored(items.len(), items.map(|(b, utf8)| (b, utf8, None))))
    }
}
