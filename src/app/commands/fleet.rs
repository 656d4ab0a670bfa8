//! `oscycles fleet run`: the suites on every host of an Ansible inventory
//! (see `oscycles::run::fleet` for the play), the run documents fetched into
//! --out, imported into the store, and a manifest of how each host fared.
//! Exit 0 only when every host succeeded; 1 otherwise; 2 for bad usage
//! (no ansible-playbook, a bad inventory or run option).

use super::default_db;
use super::store::import_into;
use anyhow::{Context, Result};
use oscycles::app::cli::grammar::FleetRunArgs;
use oscycles::app::cli::{self, UsageError};
use oscycles::present::report;
use oscycles::run::fleet::{self, HostRecord, HostStatus, Manifest, Vars};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// An Ansible command: on PATH, else in the venv `scripts/setup` makes
/// (`OSCYCLES_ANSIBLE_DIR` overrides where). A sentence with the install
/// command if neither.
fn ansible(tool: &str) -> Result<PathBuf, UsageError> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(tool))
        .find(|p| p.is_file());
    let dir = std::env::var_os("OSCYCLES_ANSIBLE_DIR").map_or_else(|| PathBuf::from(fleet::ANSIBLE_DIR), PathBuf::from);
    let found = on_path.or_else(|| Some(dir.join("bin").join(tool)).filter(|p| p.is_file())).ok_or_else(|| {
        UsageError(format!(
            "fleet run needs {tool} (Ansible), found neither on PATH nor in {}; install it: {}",
            dir.display(),
            fleet::INSTALL_HINT
        ))
    })?;
    trusted_tool(&found)?;
    Ok(found)
}

/// An Ansible program runs as the caller: no other user may be able to
/// change it, a directory above it or the directory of the name it is
/// found by (OSCYCLES_ANSIBLE_DIR can name any; Ansible's tools are found
/// beside each other by that name, which may be a link into an install).
fn trusted_tool(found: &Path) -> Result<(), UsageError> {
    let refused = |e| UsageError(format!("fleet run: {}: {e}", found.display()));
    oscycles::base::fsafe::check_dir(found.parent().unwrap_or(Path::new("/")), false).map_err(refused)?;
    oscycles::base::fsafe::trusted_program(found).map(drop).map_err(refused)
}

/// The run options are those of `oscycles run`, checked here before any
/// host is touched; the ones the fleet sets itself are refused.
fn check_run_args(a: &FleetRunArgs) -> Result<(), UsageError> {
    for own in ["--label", "--fleet", "--results", "--db", "--suite", "--json", "--full", "--quiet", "-q"] {
        if a.run_args.iter().any(|x| x == own || x.starts_with(&format!("{own}="))) {
            return Err(UsageError(format!("fleet run sets {own} itself; leave it out of the run options after --")));
        }
    }
    let argv = ["oscycles", "run", "--suite", &a.suite].into_iter().map(String::from).chain(a.run_args.iter().cloned());
    let parsed = <cli::grammar::Cli as clap::Parser>::try_parse_from(argv)
        .map_err(|e| UsageError(format!("the run options after --: {}", e.to_string().trim())))?;
    if let cli::grammar::Command::Run(r) = parsed.command {
        cli::resolve::resolve_suites(&r.suite)?;
    }
    Ok(())
}

/// The inventory's hosts (`ansible-inventory --list`), each a valid label.
fn hosts_of(inventory: &Path, playbook: &Path) -> Result<Vec<String>, UsageError> {
    let tool = playbook.with_file_name("ansible-inventory");
    trusted_tool(&tool)?;
    let out = Command::new(&tool)
        .arg("-i")
        .arg(inventory)
        .arg("--list")
        .output()
        .map_err(|e| UsageError(format!("cannot run {}: {e}", tool.display())))?;
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|_| {
        UsageError(format!("--inventory {}: Ansible cannot read it: {}", inventory.display(), String::from_utf8_lossy(&out.stderr).trim()))
    })?;
    let hosts = fleet::inventory_hosts(&list);
    if hosts.is_empty() {
        return Err(UsageError(format!("--inventory {}: no hosts in it", inventory.display())));
    }
    for h in &hosts {
        let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if h.len() > 64 || !h.chars().all(ok) {
            return Err(UsageError(format!("inventory host '{h}' cannot be a run label: use letters, digits, '.', '_', '-'")));
        }
    }
    Ok(hosts)
}

/// Writes the play, its configuration and variables into `dir`.
fn render(dir: &Path, a: &FleetRunArgs, id: &str, out: &Path) -> Result<()> {
    let exe = std::env::current_exe().context("this binary's path")?;
    let vars = Vars {
        oc_binary: exe.display().to_string(),
        oc_fleet: id.to_string(),
        oc_suite: a.suite.clone(),
        oc_args: a.run_args.clone(),
        oc_out: out.display().to_string(),
        oc_remote: fleet::REMOTE_DIR.into(),
        oc_timeout: a.host_timeout,
        oc_forks: a.forks,
        oc_max_fail: a.max_fail.map_or(100.0, |f| f * 100.0),
    };
    // In the play's private directory (mkdtemp, 0700), each file created new.
    use oscycles::base::fsafe::{make_dir, write_new};
    write_new(&dir.join("ansible.cfg"), fleet::config(a.forks, a.connect_timeout, &dir.display().to_string()))?;
    write_new(&dir.join("playbook.yml"), fleet::PLAYBOOK)?;
    make_dir(&dir.join("callback_plugins"), 0o700)?;
    write_new(&dir.join("callback_plugins").join("oscycles.py"), fleet::CALLBACK)?;
    write_new(&dir.join("vars.json"), serde_json::to_string_pretty(&vars)?)?;
    Ok(())
}

