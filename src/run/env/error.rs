//! Why an environment could not be used or brought no results back: one
//! enum for what every environment shares, each environment's own errors
//! wrapped as they are.

use super::options::NoSuchKernel;

/// Why an environment could not be used or did not bring results back,
/// each a sentence a user reads (a case's n/a reason, a usage error).
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    /// An environment that runs on KVM, without a usable /dev/kvm.
    #[error("{env}: {source}")]
    NoKvm { env: &'static str, source: crate::families::vmm::VmError },
    #[error(transparent)]
    NoSuchKernel(#[from] NoSuchKernel),
    /// Its own options, as clap read them back.
    #[error(transparent)]
    Options(#[from] clap::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The child was killed: `why` is a timeout or an interrupt.
    #[error("{env} {why}")]
    Stopped { env: &'static str, why: String },
    /// A guest killed, with the end of its console (and a hint, if any).
    #[error("{env} {why}{hint}; last output: {tail}")]
    Ended { env: &'static str, why: String, hint: &'static str, tail: String },
    /// What the child sent as its error.
    #[error("{env}: {message}")]
    Child { env: &'static str, message: String },
    #[error("{env} ended ({status}) without sending results; last output: {tail}")]
    NoResults { env: &'static str, status: String, tail: String },
    #[error("{env}: the results do not parse: {source}")]
    BadResults { env: &'static str, source: serde_json::Error },
    #[error("{env} never said hello; last output: {tail}")]
    NoHello { env: &'static str, tail: String },
    /// The cases of a start could not be planned.
    #[error("{env}: planning its start: {why}")]
    Plan { env: &'static str, why: String },
    #[error("{env} sent no result; last output: {tail}")]
    NoResult { env: &'static str, tail: String },
    /// An environment that runs x86 programs oscycles builds (a guest, a
    /// QEMU plugin), in an oscycles built for another architecture.
    #[error("{env}: n/a in oscycles for {arch}: {why}")]
    X86Only { env: &'static str, arch: &'static str, why: &'static str },
    /// An environment's own error (the enum of its file), as it is.
    #[error(transparent)]
    Own(Box<dyn std::error::Error + Send + Sync>),
}

/// An environment's own error: `?` wraps it into an [`EnvError`] as it is
/// (its message unchanged, [`downcast_ref`](std::error::Error::downcast_ref)
/// gives it back), so that no central enum lists the environments. Its file
/// says `impl OwnError for ItsError {}`.
pub trait OwnError: std::error::Error + Send + Sync + 'static {}

impl<E: OwnError> From<E> for EnvError {
    fn from(e: E) -> EnvError {
        EnvError::Own(Box::new(e))
    }
}

impl EnvError {
    /// An I/O error with what was being done (`creating PATH`...).
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> EnvError {
        let what = what.into();
        move |source| EnvError::Io { what, source }
    }

    /// `env` needs what build.rs builds for an x86-64 oscycles only (`why`
    /// says what): the reason it is n/a on this architecture, if it is.
    pub fn x86_only(env: &'static str, why: &'static str) -> Result<(), EnvError> {
        if cfg!(target_arch = "x86_64") { Ok(()) } else { Err(EnvError::X86Only { env, arch: std::env::consts::ARCH, why }) }
    }

    /// `env` needs /dev/kvm: the reason it cannot have it, if it cannot.
    pub fn kvm_usable(env: &'static str) -> Result<(), EnvError> {
        crate::families::vmm::kvm_usable().map_err(|source| EnvError::NoKvm { env, source })
    }
}
