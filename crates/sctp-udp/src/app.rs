//! The two applications of real mode, each a single-threaded loop over one [`UdpDriver`]:
//! a bulk sender ([`run_send`]) and a sink ([`run_sink`]).
//!
//! Metrics, as the simulator defines them where the same thing can be seen:
//!
//! * sink `goodput`: user bytes read by the application divided by the time from the
//!   association's establishment (the first send is not visible to the receiver; on loopback
//!   the two are one round trip apart) to the last read;
//! * sender `goodput`: user bytes handed to the association and acknowledged, divided by the
//!   time from the first send to the end of the association (every byte acknowledged and the
//!   SHUTDOWN exchanged), its `completion_time`.
//!
//! The sender's messages carry a pattern the sink can check ([`CheckMode::Pattern`]): the
//! first 8 bytes are the message's sequence number (little-endian), byte `i` after them is
//! `(31 i + 7) mod 256`. A sink checks every whole message and counts each sequence number
//! once, so a lost, corrupted or duplicated message shows up in `check_errors` /
//! `duplicate_messages`.

use std::net::Ipv4Addr;

use netsim::recorder::Scalars;
use sctp::{AssocId, Config, Event, SendError, State};
use simtime::{Duration, Instant};

use crate::clock::Clock;
use crate::driver::{DriverError, LocalOptions, UdpDriver};
use crate::report::{Book, RealResult};

/// How often the loop samples, reports progress and asks whether to stop.
const TICK: Duration = Duration::from_millis(100);

/// How long a graceful end may take after a stop request before the association is aborted.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Most message sequence numbers a pattern-checking sink remembers (a bit each).
const MAX_TRACKED_SEQ: u64 = 1 << 28;

/// What a running application tells its caller about every `TICK`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    /// Seconds since the start.
    pub elapsed: f64,
    /// User bytes acknowledged (sender) or read (sink) so far.
    pub bytes: u64,
    /// Associations in the endpoint.
    pub associations: usize,
    /// The run is winding down (stop requested or target reached).
    pub ending: bool,
}

/// The caller's side of a running application: progress in, stop requests out.
pub trait Control {
    /// Called about every 100 ms. Returns true to end the run: the sender shuts its
    /// association down gracefully (aborts it if that takes more than 5 s), the sink stops at
    /// once; results are written either way.
    fn check_in(&mut self, progress: &Progress) -> bool;
}

/// No progress, never stops early.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoControl;

impl Control for NoControl {
    fn check_in(&mut self, _progress: &Progress) -> bool {
        false
    }
}

/// What a sink checks in the messages it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CheckMode {
    /// Nothing: bytes and messages are counted.
    #[default]
    None,
    /// The sender's pattern (see the module documentation), from an `sctpsim real send`.
    Pattern,
    /// Every byte equal to this one (usrsctp's `tsctp` sends `b`).
    Fill(u8),
}

/// A bulk transfer.
#[derive(Clone, Debug)]
pub struct SendOptions {
    /// Local sockets.
    pub local: LocalOptions,
    /// Peer addresses (the first is the primary).
    pub peers: Vec<Ipv4Addr>,
    /// Peer's SCTP port.
    pub peer_port: u16,
    /// Association parameters.
    pub config: Config,
    /// Bytes to send (whole messages; the last may be shorter); `None` with `time`.
    pub bytes: Option<u64>,
    /// How long to send for, from the association's establishment.
    pub time: Option<Duration>,
    /// Bytes per message.
    pub message_size: usize,
    /// Streams to spread messages over, round robin (at most as many as negotiated).
    pub streams: u16,
    /// Unordered messages.
    pub unordered: bool,
    /// Name in results.
    pub name: String,
}

/// A sink.
#[derive(Clone, Debug)]
pub struct SinkOptions {
    /// Local sockets (listening is implied).
    pub local: LocalOptions,
    /// Association parameters.
    pub config: Config,
    /// How long to run; `None`: until stopped (or `once`).
    pub time: Option<Duration>,
    /// End when the first association has closed.
    pub once: bool,
    /// What to check in the messages.
    pub check: CheckMode,
    /// Name in results.
    pub name: String,
}

