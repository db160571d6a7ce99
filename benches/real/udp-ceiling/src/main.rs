//! `udp-ceiling SIZE SECONDS`: the loopback UDP ceiling for datagrams of SIZE bytes. One
//! thread sends as fast as the socket takes them (blocking), another receives and counts;
//! prints one JSON line: datagrams and bytes received, seconds, and each thread's CPU time
//! (`getrusage(RUSAGE_THREAD)`). What arrives is the ceiling: datagrams the receiver could
//! not take are dropped by the kernel, as they would be for SCTP.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn cpu() -> f64 {
    // SAFETY: getrusage fills the zeroed struct; RUSAGE_THREAD is valid on Linux.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1024);
    let secs: f64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(3.0);
    let rx = UdpSocket::bind("127.0.0.1:0").expect("bind receiver");
    rx.set_read_timeout(Some(Duration::from_millis(200))).expect("timeout");
    let to = rx.local_addr().expect("address");
    let stop = Arc::new(AtomicBool::new(false));
    let stop_rx = stop.clone();
    let receiver = std::thread::spawn(move || {
        let c0 = cpu();
        let mut buf = vec![0u8; 65536];
        let (mut n, mut bytes) = (0u64, 0u64);
        let mut first: Option<Instant> = None;
        let mut last = Instant::now();
        loop {
            match rx.recv(&mut buf) {
                Ok(len) => {
                    first.get_or_insert_with(Instant::now);
                    last = Instant::now();
                    n += 1;
                    bytes += len as u64;
                }
                Err(_) if stop_rx.load(Ordering::Relaxed) => break,
                Err(_) => {}
            }
        }
        let span = first.map_or(0.0, |f| last.duration_since(f).as_secs_f64());
        (n, bytes, span, cpu() - c0)
    });
    let tx = UdpSocket::bind("127.0.0.1:0").expect("bind sender");
    let payload = vec![0x5au8; size];
    let c0 = cpu();
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        for _ in 0..64 {
            if tx.send_to(&payload, to).is_ok() {
                sent += 1;
            }
        }
    }
    let sender_cpu = cpu() - c0;
    stop.store(true, Ordering::Relaxed);
    let (n, bytes, span, receiver_cpu) = receiver.join().expect("receiver");
    println!(
        "{{\"size\": {size}, \"sent\": {sent}, \"received\": {n}, \"bytes\": {bytes}, \"seconds\": {span:.6}, \
         \"sender_cpu\": {sender_cpu:.6}, \"receiver_cpu\": {receiver_cpu:.6}}}"
    );
}
