//! Scale benchmark, not a test (ignored; run it by name, as root for the
//! PostgreSQL half): 10,000 synthetic run documents (100 fleets of 100
//! hosts) imported one by one, as fleet hosts' documents arrive, into
//! SQLite and into a throwaway PostgreSQL; then the by-host report of one
//! fleet (100 hosts) and of the whole store, timed.
//!   cargo test --release --test store_scale -- --ignored --nocapture

use crate::common;
use crate::common::pg;

use oscycles::data::db::{Db, Location};
use oscycles::data::results::RunDoc;
use oscycles::present::report::by;
use std::time::Instant;

const FLEETS: usize = 100;
const HOSTS: usize = 100;

fn docs() -> Vec<RunDoc> {
    let base: RunDoc =
        serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json")).unwrap()).unwrap();
    let mut out = Vec::with_capacity(FLEETS * HOSTS);
    for f in 0..FLEETS {
        for h in 0..HOSTS {
            let mut d = base.clone();
            d.id = format!("scale-f{f:03}-h{h:03}");
            d.fleet = Some(format!("f{f:03}"));
            d.label = Some(format!("h{h:03}"));
            d.started_at = format!("2026-11-{:02}T00:00:00Z", 1 + f % 28);
            let k = 1.0 + (h as f64) / 1000.0;
            for m in d.results.iter_mut().flat_map(|r| r.metrics.iter_mut()) {
                m.summary = m.summary.scaled(k);
            }
            out.push(d);
        }
    }
    out
}

fn bench(name: &str, loc: &Location, docs: &[RunDoc]) {
    let mut db = Db::open(loc).unwrap();
    let t = Instant::now();
    for d in docs {
        db.import(&[(d, "scale".into())]).unwrap();
    }
    let import = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let again = db.import(&[(&docs[0], "scale".into())]).unwrap();
    assert!(again.added.is_empty());
    let reimport = t.elapsed().as_secs_f64();
    let policy = oscycles::analysis::uncertainty::verdict::Thresholds::default();
    let t = Instant::now();
    let fleet = db.documents(Some("f042")).unwrap();
    let query = t.elapsed().as_secs_f64();
    let r = by::build(&fleet, by::By::Host, Some("h000")).unwrap();
    let text = by::render(&r, &policy);
    let fleet_report = t.elapsed().as_secs_f64();
    assert_eq!(r.sets[0].columns.len(), HOSTS);
    let t = Instant::now();
    let all = db.documents(None).unwrap();
    let all_query = t.elapsed().as_secs_f64();
    let r = by::build(&all, by::By::Host, Some("h000")).unwrap();
    let _ = by::render(&r, &policy);
    let all_report = t.elapsed().as_secs_f64();
    println!(
        "{name}: import of {} documents one per transaction {import:.2} s ({:.2} ms each); re-import of one {:.1} ms; \
         report --by host --fleet (100 hosts, 100 documents): query {:.1} ms, total {:.1} ms ({} bytes of tables); \
         whole store (10,000 documents, 100 columns): query {all_query:.2} s, total {all_report:.2} s",
        docs.len(),
        import * 1e3 / docs.len() as f64,
        reimport * 1e3,
        query * 1e3,
        fleet_report * 1e3,
        text.len()
    );
}

#[test]
#[ignore = "a benchmark: minutes, and root for PostgreSQL"]
fn import_and_report_at_scale() {
    let docs = docs();
    let dir = common::tempdir("scale");
    bench("SQLite", &Location::Sqlite(dir.join("scale.sqlite")), &docs);
    let server = pg::Postgres::start();
    bench("PostgreSQL", &Location::Postgres(server.url.clone()), &docs);
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
}