/// Runs a bulk transfer to completion (or until `control` stops it) and returns its results.
pub fn run_send(opts: &SendOptions, control: &mut dyn Control) -> Result<RealResult, DriverError> {
    let cpu = CpuTime::now();
    let mut drv = UdpDriver::new(opts.config.clone(), &opts.local, Clock::start())?;
    let mut book = Book::new(&opts.name);
    let id = drv.open(&opts.peers, opts.peer_port, opts.local.remote_udp_port);
    book.record(id);
    let mut s = Sender::new(opts);
    drv.flush();
    let mut next_tick = drv.now();
    let mut faults_logged = 0;
    loop {
        let now = drv.now();
        drain(&mut drv, &mut book, &mut s, id);
        if s.closed {
            break;
        }
        if now >= next_tick {
            next_tick = now + TICK;
            faults_logged = log_faults(&drv, &mut book, now, faults_logged);
            book.sample(now, &drv);
            let acked = s.acked(&drv, id);
            book.series.push(now, "sctp", &opts.name, "acked_bytes", "bytes", acked as f64);
            let progress = Progress {
                elapsed: now.as_secs_f64(),
                bytes: acked,
                associations: drv.endpoint().len(),
                ending: s.stop_at.is_some() || s.done_queueing,
            };
            if control.check_in(&progress) && s.stop_at.is_none() {
                s.interrupted = true;
                s.stop(&mut drv, id, now);
            }
            if s.stop_at.is_some_and(|t| now >= t + STOP_GRACE) {
                if let Some(a) = drv.endpoint_mut().association_mut(id) {
                    a.abort(now);
                }
                drv.flush();
                continue;
            }
        }
        let timeout = wait_until(&mut drv, next_tick);
        drv.wait(Some(timeout))?;
        while let Some(got) = drv.receive() {
            if got == Some(id) {
                s.pump(&mut drv, id);
            }
            drain(&mut drv, &mut book, &mut s, id);
        }
        drv.handle_timeout();
    }
    let end = drv.now();
    book.sample(end, &drv);
    book.series.push(end, "sctp", &opts.name, "acked_bytes", "bytes", s.acked(&drv, id) as f64);
    let mut scalars = Scalars::default();
    let rec_connected = book.records.first().and_then(|r| r.connected_at);
    let name = opts.name.clone();
    let first_send = rec_connected;
    let acked = s.acked(&drv, id);
    scalars.push("sctp", &name, "queued_bytes", s.queued as f64, "bytes");
    scalars.push("sctp", &name, "queued_messages", s.seq as f64, "messages");
    scalars.push("sctp", &name, "acked_bytes", acked as f64, "bytes");
    if let (Some(t0), Some(t1)) = (first_send, book.records.first().and_then(|r| r.closed_at)) {
        let secs = t1.saturating_since(t0).as_secs_f64();
        scalars.push("sctp", &name, "completion_time", secs, "s");
        if secs > 0.0 {
            scalars.push("sctp", &name, "goodput", acked as f64 * 8.0 / secs, "bit/s");
        }
    }
    if let Some(reason) = book.records.first().and_then(|r| r.close_reason.clone()) {
        book.log(end, "real", format!("end reason={reason}"));
    }
    book.transport_scalars(end, &drv, true, &mut scalars);
    let description = describe_send(opts, drv.udp_port());
    cpu.report(&opts.name, acked, &mut scalars);
    finish(drv, book, scalars, end, s.interrupted, description)
}

/// The sender's state.
struct Sender {
    bytes: Option<u64>,
    time: Option<Duration>,
    streams: u16,
    unordered: bool,
    /// A message-size buffer with the pattern, its first 8 bytes rewritten per message.
    payload: Vec<u8>,
    connected_at: Option<Instant>,
    queued: u64,
    seq: u64,
    next_stream: u16,
    done_queueing: bool,
    stop_at: Option<Instant>,
    interrupted: bool,
    closed: bool,
}

impl Sender {
    fn new(opts: &SendOptions) -> Self {
        Sender {
            bytes: opts.bytes,
            time: opts.time,
            streams: opts.streams.max(1),
            unordered: opts.unordered,
            payload: pattern(opts.message_size.max(1)),
            connected_at: None,
            queued: 0,
            seq: 0,
            next_stream: 0,
            done_queueing: false,
            stop_at: None,
            interrupted: false,
            closed: false,
        }
    }

