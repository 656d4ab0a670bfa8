//! The contract every benchmark family keeps: its benchmarks, its cases at a
//! scale, whether they run here, how a case runs, and where its cases may be
//! measured. A family is one folder of `bench/` whose `family.rs` implements
//! [`Family`]; the registry is only the list of families and the suites.

use super::{CaseCtx, CaseData, CaseError};
use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::schema::{CaseParams, NoParams};
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::guest::{GuestCase, GuestMeasured};
use serde_json::{Map, Value};

crate::named_enum! {
    /// How thorough a suite is, or a whole run (`--scale`).
    pub enum Scale {
        /// Every family briefly: fewer parameter points, shorter batches
        /// and windows, each stated in the family's parameters.
        Quick = "quick",
        /// The published evaluations' sizes (FWQ 100,000 quanta, the control
        /// loop 3,000 periods, net and blk points of 1,000 ms, a 128 MiB file).
        Full = "full",
        /// The quick points at the smallest sizes that still exercise every
        /// path (FWQ 100 and 1,000 quanta, 50 periods, 30 ms points, a 4 MiB file):
        /// what tests run; its numbers prove mechanics, not costs.
        Test = "test",
    }
}

impl Scale {
    /// Whether the quick parameter points apply (quick and test).
    pub fn brief(self) -> bool {
        self != Scale::Full
    }
}

/// Where a family's cases are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Venue {
    /// In whichever environment the run is in (natively, or inside a guest).
    Anywhere,
    /// By the host, once per environment of the run (boot time): never
    /// inside an environment, never in a round's process.
    FromHost,
    /// Only in the environment of this name, when the run has it (microvm's
    /// exit table belongs to the microvm environment).
    OnlyIn(&'static str),
}

/// Why a benchmark cannot run on this host, in words (`list` shows it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unsupported(pub String);

impl Unsupported {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A group of benchmarks that share code and a table layout. `variant`
/// arguments are the index the family gave a benchmark in [`Family::benchmarks`].
pub trait Family: Sync + 'static {
    /// The family's name, as run documents record it (`ipc`, `syscall`...).
    fn name(&self) -> &'static str;
    /// Its benchmarks, each made with [`Benchmark::new`] from `self`.
    fn benchmarks(&'static self) -> Vec<Benchmark>;
    /// The parameter points of one of its benchmarks at `scale` (by
    /// default one point without parameters, `schema::NoParams`).
    fn cases(&self, _variant: usize, _scale: Scale) -> Vec<Params> {
        vec![NoParams {}.to_params()]
    }
    /// Parameter points beyond [`Family::cases`] that a run measures only
    /// where `--where` names one of their values (another layout of a
    /// file, say); by default none.
    fn offered(&self, _variant: usize) -> Vec<Params> {
        Vec::new()
    }
    /// Whether a benchmark can run on this host at all; the reason when not.
    fn supported(&self, _variant: usize) -> Result<(), Unsupported> {
        Ok(())
    }
    /// Measures one case.
    fn run(&self, variant: usize, ctx: &CaseCtx) -> Result<CaseData, CaseError>;
    /// Measures one case from the host, starting an environment with
    /// `starter` (a family whose cases [`Venue::FromHost`]; the runner calls
    /// it once per environment of the run).
    fn run_from_host(&self, _variant: usize, _starter: &mut dyn Starter) -> Result<FromHost, CaseError> {
        Err(not_from_host(self.name()))
    }
    /// Where its cases are measured.
    fn venue(&self) -> Venue {
        Venue::Anywhere
    }
    /// Whether its cases repeat in every round: batch-sampled costs whose
    /// metrics keep raw samples. Cases measured over a fixed time, or whose
    /// summary is over a distribution (noise, net, blk...), run in the first
    /// round only.
    fn repeats_in_rounds(&self) -> bool {
        false
    }
    /// Whether it does file I/O that needs a disk (not tmpfs) under --scratch.
    fn needs_disk(&self) -> bool {
        false
    }
    /// Seconds a case is planned to take where its parameters fix them (a
    /// number of quanta or periods of a set length); None where the machine
    /// decides (batches doubled to a target). Progress estimates from it.
    fn planned_s(&self, _variant: usize, _params: &Params) -> Option<f64> {
        None
    }
    /// Whether what it measures is time itself (fixed-time windows, noise,
    /// rates over elapsed time, seconds to boot) rather than the cost of an
    /// operation: under QEMU's instruction counter, whose clock advances by
    /// instructions, that time is fictitious and its cases are n/a.
    fn measures_time(&self) -> bool {
        false
    }
    /// What the report shows of it (by default nothing of its own: the
    /// report's generic table).
    fn shows(&self) -> Shows {
        Shows::NOTHING
    }
    /// A case's parameters read as its family's struct (`schema::X::Params`)
    /// and written back, or None where they do not read as it: the tests'
    /// check that every case fits its struct.
    fn params_round_trip(&self, _params: &Params) -> Option<Params> {
        None
    }
    /// The metrics a guest program's answer for one of its cases becomes
    /// ([`GuestCase`]; by default one per-operation metric).
    fn guest_metrics(&self, _variant: usize, case: &GuestCase) -> Result<GuestMeasured, CaseError> {
        case.per_op(GUEST_PER_OP)
    }
}

/// The metric a guest program's case becomes where its family says no other.
const GUEST_PER_OP: &str = crate::families::bench::schema::hermit::PER_OP;

/// How a family makes metrics of a guest program's answer ([`Family::guest_metrics`]).
pub type GuestFn<V> = fn(V, &GuestCase) -> Result<GuestMeasured, CaseError>;

/// `params` read as `T` and written back ([`Family::params_round_trip`]).
pub fn round_trip<T: CaseParams>(params: &Params) -> Option<Params> {
    T::from_params(params).map(|t| t.to_params())
}

/// The answer of a family whose cases are measured inside an environment
/// when asked to measure from the host.
fn not_from_host(name: &str) -> CaseError {
    CaseError::NotApplicable(format!("{name} is measured inside an environment, not from the host"))
}

/// What a family's benchmark is, for people: its name (the id's second
/// part), description, the parameters its cases sweep, and what it needs.
pub type Info = (&'static str, &'static str, &'static str, &'static str);

/// How a family measures a variant from the host ([`Described::run_from_host`]).
pub type FromHostFn<V> = fn(V, &mut dyn Starter) -> Result<FromHost, CaseError>;

/// A family as data: its variants (an enum's `ALL`, or `&[()]` for a family
/// of one benchmark) and what to do with each. Every family of oscycles is
/// one, a `static` in its folder's `family.rs` listed once in the registry;
/// what it leaves out comes from [`Described::BASE`]. A family that needs
/// more implements [`Family`] itself.
pub struct Described<V: 'static> {
    /// The family's name, as run documents record it.
    pub name: &'static str,
    pub variants: &'static [V],
    pub info: fn(V) -> Info,
    /// The parameter points of a variant at a scale (by default one point
    /// without parameters).
    pub cases: fn(V, Scale) -> Vec<Params>,
    /// Points run only where `--where` names them ([`Family::offered`]).
    pub offered: fn(V) -> Vec<Params>,
    pub supported: fn(V) -> Result<(), Unsupported>,
    pub run: fn(V, &CaseCtx) -> Result<CaseData, CaseError>,
    /// How it is measured from the host ([`Venue::FromHost`] families).
    pub run_from_host: Option<FromHostFn<V>>,
    pub venue: Venue,
    pub repeats_in_rounds: bool,
    pub needs_disk: bool,
    /// Seconds a case is planned to take ([`Family::planned_s`]).
    pub planned_s: fn(V, &Params) -> Option<f64>,
    pub measures_time: bool,
    pub shows: Shows,
    /// Its parameters' round trip through its struct: [`round_trip`]`::<schema::X::Params>`.
    pub params: fn(&Params) -> Option<Params>,
    /// The metrics a guest program's answer becomes ([`Family::guest_metrics`]).
    pub guest: GuestFn<V>,
}