/// Runs the play; Ansible's exit code and its json output.
fn play(dir: &Path, playbook: &Path, inventory: &Path) -> Result<(Option<i32>, serde_json::Value)> {
    let out = Command::new(playbook)
        .arg("-i")
        .arg(inventory)
        .arg(dir.join("playbook.yml"))
        .arg("-e")
        .arg(format!("@{}", dir.join("vars.json").display()))
        .env("ANSIBLE_CONFIG", dir.join("ansible.cfg"))
        .env("ANSIBLE_HOME", dir.join("home"))
        .env("ANSIBLE_NOCOLOR", "1")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", playbook.display()))?;
    let json = serde_json::from_slice(&out.stdout).with_context(|| {
        format!("ansible-playbook gave no json results (exit {:?}): {}", out.status.code(), String::from_utf8_lossy(&out.stderr).trim())
    })?;
    Ok((out.status.code(), json))
}

/// The run documents fetched from `host` (in --out/HOST), with their ids.
fn fetched(out: &Path, host: &str) -> (Vec<PathBuf>, Vec<String>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(out.join(host))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let docs: Vec<(PathBuf, String)> =
        files.into_iter().filter_map(|f| oscycles::data::documents::load(&f).ok().map(|d| (f, d.id))).collect();
    docs.into_iter().unzip()
}

/// The hosts' table on standard output.
fn print_hosts(m: &Manifest, out: &Path) {
    let mut t = oscycles::tables::tabular::table::TextTable::new(&["host", "status", "runs", "message"], 2);
    t.also_left = vec![3];
    for h in &m.hosts {
        let status = serde_json::to_value(h.status).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        t.row(vec![h.name.clone(), status, h.run_ids.len().to_string(), h.message.clone()]);
    }
    print!("{}", report::for_terminal(&t.render()));
    let [ok, failed, unreachable, not_run] = m.counts();
    println!(
        "fleet {}: {ok} ok, {failed} failed, {unreachable} unreachable, {not_run} not run; {} runs imported, {} already stored; manifest {}",
        m.fleet,
        m.imported.len(),
        m.already_stored.len(),
        out.join("manifest.json").display()
    );
}

/// `oscycles fleet run`.
pub fn run(a: FleetRunArgs) -> Result<ExitCode> {
    if !a.inventory.is_file() {
        return Err(UsageError(format!("--inventory {}: no such file", a.inventory.display())).into());
    }
    // Ansible executes an executable inventory, and the owner of a file can
    // make it one at any time: it is checked as a program the caller names,
    // and Ansible gets its real path.
    let inventory = oscycles::base::fsafe::trusted_program(&a.inventory)
        .map_err(|e| UsageError(format!("--inventory (Ansible runs an executable inventory): {e}")))?;
    let playbook = ansible("ansible-playbook")?;
    check_run_args(&a)?;
    let loc = default_db(a.db.clone());
    loc.check().map_err(|e| UsageError(e.to_string()))?;
    let hosts = hosts_of(&inventory, &playbook)?;
    let id = fleet::new_id();
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from("oscycles-results").join(format!("fleet-{id}")));
    // Checked (every directory on its path yours or root's, closed to
    // others) and held open: the manifest is written through it.
    let out_dir = super::store::out_dir(&out)?;
    let out = out.canonicalize()?;
    let dir = tempfile::Builder::new().prefix("oscycles-fleet-").tempdir()?;
    render(dir.path(), &a, &id, &out)?;
    let started_at = oscycles::data::results::now_rfc3339();
    eprintln!("fleet {id}: {} hosts, suite {}, Ansible {}", hosts.len(), a.suite, playbook.display());
    let (code, results) = play(dir.path(), &playbook, &inventory)?;
    let mut m = Manifest {
        fleet: id,
        started_at,
        finished_at: oscycles::data::results::now_rfc3339(),
        inventory: a.inventory.display().to_string(),
        suite: a.suite.clone(),
        run_args: a.run_args.clone(),
        store: loc.to_string(),
        ansible_exit: code,
        hosts: vec![],
        imported: vec![],
        already_stored: vec![],
    };
    let mut files = Vec::new();
    for (name, status, message) in fleet::statuses(&hosts, &results) {
        let (docs, run_ids) = fetched(&out, &name);
        files.extend(docs.iter().cloned());
        let documents = docs.iter().map(|d| d.display().to_string()).collect();
        m.hosts.push(HostRecord { name, status, message, documents, run_ids });
    }
    // Partial results too: every document fetched, also from failed hosts.
    let imported = if files.is_empty() { Ok(Default::default()) } else { import_into(&loc, &files) };
    if let Ok(i) = &imported {
        (m.imported, m.already_stored) = (i.added.clone(), i.unchanged.clone());
    }
    out_dir
        .write("manifest.json", serde_json::to_string_pretty(&m)?)
        .map_err(|e| super::store::out_error(&out.join("manifest.json"), e))?;
    imported?;
    print_hosts(&m, &out);
    let all_ok = m.hosts.iter().all(|h| h.status == HostStatus::Ok);
    Ok(if all_ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
