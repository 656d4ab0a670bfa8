//! One operation prepared to run `n` times.

use super::forker::Forker;
use super::helper::{DYNAMIC_PROGRAM, Helper, is_dynamic_elf};
use super::*;

/// Runs one operation `n` times.
pub struct Prepared {
    op: ProcOp,
    forker: Option<Forker>,
    /// The tiny ELF the exec kinds run (kept until the forker is gone).
    _tiny: Option<Helper>,
}

impl Prepared {
    /// `touch` applies to the static fork only.
    pub fn new(op: ProcOp, scratch: &Path, touch: Touch) -> io::Result<Prepared> {
        let Some(fop) = op.forker_op() else {
            return Ok(Prepared { op, forker: None, _tiny: None });
        };
        let tiny = (fop.target == Target::Tiny).then(|| Helper::create(scratch)).transpose()?;
        let dynamic = CString::new(DYNAMIC_PROGRAM).expect("no NUL");
        let target = match fop.target {
            Target::None => None,
            Target::Dynamic if std::fs::read(DYNAMIC_PROGRAM).is_ok_and(|b| is_dynamic_elf(&b)) => Some(dynamic.as_c_str()),
            Target::Dynamic => return Err(io::Error::new(io::ErrorKind::NotFound, format!("no dynamically linked {DYNAMIC_PROGRAM}"))),
            Target::Tiny => tiny.as_ref().map(|h| h.c_path.as_c_str()),
        };
        let touch = if op == ProcOp::Fork { touch } else { Touch::default() };
        let forker = Forker::start(scratch, fop, target, touch)?;
        Ok(Prepared { op, forker: Some(forker), _tiny: tiny })
    }

    pub fn run(&mut self, n: u64) -> io::Result<()> {
        if let Some(f) = self.forker.as_mut() {
            return f.run(n);
        }
        // The argument is read once, as lmbench reads its cookie.
        let r = std::hint::black_box(1);
        let every = crate::measure::watchdog::POLL_EVERY;
        let mut done = 0;
        while done < n {
            crate::measure::watchdog::check().map_err(|_| io::Error::from_raw_os_error(libc::EINTR))?;
            let k = (n - done).min(every);
            match self.op {
                ProcOp::Thread => {
                    for _ in 0..k {
                        std::thread::spawn(|| {}).join().map_err(|_| io::Error::other("thread panicked"))?;
                    }
                }
                // lmbench's loop: nothing but the call and the count.
                _ => crate::measure::arch::procedure_calls(k, r),
            }
            done += k;
        }
        Ok(())
    }

    /// The size of the process the operations are created from; None for
    /// those made in this process.
    pub fn forker_size(&mut self) -> Option<io::Result<ProcessSize>> {
        self.forker.as_mut().map(Forker::size)
    }
}
