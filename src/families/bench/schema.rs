//! The typed contract between measuring and reporting, whole: its core
//! ([`crate::data::schema_core`]: what parameters are, how ids are formed, an
//! environment's and a condition's facts) and every family's section, each
//! kept in its family's folder (`bench/<family>/schema.rs`) and named here
//! by the family's name (`schema::ipc`) for the report's convenience (a new
//! family's section is reached at its own path just as well). The cases write through these types
//! and the report reads through them; neither spells a key, a metric name or
//! an id by hand.
//!
//! serde_json's `Map` is a `BTreeMap` here (no `preserve_order`): a case's
//! parameters serialise in key order whatever the field order, so a struct's
//! JSON is byte for byte what the cases wrote as maps.

pub use crate::data::schema_core::*;
pub use crate::families::bench::aim::schema as aim;
pub use crate::families::bench::alloc::schema as alloc;
pub use crate::families::bench::blk::schema as blk;
pub use crate::families::bench::boot::schema as boot;
pub use crate::families::bench::bw::schema as bw;
pub use crate::families::bench::control::schema as control;
pub use crate::families::bench::ctx::schema as ctx;
pub use crate::families::bench::hermit::schema as hermit;
pub use crate::families::bench::ipc::schema as ipc;
pub use crate::families::bench::memcpy::schema as memcpy;
pub use crate::families::bench::microvm::schema as microvm;
pub use crate::families::bench::net::schema as net;
pub use crate::families::bench::noise::schema as noise;
pub use crate::families::bench::packet_stream::schema as packet_stream;
pub use crate::families::bench::pagefault::schema as pagefault;
pub use crate::families::bench::parallel::schema as parallel;
pub use crate::families::bench::proc::schema as proc;
pub use crate::families::bench::stream::schema as stream;
pub use crate::families::bench::syscall::schema as syscall;

#[cfg(test)]
mod tests {
    use super::*;

    /// A case's parameters checked against its family's struct: the map it
    /// reads as and writes back, or None where the family is unknown or the map
    /// does not fit (the tests' check that every case fits its struct). The
    /// families are the registry's (the one list, `registry::FAMILIES`).
    fn round_trip(family: &str, p: &Params) -> Option<Params> {
        crate::run::registry::find_family(family)?.params_round_trip(p)
    }

    /// The JSON a struct writes, and that the JSON reads back as the struct.
    fn writes<T: CaseParams + PartialEq + std::fmt::Debug>(t: T, json: &str) {
        let p = t.to_params();
        assert_eq!(serde_json::to_string(&p).unwrap(), json);
        let back: Params = serde_json::from_str(json).unwrap();
        assert_eq!(T::from_params(&back), Some(t));
    }

