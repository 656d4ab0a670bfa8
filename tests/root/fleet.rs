//! `oscycles fleet run` with Ansible: on local connections (no root, no
//! ssh), without Ansible (exit 2), and end to end (root): three hosts as
//! network namespaces each with its own sshd on a bridge of veth pairs, an
//! inventory entry where nothing listens, one whose run fails, and a
//! throwaway PostgreSQL as the store. Everything a test starts is stopped
//! by a Drop guard, also when it fails.

use crate::common;
use crate::common::pg;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

fn oscycles(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oscycles")).env("COLUMNS", "1000").args(args).output().expect("the binary runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The tiny run every host makes.
const RUN: [&str; 6] = ["--batches", "2", "--batch-ms", "0.05", "--rounds", "2"];

/// `fleet run` with the inventory, the store, into `out`.
fn fleet_run(inventory: &Path, db: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["fleet", "run", "--inventory", inventory.to_str().unwrap(), "--suite", "syscall", "--db", db];
    args.extend(["--out", out.to_str().unwrap(), "--connect-timeout", "5"]);
    args.extend(extra);
    args.push("--");
    args.extend(RUN);
    oscycles(&args)
}

fn manifest(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap()
}

fn status_of(m: &Value, host: &str) -> String {
    m["hosts"].as_array().unwrap().iter().find(|h| h["name"] == host).map(|h| h["status"].as_str().unwrap().to_string()).unwrap()
}

/// Every run document fetched into `out`.
fn fetched(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten().map(|e| e.path().display().to_string()))
        .filter(|p| p.ends_with(".json"))
        .collect();
    v.sort();
    v
}