    /// Queues messages until the send buffer is full or the target is reached; at the target,
    /// starts the graceful shutdown.
    fn pump(&mut self, drv: &mut UdpDriver, id: AssocId) {
        let Some(t0) = self.connected_at else { return };
        if self.done_queueing || self.stop_at.is_some() {
            return;
        }
        let now = drv.now();
        let streams = drv.endpoint().association(id).map_or(1, |a| a.outbound_streams()).clamp(1, self.streams);
        loop {
            let time_up = self.time.is_some_and(|t| now >= t0 + t);
            let left = self.bytes.map_or(u64::MAX, |b| b.saturating_sub(self.queued));
            if time_up || left == 0 {
                self.done_queueing = true;
                if let Some(a) = drv.endpoint_mut().association_mut(id) {
                    a.shutdown(now);
                }
                break;
            }
            let len = self.payload.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            let seq = self.seq.to_le_bytes();
            let n = seq.len().min(len);
            self.payload[..n].copy_from_slice(&seq[..n]);
            let stream = self.next_stream % streams;
            match drv.endpoint_mut().send(id, stream, 0, self.unordered, &self.payload[..len]) {
                Ok(()) => {
                    self.queued += len as u64;
                    self.seq += 1;
                    self.next_stream = (stream + 1) % streams;
                }
                Err(SendError::BufferFull) => break,
                Err(_) => {
                    self.done_queueing = true;
                    break;
                }
            }
        }
        drv.flush();
    }

    /// A stop request: a graceful shutdown when established, an abort before.
    fn stop(&mut self, drv: &mut UdpDriver, id: AssocId, now: Instant) {
        self.stop_at = Some(now);
        if let Some(a) = drv.endpoint_mut().association_mut(id) {
            if a.state() == State::Established {
                a.shutdown(now);
            } else if matches!(a.state(), State::CookieWait | State::CookieEchoed) {
                a.abort(now);
            }
        }
        drv.flush();
    }

    /// User bytes acknowledged: queued less those still in the send queue or in flight.
    fn acked(&self, drv: &UdpDriver, id: AssocId) -> u64 {
        match drv.endpoint().association(id) {
            Some(a) => self.queued.saturating_sub(u64::from(a.buffered_bytes())),
            None if self.closed => self.queued,
            None => 0,
        }
    }
}

/// Takes the driver's events and finished associations into the book and the sender.
fn drain(drv: &mut UdpDriver, book: &mut Book, s: &mut Sender, id: AssocId) {
    while let Some((t, note)) = drv.take_note() {
        book.log(t, "real", note);
    }
    let mut connected = false;
    while let Some((t, a, e)) = drv.take_event() {
        book.on_event(t, a, &e, drv);
        if a == id {
            match e {
                Event::Connected => {
                    s.connected_at.get_or_insert(t);
                    connected = true;
                }
                Event::Closed { .. } => s.closed = true,
                _ => {}
            }
        }
    }
    while let Some((a, assoc)) = drv.take_closed() {
        if a == id {
            s.closed = true;
        }
        book.left(a, assoc);
    }
    if connected {
        s.pump(drv, id);
    }
}