    #[test]
    fn each_family_writes_the_keys_the_cases_write() {
        use crate::measure::placement::{Cores, Space};
        writes(syscall::Params {}, "{}");
        writes(ipc::Params { words: 8, space: Space::Inter, cores: Cores::Cross }, r#"{"cores":"cross","space":"inter","words":8}"#);
        writes(ctx::Params { procs: 2, ws_kib: 16 }, r#"{"procs":2,"ws_kib":16}"#);
        writes(proc::Params::NONE, "{}");
        writes(proc::Params::touched(0, true), r#"{"touched_mib":0}"#);
        writes(proc::Params::touched(64, true), r#"{"thp":true,"touched_mib":64}"#);
        writes(bw::Params { cores: Some(Cores::Same), file_writes: None }, r#"{"cores":"same"}"#);
        writes(bw::Params { cores: None, file_writes: None }, "{}");
        writes(bw::Params { cores: None, file_writes: Some(bw::FileWrites::LMBENCH) }, r#"{"file_writes":"8k"}"#);
        writes(pagefault::Params { file_writes: None }, "{}");
        writes(pagefault::Params { file_writes: Some(pagefault::FileWrites::Large) }, r#"{"file_writes":"1m"}"#);
        writes(aim::Params { tasks: 4 }, r#"{"tasks":4}"#);
        writes(hermit::Params {}, "{}");
        writes(
            stream::Params { threads: stream::Threads::PerCpu, array_bytes: Some(64 << 20) },
            r#"{"array_bytes":67108864,"threads":"per-cpu"}"#,
        );
        writes(stream::Params { threads: stream::Threads::Single, array_bytes: None }, r#"{"threads":"single"}"#);
        writes(memcpy::Params { bytes: 4096, src_off: 1, dst_off: 0 }, r#"{"bytes":4096,"dst_off":0,"src_off":1}"#);
        writes(
            alloc::Params { live: 100, bytes: 64, fill: Some(alloc::Fill::NearlyFull) },
            r#"{"bytes":64,"fill":"nearly-full","live":100}"#,
        );
        writes(alloc::Params { live: 25, bytes: 1500, fill: None }, r#"{"bytes":1500,"live":25}"#);
        let ps = packet_stream::Params {
            mode: packet_stream::Mode::RpcUnix,
            batch: 1,
            depth: 1,
            bytes: 64,
            notify: packet_stream::Notify::Kernel,
        };
        writes(ps, r#"{"batch":1,"bytes":64,"depth":1,"mode":"rpc-unix","notify":"-"}"#);
        writes(parallel::Params { instances: 2 }, r#"{"instances":2}"#);
        writes(noise::Params { quantum_us: 14, samples: 10_000 }, r#"{"quantum_us":14,"samples":10000}"#);
        writes(control::Params { samples: 300 }, r#"{"samples":300}"#);
        writes(net::Params { path: net::Path::Veth, bytes: 1450 }, r#"{"bytes":1450,"path":"veth"}"#);
        writes(blk::Params { mode: blk::Mode::Direct, block: 4096 }, r#"{"block":4096,"mode":"direct"}"#);
        writes(boot::Params {}, "{}");
        writes(microvm::Params { cpl: 3 }, r#"{"cpl":3}"#);
    }

    #[test]
    fn a_missing_renamed_or_foreign_key_reads_as_none() {
        let map = |json: &str| serde_json::from_str::<Params>(json).unwrap();
        assert_eq!(ipc::Params::from_params(&map(r#"{"words":1,"space":"inter"}"#)), None, "missing");
        assert_eq!(ipc::Params::from_params(&map(r#"{"word":1,"space":"inter","cores":"same"}"#)), None, "renamed");
        assert_eq!(ipc::Params::from_params(&map(r#"{"words":1,"space":"outer","cores":"same"}"#)), None, "unknown value");
        assert_eq!(ipc::Params::from_params(&map(r#"{"words":"1","space":"inter","cores":"same"}"#)), None, "wrong type");
        assert_eq!(bw::Params::from_params(&map(r#"{"core":"same"}"#)), None, "an optional key renamed");
        assert_eq!(syscall::Params::from_params(&map(r#"{"words":1}"#)), None, "a key where there are none");
        assert_eq!(round_trip("nosuch", &Params::new()), None);
    }

    #[test]
    fn every_case_of_every_benchmark_fits_its_family_struct() {
        use crate::run::registry::{Scale, benchmarks};
        for b in benchmarks() {
            assert!(crate::run::registry::find_family(b.family.name()).is_some(), "{} is a family here", b.family.name());
            assert_eq!(member(b.family.name(), &b.id), b.id.trim_start_matches(&format!("{}.", b.family.name())));
            for p in [Scale::Quick, Scale::Full, Scale::Test].into_iter().flat_map(|s| b.cases(s)) {
                assert_eq!(round_trip(b.family.name(), &p).as_ref(), Some(&p), "{} {p:?}", b.id);
            }
        }
    }

    #[test]
    fn name_lists_match_the_benchmarks() {
        let names = |family: &str| -> Vec<String> {
            crate::run::registry::benchmarks().iter().filter(|b| b.family.name() == family).map(|b| b.id.clone()).collect()
        };
        assert_eq!(names(memcpy::FAMILY), memcpy::IMPLS.map(memcpy::id));
        assert_eq!(names(alloc::FAMILY), alloc::KINDS.map(alloc::id));
        assert_eq!(names(parallel::FAMILY), parallel::OPS.map(parallel::id));
        assert_eq!(names(blk::FAMILY), blk::OPS.map(blk::id));
        assert_eq!(names(ipc::FAMILY), ipc::Mechanism::ALL.map(ipc::Mechanism::id));
        assert_eq!(crate::families::bench::aim::MAX_TASKS, aim::MAX_TASKS);
        assert_eq!(ipc::name_of("ipc.unix-stream"), "unix-stream");
        assert_eq!(ipc::name_of("syscall.getpid"), "syscall.getpid");
        assert_eq!(packet_stream::id(packet_stream::SWEEP), "packet-stream.sweep");
        // The registry's families (the one list) have one name each.
        let mut names: Vec<&str> = crate::run::registry::FAMILIES.iter().map(|f| f.name()).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
    }
}