#[test]
fn without_ansible_a_sentence_and_exit_2() {
    let dir = common::tempdir("fleet-noansible");
    std::fs::write(dir.join("inv"), "h1 ansible_connection=local\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .env("PATH", dir.join("empty"))
        .env("OSCYCLES_ANSIBLE_DIR", dir.join("none"))
        .args(["fleet", "run", "--inventory", dir.join("inv").to_str().unwrap(), "--suite", "syscall"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("pip install ansible-core"), "{}", text(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_fleet_of_local_connections() {
    let dir = common::tempdir("fleet-local");
    let py = "ansible_connection=local ansible_python_interpreter=/usr/bin/python3";
    std::fs::write(dir.join("inv"), format!("bad {py} oscycles_run_args=\"--cpus 999\"\nl1 {py}\nl2 {py}\n")).unwrap();
    let db = dir.join("s.sqlite");
    let out = dir.join("out");
    // One host at a time: a batch whose only host failed does not stop the fleet.
    let o = fleet_run(&dir.join("inv"), db.to_str().unwrap(), &out, &["--forks", "1"]);
    assert_eq!(o.status.code(), Some(1), "one host failed: {}", text(&o));
    let m = manifest(&out);
    assert_eq!([status_of(&m, "l1"), status_of(&m, "l2"), status_of(&m, "bad")], ["ok", "ok", "failed"], "{m}");
    assert_eq!(m["imported"].as_array().unwrap().len(), 2);
    // --max-fail: after the first batch a third of the inventory failed; no further batch starts.
    let out2 = dir.join("out2");
    let o = fleet_run(&dir.join("inv"), dir.join("s2.sqlite").to_str().unwrap(), &out2, &["--forks", "1", "--max-fail", "10%"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let m = manifest(&out2);
    assert_eq!([status_of(&m, "bad"), status_of(&m, "l1"), status_of(&m, "l2")], ["failed", "not_run", "not_run"], "{m}");
    let report = oscycles(&["report", "--by", "host", "--baseline", "l2", "--db", db.to_str().unwrap()]);
    assert!(report.status.success() && text(&report).contains("l1 vs l2"), "{}", text(&report));
    // A bad run option is refused before any host is touched.
    let bad = oscycles(&["fleet", "run", "--inventory", dir.join("inv").to_str().unwrap(), "--", "--no-such-option"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn sh(args: &[&str]) {
    let o = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", text(&o));
}

/// Hosts as network namespaces on a bridge, each with its own sshd.
struct Hosts {
    tag: String,
    sshd: Vec<Child>,
    made: Vec<String>,
}

impl Hosts {
    fn ns(&self, i: usize) -> String {
        format!("{}h{i}", self.tag)
    }

    fn addr(&self, i: usize) -> String {
        format!("10.231.{}.{}", self.subnet(), 10 + i)
    }

    fn subnet(&self) -> u32 {
        std::process::id() % 200 + 20
    }

    /// Bridge, namespaces with a veth each, and an sshd per namespace
    /// accepting `key`.pub for root.
    fn start(dir: &Path, n: usize) -> Hosts {
        let mut h = Hosts { tag: format!("ocf{}", std::process::id() % 100_000), sshd: vec![], made: vec![] };
        let br = format!("{}br", h.tag);
        sh(&["ip", "link", "add", &br, "type", "bridge"]);
        h.made.push(format!("link {br}"));
        sh(&["ip", "addr", "add", &format!("10.231.{}.1/24", h.subnet()), "dev", &br]);
        sh(&["ip", "link", "set", &br, "up"]);
        sh(&["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir.join("client").to_str().unwrap()]);
        sh(&["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir.join("hostkey").to_str().unwrap()]);
        std::fs::copy(dir.join("client.pub"), dir.join("authorized_keys")).unwrap();
        std::fs::create_dir_all("/run/sshd").unwrap();
        for i in 1..=n {
            let (ns, a, b) = (h.ns(i), format!("{}a{i}", h.tag), format!("{}b{i}", h.tag));
            sh(&["ip", "netns", "add", &ns]);
            h.made.push(format!("netns {ns}"));
            sh(&["ip", "link", "add", &a, "type", "veth", "peer", "name", &b]);
            h.made.push(format!("link {a}"));
            sh(&["ip", "link", "set", &b, "netns", &ns]);
            sh(&["ip", "link", "set", &a, "master", &br, "up"]);
            sh(&["ip", "netns", "exec", &ns, "ip", "addr", "add", &format!("{}/24", h.addr(i)), "dev", &b]);
            sh(&["ip", "netns", "exec", &ns, "ip", "link", "set", &b, "up"]);
            sh(&["ip", "netns", "exec", &ns, "ip", "link", "set", "lo", "up"]);
            let conf = dir.join(format!("sshd{i}.conf"));
            std::fs::write(
                &conf,
                format!(
                    "ListenAddress {}\nHostKey {}\nAuthorizedKeysFile {}\nPermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPidFile none\nSubsystem sftp internal-sftp\n",
                    h.addr(i),
                    dir.join("hostkey").display(),
                    dir.join("authorized_keys").display()
                ),
            )
            .unwrap();
            // Its log to a file: sessions it forks must not hold the test's output open.
            let log = std::fs::File::create(dir.join(format!("sshd{i}.log"))).unwrap();
            let child = Command::new("ip")
                .args(["netns", "exec", &ns, "/usr/sbin/sshd", "-D", "-e", "-f"])
                .arg(&conf)
                .stdin(std::process::Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap();
            h.sshd.push(child);
        }
        h.wait_listening(n);
        h
    }

    fn wait_listening(&self, n: usize) {
        for i in 1..=n {
            let t = std::time::Instant::now();
            while std::net::TcpStream::connect_timeout(&format!("{}:22", self.addr(i)).parse().unwrap(), std::time::Duration::from_secs(1))
                .is_err()
            {
                assert!(t.elapsed().as_secs() < 20, "sshd in {} does not listen", self.ns(i));
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for c in &mut self.sshd {
            let _ = c.kill();
            let _ = c.wait();
        }
        // The sessions sshd forked (setsid: not its children to kill) live in
        // the namespaces: every process there goes.
        for m in self.made.iter().filter_map(|m| m.strip_prefix("netns ")) {
            let pids = Command::new("ip").args(["netns", "pids", m]).output().map(|o| String::from_utf8_lossy(&o.stdout).to_string());
            for pid in pids.unwrap_or_default().split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
                // SAFETY: kill has no memory effects; the pid is one the namespace holds.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        for m in self.made.iter().rev() {
            let (kind, name) = m.split_once(' ').unwrap();
            let _ = match kind {
                "netns" => Command::new("ip").args(["netns", "del", name]).output(),
                _ => Command::new("ip").args(["link", "del", name]).output(),
            };
        }
    }
}

/// The inventory: h1..h3 over ssh, h4 where nothing listens, h5 whose run fails.
fn inventory(h: &Hosts, dir: &Path) -> PathBuf {
    let key = dir.join("client");
    let common = format!(
        "ansible_user=root ansible_python_interpreter=/usr/bin/python3 ansible_ssh_private_key_file={} \
         ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes'",
        key.display()
    );
    let mut inv = String::from("[fleet]\n");
    for i in 1..=3 {
        inv += &format!("h{i} ansible_host={} {common}\n", h.addr(i));
    }
    inv += &format!("h4 ansible_host={} ansible_port=2222 {common}\n", h.addr(1));
    inv += &format!("h5 ansible_host={} {common} oscycles_run_args=\"--cpus 999\"\n", h.addr(2));
    let p = dir.join("inventory.ini");
    std::fs::write(&p, inv).unwrap();
    p
}

#[test]
fn a_fleet_of_namespaces_over_ssh_into_postgres() {
    common::needs_root("network namespaces, sshd and initdb need root");
    let dir = common::tempdir("fleet-e2e");
    let server = pg::Postgres::start();
    let hosts = Hosts::start(&dir, 3);
    let out = dir.join("out");
    let o = fleet_run(&inventory(&hosts, &dir), &server.url, &out, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let m = manifest(&out);
    let st: Vec<String> = (1..=5).map(|i| status_of(&m, &format!("h{i}"))).collect();
    assert_eq!(st, ["ok", "ok", "ok", "unreachable", "failed"], "{m}");
    let fleet = m["fleet"].as_str().unwrap().to_string();
    let runs = oscycles(&["runs", "--db", &server.url]);
    assert!(text(&runs).contains("3 runs in"), "{}", text(&runs));
    // A second import adds nothing.
    let docs = fetched(&out);
    assert_eq!(docs.len(), 3);
    let again: Vec<&str> = ["import", "--db", &server.url].into_iter().chain(docs.iter().map(String::as_str)).collect();
    let o = oscycles(&again);
    assert!(o.status.success() && text(&o).matches("nothing added").count() == 3, "{}", text(&o));
    assert!(text(&oscycles(&["runs", "--db", &server.url])).contains("3 runs in"));
    // The same report from PostgreSQL and from SQLite.
    let sqlite = dir.join("s.sqlite").display().to_string();
    let into_sqlite: Vec<&str> = ["import", "--db", &sqlite].into_iter().chain(docs.iter().map(String::as_str)).collect();
    assert!(oscycles(&into_sqlite).status.success());
    let report = |db: &str| oscycles(&["report", "--by", "host", "--baseline", "h1", "--fleet", &fleet, "--db", db]);
    let (from_pg, from_sqlite) = (report(&server.url), report(&sqlite));
    assert!(from_pg.status.success(), "{}", text(&from_pg));
    let t = String::from_utf8_lossy(&from_pg.stdout).to_string();
    assert!(t.contains("by host: 3 columns, baseline h1"), "{t}");
    let head = t.lines().find(|l| l.starts_with("benchmark")).unwrap();
    // No column of the baseline against itself (issue 30, item 13; it said "1.00" on every row).
    assert!(!head.contains("h1 vs h1") && head.contains("h2 vs h1") && head.contains("h3 vs h1") && !head.contains("h4"), "{head}");
    let geo = t.lines().find(|l| l.starts_with("geometric mean")).expect("a geometric-mean row");
    assert!(geo.contains("cases every column has"), "{geo}");
    assert_eq!(t, String::from_utf8_lossy(&from_sqlite.stdout), "the same report from both stores");
    drop(hosts);
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn local_hosts_use_the_python_running_ansible_and_a_module_failure_says_why() {
    let dir = common::tempdir("fleet-shim");
    // A pyenv-style shim of a Python that is not installed, first on PATH:
    // Ansible's interpreter discovery would take it.
    let shims = dir.join("shims");
    std::fs::create_dir(&shims).unwrap();
    let shim = shims.join("python3.13");
    std::fs::write(&shim, "#!/bin/sh\necho 'pyenv: python3.13: command not found' >&2\nexit 127\n").unwrap();
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", shims.display(), std::env::var("PATH").unwrap_or_default());
    let fleet = |inventory: &str, out: &Path| {
        std::fs::write(dir.join("inv"), inventory).unwrap();
        let mut args: Vec<String> = vec![
            "fleet".into(),
            "run".into(),
            "--inventory".into(),
            dir.join("inv").to_str().unwrap().to_string(),
            "--suite".into(),
            "syscall".into(),
        ];
        args.extend(["--db".into(), dir.join("s.sqlite").to_str().unwrap().into(), "--out".into(), out.to_str().unwrap().into()]);
        args.push("--".into());
        args.extend(RUN.map(String::from));
        Command::new(env!("CARGO_BIN_EXE_oscycles")).env("PATH", &path).env("COLUMNS", "1000").args(&args).output().unwrap()
    };
    let out = dir.join("out");
    let o = fleet("h1 ansible_connection=local\nh2 ansible_connection=local\n", &out);
    let m = manifest(&out);
    assert_eq!([status_of(&m, "h1"), status_of(&m, "h2")], ["ok", "ok"], "{m}\n{}", text(&o));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The report by host: a column per host, and one relative column (h2 against h1, not h1 against itself).
    // The hosts run at once, so which run is first (the default baseline) is chance: h1 is named.
    let report = oscycles(&["report", "--by", "host", "--baseline", "h1", "--db", dir.join("s.sqlite").to_str().unwrap()]);
    let t = text(&report);
    assert!(report.status.success() && t.contains("h2 vs h1"), "{t}");
    assert!(!t.contains("h1 vs h1"), "{t}");
    // A host told to use the shim fails, and says why.
    let out3 = dir.join("out3");
    let o = fleet(&format!("h3 ansible_connection=local ansible_python_interpreter={}\n", shim.display()), &out3);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let m = manifest(&out3);
    assert_eq!(status_of(&m, "h3"), "failed", "{m}");
    let msg = m["hosts"][0]["message"].as_str().unwrap();
    assert!(msg.contains("python3.13: command not found"), "the module's stderr is in the message: {msg}");
    std::fs::remove_dir_all(&dir).unwrap();
}