/// Runs a sink until its time is up, its first association has closed (`once`) or `control`
/// stops it, and returns its results.
pub fn run_sink(opts: &SinkOptions, control: &mut dyn Control) -> Result<RealResult, DriverError> {
    let cpu = CpuTime::now();
    let mut local = opts.local.clone();
    local.listening = true;
    let mut drv = UdpDriver::new(opts.config.clone(), &local, Clock::start())?;
    let mut book = Book::new(&opts.name);
    let mut k = Sink { check: Checker::new(opts.check), closed: 0, delivered: 0, messages: 0, associations: 0 };
    let mut next_tick = drv.now();
    let mut faults_logged = 0;
    let mut interrupted = false;
    loop {
        let now = drv.now();
        k.drain(&mut drv, &mut book);
        if opts.once && k.closed > 0 {
            break;
        }
        if opts.time.is_some_and(|t| now >= Instant::ZERO + t) {
            break;
        }
        if now >= next_tick {
            next_tick = now + TICK;
            faults_logged = log_faults(&drv, &mut book, now, faults_logged);
            book.sample(now, &drv);
            let progress = Progress {
                elapsed: now.as_secs_f64(),
                bytes: k.delivered,
                associations: drv.endpoint().len(),
                ending: false,
            };
            if control.check_in(&progress) {
                interrupted = true;
                break;
            }
        }
        let timeout = wait_until(&mut drv, next_tick);
        drv.wait(Some(timeout))?;
        while let Some(got) = drv.receive() {
            if let Some(id) = got {
                k.read(&mut drv, &mut book, id);
            }
            k.drain(&mut drv, &mut book);
        }
        drv.handle_timeout();
    }
    let end = drv.now();
    book.sample(end, &drv);
    let mut scalars = Scalars::default();
    for rec in &book.records {
        let name = &rec.entity;
        scalars.push("sctp", name, "delivered_bytes", rec.delivered_bytes as f64, "bytes");
        scalars.push("sctp", name, "delivered_messages", rec.delivered_messages as f64, "messages");
        if let (Some(t0), Some(t1)) = (rec.connected_at, rec.last_delivery) {
            let secs = t1.saturating_since(t0).as_secs_f64();
            if secs > 0.0 {
                scalars.push("sctp", name, "goodput", rec.delivered_bytes as f64 * 8.0 / secs, "bit/s");
            }
        }
        if let Some(t) = rec.first_delivery {
            scalars.push("sctp", name, "first_delivery_at", t.as_secs_f64(), "s");
        }
        if let Some(t) = rec.last_delivery {
            scalars.push("sctp", name, "last_delivery_at", t.as_secs_f64(), "s");
        }
    }
    let name = opts.name.clone();
    scalars.push("real", &name, "total_delivered_bytes", k.delivered as f64, "bytes");
    scalars.push("real", &name, "total_delivered_messages", k.messages as f64, "messages");
    scalars.push("real", &name, "associations", k.associations as f64, "associations");
    scalars.push("real", &name, "associations_closed", k.closed as f64, "associations");
    scalars.push("real", &name, "rejected_over_limit", drv.stats().rejected_over_limit as f64, "packets");
    if opts.check != CheckMode::None {
        scalars.push("real", &name, "checked_messages", k.check.checked as f64, "messages");
        scalars.push("real", &name, "check_errors", k.check.errors as f64, "messages");
        scalars.push("real", &name, "duplicate_messages", k.check.duplicates as f64, "messages");
    }
    book.transport_scalars(end, &drv, false, &mut scalars);
    let description = describe_sink(opts, drv.udp_port());
    cpu.report(&opts.name, k.delivered, &mut scalars);
    finish(drv, book, scalars, end, interrupted, description)
}

/// The sink's state.
struct Sink {
    check: Checker,
    closed: u64,
    delivered: u64,
    messages: u64,
    associations: u64,
}

impl Sink {
    /// Reads every message `id` has ready.
    fn read(&mut self, drv: &mut UdpDriver, book: &mut Book, id: AssocId) {
        let now = drv.now();
        let mut bytes = 0u64;
        let mut messages = 0u64;
        while let Some(m) = drv.endpoint_mut().read(id) {
            bytes += m.data.len() as u64;
            if m.end_of_message {
                messages += 1;
            }
            self.check.message(&m.data, m.end_of_message);
            drv.endpoint_mut().recycle(id, m.data);
        }
        if bytes == 0 {
            return;
        }
        self.delivered += bytes;
        self.messages += messages;
        if let Some(rec) = book.record(id) {
            rec.delivered_bytes += bytes;
            rec.delivered_messages += messages;
            rec.first_delivery.get_or_insert(now);
            rec.last_delivery = Some(now);
        }
        // Reading opened the window: the engine may have a window update to send.
        drv.flush();
    }

