//! The one place where the operating system's clock meets the engine's time.

use simtime::{Duration, Instant};

/// The monotonic clock as the engine's [`Instant`]: nanoseconds since the clock was made.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: std::time::Instant,
    /// Wall-clock time at the origin, nanoseconds since the Unix epoch (for capture files).
    epoch_ns: u64,
}

impl Clock {
    /// A clock starting now at [`Instant::ZERO`].
    pub fn start() -> Self {
        let epoch_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Clock { origin: std::time::Instant::now(), epoch_ns }
    }

    /// The engine's time now.
    pub fn now(&self) -> Instant {
        Instant(u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    /// Nanoseconds since the Unix epoch at engine time `t` (for pcap timestamps).
    pub fn epoch_ns(&self, t: Instant) -> u64 {
        self.epoch_ns.saturating_add(t.as_nanos())
    }

    /// An engine duration as the standard library's.
    pub fn to_std(d: Duration) -> std::time::Duration {
        std::time::Duration::from_nanos(d.as_nanos())
    }
}
