//! A bounded buffer that keeps the last bytes a child wrote (its stderr).

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;

/// Keeps the last `cap` bytes written to it; clones share the buffer.
#[derive(Debug, Clone)]
pub struct Tail {
    buf: Arc<Mutex<VecDeque<u8>>>,
    cap: usize,
}

impl Tail {
    /// A tail that keeps `cap` bytes.
    pub fn new(cap: usize) -> Self {
        Tail {
            buf: Arc::new(Mutex::new(VecDeque::with_capacity(cap.min(1 << 16)))),
            cap,
        }
    }

    /// Append bytes, dropping the oldest beyond the cap.
    pub fn push(&self, bytes: &[u8]) {
        // Poisoning needs a panic while the lock is held; this section cannot panic.
        let mut b = self.buf.lock();
        let bytes = &bytes[bytes.len().saturating_sub(self.cap)..];
        b.extend(bytes.iter().copied());
        let excess = b.len().saturating_sub(self.cap);
        b.drain(..excess);
    }

    /// How many bytes it keeps now.
    pub fn len(&self) -> usize {
        self.buf.lock().len()
    }

    /// Whether nothing was kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The kept bytes as lossy UTF-8.
    pub fn text(&self) -> String {
        let b = self.buf.lock();
        let (a, c) = b.as_slices();
        let mut v = a.to_vec();
        v.extend_from_slice(c);
        String::from_utf8_lossy(&v).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_last_bytes() {
        let t = Tail::new(4);
        t.push(b"ab");
        t.push(b"cdef");
        assert_eq!(t.text(), "cdef");
        t.push(b"0123456789");
        assert_eq!(t.text(), "6789");
        assert_eq!(t.len(), 4);
        assert!(Tail::new(4).is_empty());
    }
}