    fn drain(&mut self, drv: &mut UdpDriver, book: &mut Book) {
        while let Some((t, note)) = drv.take_note() {
            book.log(t, "real", note);
        }
        while let Some((t, a, e)) = drv.take_event() {
            if matches!(e, Event::Connected) {
                self.associations += 1;
            }
            book.on_event(t, a, &e, drv);
        }
        while let Some((a, mut assoc)) = drv.take_closed() {
            // Whatever it still had to read (taken before it left, normally).
            while let Some(m) = assoc.read() {
                self.delivered += m.data.len() as u64;
                self.check.message(&m.data, m.end_of_message);
            }
            self.closed += 1;
            book.left(a, assoc);
        }
    }
}

/// Checks messages against a [`CheckMode`].
struct Checker {
    mode: CheckMode,
    reference: Vec<u8>,
    seen: Vec<u64>,
    checked: u64,
    errors: u64,
    duplicates: u64,
}

impl Checker {
    fn new(mode: CheckMode) -> Self {
        Checker { mode, reference: Vec::new(), seen: Vec::new(), checked: 0, errors: 0, duplicates: 0 }
    }

    fn message(&mut self, data: &[u8], whole: bool) {
        match self.mode {
            CheckMode::None => {}
            CheckMode::Fill(b) => {
                self.checked += 1;
                if data.iter().any(|&x| x != b) {
                    self.errors += 1;
                }
            }
            CheckMode::Pattern if whole => {
                self.checked += 1;
                if self.reference.len() < data.len() {
                    self.reference = pattern(data.len());
                }
                let n = data.len().min(8);
                if data[n..] != self.reference[n..data.len()] {
                    self.errors += 1;
                    return;
                }
                if n < 8 {
                    return;
                }
                let mut seq = [0u8; 8];
                seq.copy_from_slice(&data[..8]);
                let seq = u64::from_le_bytes(seq);
                if seq >= MAX_TRACKED_SEQ {
                    self.errors += 1;
                    return;
                }
                let (word, bit) = ((seq / 64) as usize, seq % 64);
                if self.seen.len() <= word {
                    self.seen.resize(word + 1, 0);
                }
                if self.seen[word] & (1 << bit) != 0 {
                    self.duplicates += 1;
                }
                self.seen[word] |= 1 << bit;
            }
            CheckMode::Pattern => {}
        }
    }
}

/// CPU time of the calling thread (the loop runs on one), from `getrusage(RUSAGE_THREAD)`.
#[derive(Clone, Copy, Debug)]
struct CpuTime {
    user: f64,
    system: f64,
}

impl CpuTime {
    fn now() -> Self {
        // SAFETY: `getrusage` fills the zeroed struct it is given; RUSAGE_THREAD is valid on
        // Linux, the only system this driver is built for.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) } == 0;
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        if ok {
            CpuTime { user: secs(u.ru_utime), system: secs(u.ru_stime) }
        } else {
            CpuTime { user: f64::NAN, system: f64::NAN }
        }
    }

    /// The loop's CPU time since `self` (user, system, total) and, for `bytes` of user data
    /// delivered or acknowledged, the CPU time per byte.
    fn report(self, name: &str, bytes: u64, out: &mut Scalars) {
        let now = CpuTime::now();
        let (user, system) = (now.user - self.user, now.system - self.system);
        out.push("real", name, "cpu_user", user, "s");
        out.push("real", name, "cpu_system", system, "s");
        if bytes > 0 {
            out.push("real", name, "cpu_per_byte", (user + system) / bytes as f64, "s/byte");
        }
    }
}

/// `len` bytes of the sender's pattern (sequence number bytes zero).
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| if i < 8 { 0 } else { (i.wrapping_mul(31).wrapping_add(7) % 256) as u8 }).collect()
}

/// How long to wait for input: until the engine's deadline or the next tick.
fn wait_until(drv: &mut UdpDriver, next_tick: Instant) -> std::time::Duration {
    let now = drv.now();
    let until = drv.deadline().map_or(next_tick, |d| d.min(next_tick));
    Clock::to_std(until.saturating_since(now))
}

/// Logs faults whose time has come (`done` already logged); returns how many are logged.
fn log_faults(drv: &UdpDriver, book: &mut Book, now: Instant, done: usize) -> usize {
    // A fault placed later (counted from an establishment) starts no earlier than the faults
    // already logged, so those stay the first `done` in this order.
    let mut faults = drv.fault_schedule();
    faults.sort_by_key(|&(_, at)| at);
    let due: Vec<_> = faults.iter().filter(|&&(_, at)| at <= now).skip(done).copied().collect();
    for (f, at) in &due {
        book.log(*at, "fault", format!("drop addr={} share={}", f.addr, f.drop));
    }
    done + due.len()
}

