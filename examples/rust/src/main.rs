//! A pairbench worker in Rust, standard library only: it speaks the protocol of
//! pairbench's `docs/worker-protocol.md` over the two pipes pairbench hands it.
//!
//!     cargo build --release
//!     pairbench bench target/release/pairbench-worker-example
//!
//! To compare two versions, build each into its own binary (copy it aside, or
//! use two `--target-dir`s) and run `pairbench bench ./worker-old ./worker-new`.
//! `--list` prints the benchmark names.

use std::fs::File;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::FromRawFd;
use std::process::exit;
use std::time::Instant;

const FDS_VARIABLE: &str = "PAIRBENCH_WORKER_FDS";
const MAX_LINE_BYTES: usize = 4096; // a protocol line with its newline
const MAX_ITERATIONS: u64 = 1 << 40;

// ------------------------------------------------------------------ benchmarks

/// One benchmark: `run(iterations)` does its untimed setup, then returns what
/// [`measure`] says of the timed loop (or an error message).
struct Benchmark {
    name: String,
    run: Box<dyn Fn(u64) -> Result<Sample, String>>,
}

fn benchmarks() -> Vec<Benchmark> {
    let mut all = vec![Benchmark {
        name: "checksum".into(),
        run: Box::new(|iterations| {
            let data: Vec<u8> = (0..64 * 1024u32).map(|i| (i * 131 + 7) as u8).collect(); // setup
            Ok(measure(iterations, || {
                black_box(fnv1a(black_box(&data)));
            }))
        }),
    }];
    // One base name, several sizes: pairbench shows `n` as a parameter.
    for n in [1_000u64, 100_000] {
        all.push(Benchmark {
            name: format!("sum[n={n}]"),
            run: Box::new(move |iterations| {
                Ok(measure(iterations, || {
                    black_box((0..black_box(n)).map(|i| i ^ (i >> 3)).sum::<u64>());
                }))
            }),
        });
    }
    all.push(Benchmark {
        name: "sort[n=1000]".into(),
        run: Box::new(|iterations| {
            let input: Vec<u32> = (0..1000u32)
                .map(|i| i.wrapping_mul(2_654_435_761))
                .collect();
            let mut work = input.clone();
            Ok(measure(iterations, || {
                work.copy_from_slice(&input); // each iteration sorts the same shuffled data
                work.sort_unstable();
                black_box(&work);
            }))
        }),
    });
    all
}

fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

// ------------------------------------------------------------------- measuring

/// An `ok` reply's fields; the thread's usage is absent where it cannot be read.
struct Sample {
    ns: u64,
    usage: Option<(Usage, Usage)>, // before and after the loop
    cpu_ns: Option<u64>,           // the thread's CPU time over the loop
    maxrss_kib: Option<u64>,
}

/// Runs `body` `iterations` times between two readings of the monotonic clock;
/// the thread's CPU clock is read just outside them, its resource usage just
/// outside those.
fn measure(iterations: u64, mut body: impl FnMut()) -> Sample {
    let before = thread_usage();
    let cpu_start = thread_cpu_ns();
    let start = Instant::now();
    for _ in 0..iterations {
        body();
    }
    let elapsed = start.elapsed();
    let after = thread_usage(); // reads the CPU clock first
    Sample {
        ns: u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX >> 1),
        usage: before.zip(after),
        cpu_ns: cpu_start.zip(after).map(|(start, a)| a.cpu_ns.saturating_sub(start)),
        maxrss_kib: process_maxrss_kib(),
    }
}

#[derive(Clone, Copy)]
struct Usage {
    cpu_ns: u64, // the thread's CPU clock, read just before the rest
    sys_ns: u64,
    vcs: u64,
    ivcs: u64,
    minflt: u64,
    majflt: u64,
}

