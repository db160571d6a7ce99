//! Byte buffers kept for reuse. A bulk sender allocates a buffer for every fragment it queues
//! and every packet it builds, and a receiver one for every message it takes in; at a
//! gigabit that is a few hundred thousand allocations a second. The association keeps the
//! buffers that come back to it (acknowledged fragments, and what the driver offers with
//! [`Association::recycle`](super::Association::recycle): datagrams it has handled, messages
//! the application has read) and builds the next ones in them.

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
    pub(crate) fn take(&mut self) -> Vec<u8> {
        self.spare.pop().unwrap_or_else(|| Vec::with_capacity(self.capacity))
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
}
