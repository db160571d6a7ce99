//! Byte buffers kept for reuse. A bulk sender allocates a buffer for every fragment it queues
//! and every packet it builds, and a receiver one for every message it takes in; at a
//! gigabit that is a few hundred thousand allocations a second. The association keeps the
//! buffers that come back to it (acknowledged fragments, and what the driver offers with
//! [`Association::recycle`](super::Association::recycle): datagrams it has handled, messages
//! the application has read) and builds the next ones in them.
//!
//! Only packet-sized data comes from the pool: a chunk of less than half a packet gets a
//! buffer of its own size ([`BufferPool::take_for`]), so a queued or received small message
//! costs about its size, not a path MTU.

use super::Association;

/// Buffers kept at most.
const MAX_SPARE: usize = 32;

/// Spare buffers, each able to hold a whole packet.
#[derive(Debug)]
pub(crate) struct BufferPool {
    spare: Vec<Vec<u8>>,
    /// Capacity of every buffer handed out: the path MTU, so that a packet built in one
    /// leaves room for the lower layers' headers (a driver can prepend them in place).
    capacity: usize,
}

impl BufferPool {
    pub(crate) fn new(capacity: usize) -> Self {
        BufferPool { spare: Vec::new(), capacity }
    }

    /// An empty buffer of at least the pool's capacity.
    #[inline]
    pub(crate) fn take(&mut self) -> Vec<u8> {
        self.spare.pop().unwrap_or_else(|| Vec::with_capacity(self.capacity))
    }

    /// An empty buffer for `len` bytes of chunk data: a pooled one if `len` is at least half
    /// the pool's capacity (bulk data, where reuse saves an allocation per chunk and wastes
    /// less than half; a chunk larger than the capacity grows its buffer once), otherwise one
    /// of exactly `len` bytes.
    #[inline]
    pub(crate) fn take_for(&mut self, len: usize) -> Vec<u8> {
        if len >= self.capacity / 2 {
            self.take()
        } else {
            Vec::with_capacity(len)
        }
    }

    /// `bytes` copied into a buffer from [`BufferPool::take_for`]. Always inlined: once per
    /// DATA chunk at both ends, and left out of line it cost 0.7 % more instructions.
    #[inline(always)]
    pub(crate) fn copy_of(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut buf = self.take_for(bytes.len());
        buf.extend_from_slice(bytes);
        buf
    }

    /// Keeps `buf` for a later [`BufferPool::take`] if there is room. Buffers too small to
    /// hold a packet, or much larger than one (a reassembled message), are dropped.
    pub(crate) fn give(&mut self, mut buf: Vec<u8>) {
        let fits = (self.capacity..=2 * self.capacity).contains(&buf.capacity());
        if fits && self.spare.len() < MAX_SPARE {
            buf.clear();
            self.spare.push(buf);
        }
    }
}

impl Association {
    /// An association with nothing queued, outstanding or held for the application keeps no
    /// spare buffers and no room in its queues: memory follows the bytes it holds. Called at
    /// heartbeat time, so a busy association keeps its buffers between packets.
    pub(super) fn release_memory_if_idle(&mut self) {
        if self.out.is_empty() && self.inb.held() == 0 {
            self.buffers.spare = Vec::new();
            self.out.shrink();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_back_cleared_buffers_of_packet_size_only() {
        let mut pool = BufferPool::new(1500);
        let fresh = pool.take();
        assert!(fresh.is_empty() && fresh.capacity() >= 1500);
        let mut used = Vec::with_capacity(1500);
        used.extend_from_slice(&[7; 1000]);
        let ptr = used.as_ptr();
        pool.give(used);
        pool.give(Vec::with_capacity(100));
        pool.give(Vec::with_capacity(64 * 1024));
        let again = pool.take();
        assert_eq!((again.len(), again.as_ptr()), (0, ptr));
        assert!(pool.spare.is_empty());
        for _ in 0..2 * MAX_SPARE {
            pool.give(Vec::with_capacity(1500));
        }
        assert_eq!(pool.spare.len(), MAX_SPARE);
    }

    #[test]
    fn small_chunks_get_buffers_of_their_own_size() {
        let mut pool = BufferPool::new(1500);
        pool.give(Vec::with_capacity(1500));
        assert_eq!(pool.take_for(100).capacity(), 100);
        assert_eq!(pool.spare.len(), 1);
        assert!(pool.take_for(1452).capacity() >= 1500);
        assert!(pool.spare.is_empty());
        // A returned small buffer is not kept.
        pool.give(Vec::with_capacity(100));
        assert!(pool.spare.is_empty());
    }
}