impl<V: 'static> Described<V> {
    /// Everything a family need not say: no variants, one case without
    /// parameters, supported, measured anywhere, once, shown by the generic table.
    pub const BASE: Described<V> = Described {
        name: "",
        variants: &[],
        info: |_| ("", "", "", ""),
        cases: |_, _| vec![NoParams {}.to_params()],
        offered: |_| Vec::new(),
        supported: |_| Ok(()),
        run: |_, _| Err(CaseError::Failed("this family measures nothing itself".into())),
        run_from_host: None,
        venue: Venue::Anywhere,
        repeats_in_rounds: false,
        needs_disk: false,
        planned_s: |_, _| None,
        measures_time: false,
        shows: Shows::NOTHING,
        params: |_| None,
        guest: |_, case| case.per_op(GUEST_PER_OP),
    };
}

impl<V: Copy + Sync + 'static> Family for Described<V> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn benchmarks(&'static self) -> Vec<Benchmark> {
        Benchmark::each(self, self.variants, self.info)
    }
    fn cases(&self, variant: usize, scale: Scale) -> Vec<Params> {
        (self.cases)(self.variants[variant], scale)
    }
    fn offered(&self, variant: usize) -> Vec<Params> {
        (self.offered)(self.variants[variant])
    }
    fn supported(&self, variant: usize) -> Result<(), Unsupported> {
        (self.supported)(self.variants[variant])
    }
    fn run(&self, variant: usize, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
        (self.run)(self.variants[variant], ctx)
    }
    fn run_from_host(&self, variant: usize, starter: &mut dyn Starter) -> Result<FromHost, CaseError> {
        match self.run_from_host {
            Some(f) => f(self.variants[variant], starter),
            None => Err(not_from_host(self.name)),
        }
    }
    fn venue(&self) -> Venue {
        self.venue
    }
    fn repeats_in_rounds(&self) -> bool {
        self.repeats_in_rounds
    }
    fn needs_disk(&self) -> bool {
        self.needs_disk
    }
    fn planned_s(&self, variant: usize, params: &Params) -> Option<f64> {
        (self.planned_s)(self.variants[variant], params)
    }
    fn measures_time(&self) -> bool {
        self.measures_time
    }
    fn shows(&self) -> Shows {
        self.shows
    }
    fn params_round_trip(&self, params: &Params) -> Option<Params> {
        (self.params)(params)
    }
    fn guest_metrics(&self, variant: usize, case: &GuestCase) -> Result<GuestMeasured, CaseError> {
        (self.guest)(self.variants[variant], case)
    }
}