/// Common end: driver counters, the capture file, the result.
fn finish(
    mut drv: UdpDriver,
    book: Book,
    mut scalars: Scalars,
    end: Instant,
    interrupted: bool,
    description: String,
) -> Result<RealResult, DriverError> {
    let name = book.name.clone();
    let st = drv.stats().clone();
    let (drop_rx, drop_tx) = drv.fault_drops();
    for (metric, v, unit) in [
        ("datagrams_sent", st.datagrams_sent, "packets"),
        ("datagrams_received", st.datagrams_received, "packets"),
        ("udp_bytes_sent", st.bytes_sent, "bytes"),
        ("udp_bytes_received", st.bytes_received, "bytes"),
        ("send_blocked", st.send_blocked, "packets"),
        ("send_errors", st.send_errors, "packets"),
        ("source_changes", st.source_changes, "events"),
        ("segmented_sends", st.segmented_sends, "calls"),
        ("coalesced_receives", st.coalesced_receives, "calls"),
        ("fault_dropped_rx", drop_rx, "packets"),
        ("fault_dropped_tx", drop_tx, "packets"),
        ("bad_checksum", drv.endpoint().stats().bad_checksum, "packets"),
        ("out_of_the_blue", drv.endpoint().stats().out_of_the_blue, "packets"),
        ("invalid_cookies", drv.endpoint().stats().invalid_cookies, "packets"),
    ] {
        scalars.push("real", &name, metric, v as f64, unit);
    }
    if drv.endpoint().checksum() == sctp::Checksum::Skip {
        // Never silent: a run without CRC32c says so in its results.
        scalars.push("real", &name, "crc32c_skipped", 1.0, "bool");
    }
    scalars.push("run", "run", "wall_time", end.as_secs_f64(), "s");
    scalars.push("run", "run", "interrupted", f64::from(u8::from(interrupted)), "bool");
    let captures = drv.finish_capture()?.into_iter().collect();
    Ok(RealResult {
        name: format!("real-{name}"),
        description,
        scalars,
        timeseries: book.series,
        events: book.events,
        captures,
        interrupted,
    })
}

fn addrs(a: &[Ipv4Addr]) -> String {
    a.iter().map(|x| format!("\"{x}\"")).collect::<Vec<_>>().join(", ")
}

/// The local side as TOML; `udp_port` is the port bound (the system's choice for 0).
fn describe_local(l: &LocalOptions, udp_port: u16) -> String {
    let faults: Vec<String> = l.faults.iter().map(|f| format!("\"{f}\"")).collect();
    format!(
        "bind = [{}]\nudp_port = {}\nport = {}\npeer_udp_port = {}\nmax_associations = {}\nfaults = [{}]\n",
        addrs(&l.addrs),
        udp_port,
        l.sctp_port,
        l.remote_udp_port,
        l.max_associations,
        faults.join(", ")
    )
}

fn describe_send(o: &SendOptions, udp_port: u16) -> String {
    let mut s = format!("# sctpsim real send\nname = \"{}\"\n", o.name);
    s += &describe_local(&o.local, udp_port);
    s += &format!("peer = [{}]\npeer_port = {}\n", addrs(&o.peers), o.peer_port);
    if let Some(b) = o.bytes {
        s += &format!("bytes = {b}\n");
    }
    if let Some(t) = o.time {
        s += &format!("time = \"{}s\"\n", t.as_secs_f64());
    }
    s += &format!("message_size = {}\nstreams = {}\nunordered = {}\n", o.message_size, o.streams, o.unordered);
    s
}

fn describe_sink(o: &SinkOptions, udp_port: u16) -> String {
    let mut s = format!("# sctpsim real sink\nname = \"{}\"\n", o.name);
    s += &describe_local(&o.local, udp_port);
    if let Some(t) = o.time {
        s += &format!("time = \"{}s\"\n", t.as_secs_f64());
    }
    s += &format!("once = {}\n", o.once);
    s
}
