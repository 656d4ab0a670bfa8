//! A periodic control loop, as the L4Re "Detaching Linux threads" slides measured it: a period with absolute
//! deadlines; each iteration waits for its deadline and records how far
//! from it the thread actually woke. Three ways to wait: clock_nanosleep
//! with TIMER_ABSTIME, an absolute timerfd, and busy-waiting on the TSC. An
//! iteration that wakes after the next deadline is an overrun; the schedule
//! stays on its absolute grid (missed periods are skipped, not shifted).

pub mod family;
pub mod schema;
pub mod table;

use std::io;

crate::named_enum! {
    pub enum Wait {
        Nanosleep = "nanosleep",
        Timerfd = "timerfd",
        BusyTsc = "busy-tsc",
    }
}

impl Wait {
    pub fn description(self) -> &'static str {
        match self {
            Wait::Nanosleep => "1000 us control loop, clock_nanosleep(TIMER_ABSTIME) to each deadline",
            Wait::Timerfd => "1000 us control loop, an absolute timerfd armed for each deadline",
            Wait::BusyTsc => "1000 us control loop, busy-waiting on the TSC for each deadline",
        }
    }
}

#[derive(Debug, Clone)]
pub struct LoopResult {
    /// Wake time minus deadline, TSC cycles (negative: early).
    pub deviations: Vec<i64>,
    pub overruns: u64,
    /// Deadlines passed unmet after each iteration (its work or its wake-up ran late).
    pub overruns_after: Vec<u32>,
}

fn mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn timespec(ns: u64) -> libc::timespec {
    libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long }
}

/// Waits for one deadline the way `wait` says; returns how late it woke, in
/// TSC cycles (negative: early).
#[inline]
fn wait_until(wait: Wait, tfd: Option<i32>, deadline_ns: u64, deadline_tsc: u64, cycles_per_ns: f64) -> io::Result<f64> {
    Ok(match wait {
        Wait::Nanosleep => {
            let ts = timespec(deadline_ns);
            loop {
                // SAFETY: ts is a valid timespec; no remainder is needed with TIMER_ABSTIME.
                let rc = unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
                if rc == 0 {
                    break;
                }
                if rc != libc::EINTR || crate::measure::watchdog::check().is_err() {
                    return Err(io::Error::from_raw_os_error(rc));
                }
            }
            (mono_ns() as i64 - deadline_ns as i64) as f64 * cycles_per_ns
        }
        Wait::Timerfd => {
            let fd = tfd.expect("created above");
            let its = libc::itimerspec { it_interval: timespec(0), it_value: timespec(deadline_ns) };
            let mut expirations = 0u64;
            // SAFETY: its is valid; the read fills an 8-byte counter.
            unsafe {
                if libc::timerfd_settime(fd, libc::TFD_TIMER_ABSTIME, &its, std::ptr::null_mut()) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::read(fd, (&mut expirations as *mut u64).cast(), 8) != 8 {
                    return Err(io::Error::last_os_error());
                }
            }
            (mono_ns() as i64 - deadline_ns as i64) as f64 * cycles_per_ns
        }
        Wait::BusyTsc => {
            let mut now = crate::measure::arch::rdtscp();
            while now < deadline_tsc {
                crate::measure::arch::spin_hint();
                now = crate::measure::arch::rdtscp();
            }
            (now - deadline_tsc) as f64
        }
    })
}

/// Runs `iterations` periods. `work(i)` runs after each wake-up (the
/// control law; tests inject an overrun there).
pub fn run(wait: Wait, period_ns: u64, iterations: usize, tsc_hz: f64, mut work: impl FnMut(usize)) -> io::Result<LoopResult> {
    let cycles_per_ns = tsc_hz / 1e9;
    let mut deviations = vec![0i64; iterations];
    let mut overruns_after = vec![0u32; iterations];
    let mut overruns = 0u64;
    let tfd = if wait == Wait::Timerfd {
        // SAFETY: timerfd_create takes no pointers; the result is checked.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Some(fd)
    } else {
        None
    };
    let start_ns = mono_ns() + period_ns;
    let start_tsc = crate::measure::arch::rdtscp() + (period_ns as f64 * cycles_per_ns) as u64;
    let mut k = 0u64; // index of the next deadline on the grid
    let result: io::Result<()> = (|| {
        for (i, (dev, missed)) in deviations.iter_mut().zip(overruns_after.iter_mut()).enumerate() {
            let deadline_ns = start_ns + k * period_ns;
            let deadline_tsc = start_tsc + (k as f64 * period_ns as f64 * cycles_per_ns) as u64;
            let woke_tsc_dev = wait_until(wait, tfd, deadline_ns, deadline_tsc, cycles_per_ns)?;
            *dev = woke_tsc_dev as i64;
            work(i);
            // The next deadline on the grid that is still ahead; each one
            // passed while working or sleeping is an overrun.
            k += 1;
            let now_ns = mono_ns();
            while start_ns + k * period_ns <= now_ns {
                overruns += 1;
                *missed += 1;
                k += 1;
            }
        }
        Ok(())
    })();
    if let Some(fd) = tfd {
        // SAFETY: closing the timerfd created above, once.
        unsafe { libc::close(fd) };
    }
    result?;
    Ok(LoopResult { deviations, overruns, overruns_after })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::named::Named;

    #[test]
    fn an_injected_overrun_is_counted_in_every_wait_mode() {
        let hz = crate::measure::clock::calibrate_tsc(1, std::time::Duration::from_millis(20)).tsc_hz;
        for &wait in Wait::ALL {
            // Iteration 5 works for 3.5 periods: at least deadlines 6, 7 and 8
            // pass unmet (more if this shared machine also woke it late).
            let r = run(wait, 1_000_000, 12, hz, |i| {
                if i == 5 {
                    std::thread::sleep(std::time::Duration::from_micros(3_500));
                }
            })
            .unwrap();
            assert!(r.overruns_after[5] >= 3, "{wait:?}: {:?}", r.overruns_after);
            assert_eq!(r.overruns, r.overruns_after.iter().map(|&m| u64::from(m)).sum::<u64>(), "{wait:?}");
            assert_eq!(r.deviations.len(), 12);
        }
    }

    #[test]
    fn a_quiet_loop_wakes_near_its_deadlines() {
        let hz = crate::measure::clock::calibrate_tsc(1, std::time::Duration::from_millis(20)).tsc_hz;
        let r = run(Wait::BusyTsc, 200_000, 20, hz, |_| {}).unwrap();
        // Busy waiting never wakes before the deadline.
        assert!(r.deviations.iter().all(|&d| d >= 0));
    }
}