/// One start of an environment, timed by the host from the moment it
/// started it.
#[derive(Debug, Clone, PartialEq)]
pub struct Started {
    /// Seconds to the first act of the environment's init (its hello).
    pub to_init_s: f64,
    /// Seconds to its first result.
    pub to_first_result_s: f64,
    /// The faults of starts it repeated before this one came up, if any.
    pub restarted_after: Option<Value>,
}

/// Why a start did not come up.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StartFailed(pub String);

/// What the runner hands a family measured from the host: one environment
/// of the run, to start as often as the case needs.
pub trait Starter {
    /// How many starts a case takes (the run's setting).
    fn starts(&self) -> usize;
    /// Starts the environment (start `i`), times it up to its first
    /// result, and ends it.
    fn start_once(&mut self, i: usize) -> Result<Started, StartFailed>;
}

/// A case measured from the host: its metrics and details, and a note
/// where part of it failed (shown as the case's reason).
#[derive(Debug, Default)]
pub struct FromHost {
    pub metrics: Vec<Metric>,
    pub details: Map<String, Value>,
    pub note: Option<String>,
}

/// One measured primitive: what `list` shows and what a case runs.
#[derive(Clone)]
pub struct Benchmark {
    pub id: String,
    pub family: &'static dyn Family,
    /// Which of its family's benchmarks this is (the family's own index).
    pub variant: usize,
    pub description: &'static str,
    /// The parameters its cases sweep, for people.
    pub parameters: &'static str,
    pub needs: &'static str,
}

impl std::fmt::Debug for Benchmark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Benchmark").field("id", &self.id).field("family", &self.family.name()).field("variant", &self.variant).finish()
    }
}

impl Benchmark {
    pub fn new(
        family: &'static dyn Family,
        variant: usize,
        id: String,
        description: &'static str,
        parameters: &'static str,
        needs: &'static str,
    ) -> Benchmark {
        Benchmark { id, family, variant, description, parameters, needs }
    }

    /// A family's benchmarks from a list of variants (an enum's `ALL`): the
    /// id is `family.name`, the rest comes from `info`.
    pub fn each<T: Copy>(
        family: &'static dyn Family,
        all: &[T],
        info: impl Fn(T) -> (&'static str, &'static str, &'static str, &'static str),
    ) -> Vec<Benchmark> {
        all.iter()
            .enumerate()
            .map(|(i, &v)| {
                let (name, description, parameters, needs) = info(v);
                Benchmark::new(family, i, format!("{}.{name}", family.name()), description, parameters, needs)
            })
            .collect()
    }

    /// The one benchmark of a family that has one: id `family.name`.
    pub fn single(
        family: &'static dyn Family,
        name: &str,
        description: &'static str,
        parameters: &'static str,
        needs: &'static str,
    ) -> Vec<Benchmark> {
        vec![Benchmark::new(family, 0, format!("{}.{name}", family.name()), description, parameters, needs)]
    }

    pub fn supported(&self) -> Result<(), Unsupported> {
        self.family.supported(self.variant)
    }

    pub fn cases(&self, scale: Scale) -> Vec<Params> {
        self.family.cases(self.variant, scale)
    }

    /// Its points that run only where `--where` names them.
    pub fn offered(&self) -> Vec<Params> {
        self.family.offered(self.variant)
    }

    pub fn run(&self, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
        self.family.run(self.variant, ctx)
    }

    pub fn run_from_host(&self, starter: &mut dyn Starter) -> Result<FromHost, CaseError> {
        self.family.run_from_host(self.variant, starter)
    }

    pub fn venue(&self) -> Venue {
        self.family.venue()
    }

    pub fn repeats_in_rounds(&self) -> bool {
        self.family.repeats_in_rounds()
    }

    pub fn needs_disk(&self) -> bool {
        self.family.needs_disk()
    }

    /// Seconds a case of it is planned to take, where its family says.
    pub fn planned_s(&self, params: &Params) -> Option<f64> {
        self.family.planned_s(self.variant, params)
    }

    pub fn measures_time(&self) -> bool {
        self.family.measures_time()
    }

    /// The metrics a guest program's answer for a case of it becomes.
    pub fn guest_metrics(&self, case: &GuestCase) -> Result<GuestMeasured, CaseError> {
        self.family.guest_metrics(self.variant, case)
    }

    /// Whether it belongs to `f` (families are compared by name).
    pub fn is_of(&self, f: &dyn Family) -> bool {
        self.family.name() == f.name()
    }
}