/// `struct rusage` as Linux lays it out where `long` and `time_t` are 64 bits
/// (x86_64, aarch64): two `struct timeval`s, then fourteen `long`s.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod rusage {
    #[repr(C)]
    #[derive(Default)]
    pub struct Timeval {
        pub sec: i64,
        pub usec: i64,
    }

    #[repr(C)]
    #[derive(Default)]
    pub struct Rusage {
        pub utime: Timeval,
        pub stime: Timeval,
        pub maxrss: i64,
        pub ixrss: i64,
        pub idrss: i64,
        pub isrss: i64,
        pub minflt: i64,
        pub majflt: i64,
        pub nswap: i64,
        pub inblock: i64,
        pub oublock: i64,
        pub msgsnd: i64,
        pub msgrcv: i64,
        pub nsignals: i64,
        pub nvcsw: i64,
        pub nivcsw: i64,
    }

    pub const RUSAGE_SELF: i32 = 0;
    pub const RUSAGE_THREAD: i32 = 1;
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

    #[repr(C)]
    #[derive(Default)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }

    extern "C" {
        fn getrusage(who: i32, usage: *mut Rusage) -> i32;
        fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
    }

    /// The CPU time this thread has run, ns. Reading it also brings the
    /// kernel's account of the thread up to date: `getrusage(RUSAGE_THREAD)`
    /// alone returns the runtime as of the thread's last tick or context
    /// switch, which around a ~1 ms sample misses most of it.
    pub fn thread_cpu_ns() -> Option<u64> {
        let mut time = Timespec::default();
        // SAFETY: `time` is a valid, writable struct of the layout the kernel fills.
        if unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut time) } != 0 {
            return None;
        }
        Some(u64::try_from(time.sec).ok()? * 1_000_000_000 + u64::try_from(time.nsec).ok()?)
    }

    pub fn read(who: i32) -> Option<Rusage> {
        let mut usage = Rusage::default();
        // SAFETY: `usage` is a valid, writable struct of the layout the kernel fills.
        (unsafe { getrusage(who, &mut usage) } == 0).then_some(usage)
    }
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn thread_usage() -> Option<Usage> {
    let nonneg = |v: i64| u64::try_from(v).unwrap_or(0);
    let ns = |t: &rusage::Timeval| nonneg(t.sec) * 1_000_000_000 + nonneg(t.usec) * 1_000;
    let cpu_ns = rusage::thread_cpu_ns()?; // first, so that getrusage is up to date
    let u = rusage::read(rusage::RUSAGE_THREAD)?;
    Some(Usage {
        cpu_ns,
        sys_ns: ns(&u.stime),
        vcs: nonneg(u.nvcsw),
        ivcs: nonneg(u.nivcsw),
        minflt: nonneg(u.minflt),
        majflt: nonneg(u.majflt),
    })
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn thread_cpu_ns() -> Option<u64> {
    rusage::thread_cpu_ns()
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn process_maxrss_kib() -> Option<u64> {
    rusage::read(rusage::RUSAGE_SELF).map(|u| u64::try_from(u.maxrss).unwrap_or(0))
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn thread_usage() -> Option<Usage> {
    None // the struct layout above is only known to be right there; `ns` suffices
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn thread_cpu_ns() -> Option<u64> {
    None
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn process_maxrss_kib() -> Option<u64> {
    None
}

fn format_ok(sample: &Sample) -> String {
    let mut line = format!("ok ns={}", sample.ns);
    if let (Some((b, a)), Some(cpu)) = (sample.usage, sample.cpu_ns) {
        let d = |after: u64, before: u64| after.saturating_sub(before);
        // the total is the thread CPU clock's (exact); the system part is
        // getrusage's tick-sampled share, at most the total; user the rest
        let sys = d(a.sys_ns, b.sys_ns).min(cpu);
        line += &format!(
            " user_ns={} sys_ns={} vcs={} ivcs={} minflt={} majflt={}",
            cpu - sys,
            sys,
            d(a.vcs, b.vcs),
            d(a.ivcs, b.ivcs),
            d(a.minflt, b.minflt),
            d(a.majflt, b.majflt)
        );
    }
    if let Some(kib) = sample.maxrss_kib {
        line += &format!(" maxrss_kib={kib}");
    }
    line
}

// -------------------------------------------------------------------- protocol

fn die(message: &str) -> ! {
    eprintln!("pairbench worker: {message}");
    exit(2)
}

/// `error MESSAGE`, with anything but printable ASCII shown as `\xNN` so that
/// text from a request cannot break the reply line.
fn format_error(message: &str) -> String {
    let mut line = String::from("error ");
    for byte in message.bytes().take(1000) {
        if byte.is_ascii_graphic() || byte == b' ' {
            line.push(char::from(byte));
        } else {
            line += &format!("\\x{byte:02x}");
        }
    }
    line
}

/// The reply to one request line (without its newline); `None` for `quit`.
fn reply(line: &[u8], benchmarks: &[Benchmark]) -> Option<String> {
    let text = String::from_utf8_lossy(line);
    let words: Vec<&str> = text.split(' ').collect();
    Some(match words.as_slice() {
        ["quit"] => return None,
        ["list"] => {
            let mut lines = vec![format!("benchmarks {}", benchmarks.len())];
            lines.extend(benchmarks.iter().map(|b| format!("benchmark {}", b.name)));
            lines.join("\n")
        }
        ["run", name, count] => match benchmarks.iter().find(|b| b.name == *name) {
            None => format_error(&format!("no such benchmark: {name}")),
            Some(benchmark) => match parse_iterations(count) {
                None => format_error(&format!(
                    "the iteration count must be a whole number from 1 to 2^40, not {count}"
                )),
                Some(iterations) => match (benchmark.run)(iterations) {
                    Ok(sample) => format_ok(&sample),
                    Err(message) => format_error(&message),
                },
            },
        },
        _ => format_error(&format!("unknown request: {text}")),
    })
}

/// 1 to 19 decimal digits (no sign: `u64::from_str` would take a `+`) within 1..=2^40.
fn parse_iterations(text: &str) -> Option<u64> {
    if text.is_empty() || text.len() > 19 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: u64 = text.parse().ok()?;
    (1..=MAX_ITERATIONS).contains(&value).then_some(value)
}

/// One descriptor of `R,W`, made close-on-exec: `try_clone` duplicates it with
/// `F_DUPFD_CLOEXEC`, and dropping the original closes the inheritable number.
fn take_fd(text: &str) -> File {
    let fd: i32 = match text.parse() {
        Ok(fd) if fd >= 0 && text.bytes().all(|b| b.is_ascii_digit()) => fd,
        _ => die(&format!(
            "{FDS_VARIABLE} must be R,W (two file descriptors in decimal)"
        )),
    };
    // `from_raw_fd` requires an open descriptor that nothing else owns.
    if std::fs::symlink_metadata(format!("/proc/self/fd/{fd}")).is_err() {
        die(&format!(
            "{FDS_VARIABLE} names {fd}, which is not an open file descriptor"
        ));
    }
    // SAFETY: the descriptor is open, and pairbench gave it to this process alone.
    let inherited = unsafe { File::from_raw_fd(fd) };
    inherited
        .try_clone()
        .unwrap_or_else(|e| die(&format!("cannot duplicate descriptor {fd}: {e}")))
}

fn open_pipes() -> (File, File) {
    let program = std::env::args().next().unwrap_or_else(|| "worker".into());
    let Ok(fds) = std::env::var(FDS_VARIABLE) else {
        eprintln!(
            "{program} is a pairbench worker: run its benchmarks with `pairbench bench {program}` \
             (`{program} --list` names them)"
        );
        exit(2)
    };
    let Some((r, w)) = fds.split_once(',') else {
        die(&format!(
            "{FDS_VARIABLE} must be R,W (two file descriptors in decimal)"
        ))
    };
    if r == w {
        die(&format!("{FDS_VARIABLE} names the same descriptor twice"));
    }
    let pipes = (take_fd(r), take_fd(w));
    std::env::remove_var(FDS_VARIABLE); // nothing the benchmarks start should see it
    pipes
}

fn main() {
    let benchmarks = benchmarks();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {}
        [flag] if flag == "--list" => {
            benchmarks.iter().for_each(|b| println!("{}", b.name));
            return;
        }
        [other, ..] => die(&format!(
            "unknown argument (the only one is --list): {other}"
        )),
    }
    let (requests, mut replies) = open_pipes();
    let mut send = |text: &str| {
        // write_all retries short writes and EINTR; Rust ignores SIGPIPE, so a
        // vanished pairbench is an error here rather than a kill.
        if let Err(e) = replies.write_all(format!("{text}\n").as_bytes()) {
            die(&format!("cannot write a reply (pairbench is gone?): {e}"));
        }
    };
    send("pairbench-worker 1");
    let mut requests = BufReader::new(requests);
    let mut line = Vec::with_capacity(MAX_LINE_BYTES);
    loop {
        line.clear();
        // At most one line's worth: a longer request cannot be trusted.
        let limited = requests
            .by_ref()
            .take(MAX_LINE_BYTES as u64)
            .read_until(b'\n', &mut line);
        match limited {
            Err(e) => die(&format!("cannot read requests: {e}")),
            Ok(0) => return, // pairbench has gone: end of file
            Ok(_) if line.last() != Some(&b'\n') => match line.len() {
                MAX_LINE_BYTES => die("a request is longer than 4096 bytes"),
                _ => die("the request pipe ended inside a line"),
            },
            Ok(_) => match reply(&line[..line.len() - 1], &benchmarks) {
                Some(text) => send(&text),
                None => return, // quit
            },
        }
    }
}
