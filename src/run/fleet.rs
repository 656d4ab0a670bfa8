//! Fleets: the same suites on many hosts, with Ansible as the engine
//! (`oscycles fleet run`). This module is what oscycles hands Ansible and
//! what it reads back, with no process started: the playbook and
//! `ansible.cfg` it renders into a private directory, the per-host status
//! it counts from the json callback's output, and the fleet manifest.
//!
//! The play, per host (`serial` batches of `--forks` hosts): copy this
//! static binary (the copy module skips it when the checksum matches; it
//! stays cached in `REMOTE_DIR/bin`), run the suites detached (`async`,
//! polled) with the host's inventory name as `--label` and the fleet id as
//! `--fleet`, fetch every run document back (also of a failed run: partial
//! results are kept), remove the run's remote directory, then fail the host
//! if its run failed. Ansible's own failure percentage is off (100): an
//! unreachable host must not end the fleet. `--max-fail P%` is oscycles':
//! after each batch, when more than P% of the inventory's hosts have runs
//! that failed (unreachable ones not counted), no further batch starts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where runs live on a host: `bin/oscycles` (kept, for the checksum) and
/// `FLEET-HOST/` (the run's results and store; removed at the end). In the
/// connecting user's home, not a shared directory such as /var/tmp, where
/// another local user could make the directory first and swap the binary
/// between its copy and its run (as root). Ansible's modules expand `~`;
/// the run's command line takes the expanded paths the copy and file tasks
/// return.
pub const REMOTE_DIR: &str = "~/.cache/oscycles-fleet";

/// Where `scripts/setup` puts ansible-core (a venv), searched after PATH.
pub const ANSIBLE_DIR: &str = "/var/cache/oscycles/ansible";

/// What a user runs to get Ansible.
pub const INSTALL_HINT: &str =
    "python3 -m venv /var/cache/oscycles/ansible && /var/cache/oscycles/ansible/bin/pip install ansible-core==2.18.12 (or scripts/setup)";

/// The playbook: static text; everything variable comes in as extra vars
/// (`vars.json`), never spliced into YAML.
pub const PLAYBOOK: &str = r#"- name: oscycles fleet run
  hosts: all
  gather_facts: false
  serial: "{{ oc_forks }}"
  max_fail_percentage: 100
  ignore_errors: true
  vars:
    oc_dir: "{{ oc_remote }}/{{ oc_fleet }}-{{ inventory_hostname }}"
    oc_bin: "{{ oc_remote }}/bin/oscycles"
  tasks:
    # A local host runs modules with the Python running Ansible unless the
    # inventory says otherwise: discovery would take the first python3.N on
    # PATH, which may be a shim of a version not installed (pyenv).
    - name: interpreter
      ansible.builtin.set_fact:
        ansible_python_interpreter: "{{ ansible_playbook_python }}"
      when: (ansible_connection | default('ssh')) == 'local' and ansible_python_interpreter is not defined
    - name: reach
      ansible.builtin.ping:
      ignore_unreachable: true
      register: oc_ping
    - name: unreachable
      ansible.builtin.meta: end_host
      when: oc_ping.unreachable | default(false)
    - name: directories
      ansible.builtin.file:
        path: "{{ item }}"
        state: directory
        mode: "0700"
      loop: ["{{ oc_remote }}", "{{ oc_remote }}/bin", "{{ oc_dir }}/results"]
      register: oc_dirs
    - name: binary
      ansible.builtin.copy:
        src: "{{ oc_binary }}"
        dest: "{{ oc_bin }}"
        mode: "0755"
      register: oc_copy
    - name: run
      ansible.builtin.command:
        argv: "{{ [oc_copy.dest, 'run', '--suite', oc_suite, '--label', inventory_hostname, '--fleet', oc_fleet, '--results', oc_dirs.results[2].path, '--quiet'] + oc_args + (oscycles_run_args | default('') | split) }}"
      async: "{{ oc_timeout }}"
      poll: 2
      register: oc_run
    - name: documents
      ansible.builtin.find:
        paths: "{{ oc_dir }}/results"
        patterns: "*.json"
      register: oc_docs
    - name: fetch
      ansible.builtin.fetch:
        src: "{{ item.path }}"
        dest: "{{ oc_out }}/{{ inventory_hostname }}/"
        flat: true
      loop: "{{ oc_docs.files }}"
    - name: clean up
      ansible.builtin.file:
        path: "{{ oc_dir }}"
        state: absent
    - name: max fail
      ansible.builtin.meta: end_play
      when: (ansible_play_hosts_all | map('extract', hostvars, 'oc_run') | select('defined') | select('failed') | list | length) * 100 > oc_max_fail * (ansible_play_hosts_all | length)
"#;

/// The stdout callback (ansible-core has no json one; ansible.posix's is a
/// collection away): every task's result per host, and the stats, as one
/// JSON document in the json callback's shape, written when the play ends.
pub const CALLBACK: &str = r#"import json
from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "oscycles"
    KEEP = ("msg", "stderr", "rc", "changed", "module_stderr")

    def __init__(self):
        super().__init__()
        self.tasks = []

    def v2_playbook_on_task_start(self, task, is_conditional):
        self.tasks.append({"task": {"name": task.get_name()}, "hosts": {}})

    def record(self, result, **flags):
        if not self.tasks:
            self.tasks.append({"task": {"name": ""}, "hosts": {}})
        r = {k: result._result[k] for k in self.KEEP if k in result._result}
        r.update(flags)
        self.tasks[-1]["hosts"][result._host.get_name()] = r

    def v2_runner_on_ok(self, result, **kwargs):
        self.record(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self.record(result, failed=True, ignored=ignore_errors)

    def v2_runner_on_unreachable(self, result):
        self.record(result, unreachable=True)

    def v2_runner_on_skipped(self, result):
        self.record(result, skipped=True)

    def v2_playbook_on_stats(self, stats):
        hosts = sorted(stats.processed.keys())
        out = {"plays": [{"tasks": self.tasks}], "stats": {h: stats.summarize(h) for h in hosts}}
        self._display.display(json.dumps(out, default=str))
"#;

/// The ansible.cfg: oscycles' callback on stdout, no host key prompts, no
/// retry files, ssh giving up on a host after `connect_timeout` seconds.
pub fn config(forks: u64, connect_timeout: u64, tmp: &str) -> String {
    format!(
        "[defaults]\nstdout_callback = oscycles\ncallback_plugins = {tmp}/callback_plugins\nforks = {forks}\nhost_key_checking = False\n\
         retry_files_enabled = False\ninterpreter_python = auto_silent\ntimeout = {connect_timeout}\nlocal_tmp = {tmp}/local\n\
         deprecation_warnings = False\n\
         [ssh_connection]\npipelining = True\nssh_args = -C -o ControlMaster=auto -o ControlPersist=5s\ncontrol_path_dir = {tmp}/cp\n"
    )
}

/// The extra vars of the playbook.
#[derive(Debug, Clone, Serialize)]
pub struct Vars {
    pub oc_binary: String,
    pub oc_fleet: String,
    pub oc_suite: String,
    pub oc_args: Vec<String>,
    pub oc_out: String,
    pub oc_remote: String,
    pub oc_timeout: u64,
    pub oc_forks: u64,
    /// Percent of the inventory (`--max-fail`); 100: never stop.
    pub oc_max_fail: f64,
}

/// How a host's part of the fleet ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostStatus {
    Ok,
    Failed,
    Unreachable,
    /// Its batch never started (`--max-fail`), or Ansible ended first.
    NotRun,
}

/// One host in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostRecord {
    pub name: String,
    pub status: HostStatus,
    /// What Ansible said of the first task that failed or could not reach it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The run documents fetched from it (paths under --out).
    pub documents: Vec<String>,
    pub run_ids: Vec<String>,
}

/// The fleet manifest (`manifest.json` in --out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub fleet: String,
    pub started_at: String,
    pub finished_at: String,
    pub inventory: String,
    pub suite: String,
    pub run_args: Vec<String>,
    pub store: String,
    pub ansible_exit: Option<i32>,
    pub hosts: Vec<HostRecord>,
    /// Runs added to the store, and runs it had already as they are.
    pub imported: Vec<String>,
    pub already_stored: Vec<String>,
}

impl Manifest {
    /// Hosts with each status: ok, failed, unreachable, not run.
    pub fn counts(&self) -> [usize; 4] {
        let n = |s: HostStatus| self.hosts.iter().filter(|h| h.status == s).count();
        [n(HostStatus::Ok), n(HostStatus::Failed), n(HostStatus::Unreachable), n(HostStatus::NotRun)]
    }
}

/// The hosts of an inventory, from `ansible-inventory --list` (JSON):
/// every host of every group, in order of first appearance.
pub fn inventory_hosts(list: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |h: &str| {
        if !out.iter().any(|x| x == h) {
            out.push(h.to_string());
        }
    };
    if let Some(groups) = list.as_object() {
        for (name, g) in groups {
            if name == "_meta" {
                continue;
            }
            for h in g.get("hosts").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
                add(h);
            }
        }
    }
    if let Some(hv) = list.pointer("/_meta/hostvars").and_then(Value::as_object) {
        for h in hv.keys() {
            add(h);
        }
    }
    out
}

/// What a failed or unreachable result says, shortly: its first line, and
/// where a module did not even start ("MODULE FAILURE"), the module's
/// stderr, which says why (an interpreter that does not run, say).
fn message(r: &Value) -> String {
    let s = |k: &str| r.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(String::from);
    let text = s("stderr").or_else(|| s("msg")).unwrap_or_else(|| "failed".into());
    let first: String = text.lines().next().unwrap_or_default().chars().take(300).collect();
    match s("module_stderr") {
        Some(m) => format!(
            "{first}; the module's stderr: {}",
            m.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" / ").chars().take(500).collect::<String>()
        ),
        None => first,
    }
}

/// Each host's status from the json callback's output: unreachable where a
/// task could not reach it, failed where a task failed (errors are ignored
/// in the play, so they are found here), ok where it has stats and neither,
/// not run where Ansible never got to it. With the first message.
pub fn statuses(hosts: &[String], out: &Value) -> Vec<(String, HostStatus, String)> {
    let stats = out.get("stats").and_then(Value::as_object);
    hosts
        .iter()
        .map(|h| {
            let st = stats.and_then(|s| s.get(h));
            let count = |k: &str| st.and_then(|s| s.get(k)).and_then(Value::as_u64).unwrap_or(0);
            let results: Vec<&Value> = out
                .pointer("/plays")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .flat_map(|p| p.get("tasks").and_then(Value::as_array).into_iter().flatten())
                .filter_map(|t| t.pointer(&format!("/hosts/{}", h.replace('~', "~0").replace('/', "~1"))))
                .collect();
            let any = |k: &str| results.iter().any(|r| r.get(k) == Some(&Value::Bool(true)));
            let status = match st {
                None => HostStatus::NotRun,
                Some(_) if count("unreachable") > 0 || any("unreachable") => HostStatus::Unreachable,
                Some(_) if count("failures") > 0 || any("failed") => HostStatus::Failed,
                Some(_) => HostStatus::Ok,
            };
            let first_bad = results
                .iter()
                .copied()
                .find(|r| r.get("unreachable") == Some(&Value::Bool(true)) || r.get("failed") == Some(&Value::Bool(true)));
            let msg = if status == HostStatus::Ok { String::new() } else { first_bad.map(message).unwrap_or_default() };
            (h.clone(), status, msg)
        })
        .collect()
}

/// A fleet id: the UTC time and this process, e.g. `20261123T061500Z-4242`.
pub fn new_id() -> String {
    format!("{}-{}", crate::data::results::now_rfc3339().replace([':', '-'], ""), std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_from_the_json_callback() {
        let out: Value = serde_json::from_str(
            r#"{"plays":[{"tasks":[
                {"task":{"name":"directories"},"hosts":{"a":{"changed":false},"b":{"unreachable":true,"msg":"ssh: connect to host 10.0.0.9 port 22: Connection refused\nmore"}}},
                {"task":{"name":"verdict"},"hosts":{"c":{"failed":true,"msg":"oscycles run failed (exit 2): bad cpus"}}}]}],
               "stats":{"a":{"ok":7,"failures":0,"unreachable":0},"b":{"ok":0,"failures":0,"unreachable":1},"c":{"ok":5,"failures":1,"unreachable":0}}}"#,
        )
        .unwrap();
        let hosts: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let s = statuses(&hosts, &out);
        assert_eq!(
            s.iter().map(|x| x.1).collect::<Vec<_>>(),
            [HostStatus::Ok, HostStatus::Unreachable, HostStatus::Failed, HostStatus::NotRun]
        );
        assert_eq!(s[1].2, "ssh: connect to host 10.0.0.9 port 22: Connection refused");
        assert!(s[2].2.contains("bad cpus"));
    }

    #[test]
    fn a_module_failure_says_what_the_module_said() {
        let r: Value = serde_json::from_str(
            r#"{"failed":true,"msg":"MODULE FAILURE\nSee stdout/stderr for the exact error","rc":127,"module_stderr":"pyenv: python3.13: command not found\n\nThe `python3.13' command exists in these Python versions:\n"}"#,
        )
        .unwrap();
        let m = message(&r);
        assert!(m.starts_with("MODULE FAILURE; the module's stderr: pyenv: python3.13: command not found / The"), "{m}");
    }

    #[test]
    fn hosts_of_an_inventory_listing() {
        let list: Value = serde_json::from_str(
            r#"{"_meta":{"hostvars":{"h1":{},"h9":{}}},"all":{"children":["ungrouped","web"]},"web":{"hosts":["h2","h1"]},"ungrouped":{"hosts":["h3"]}}"#,
        )
        .unwrap();
        let mut h = inventory_hosts(&list);
        h.sort();
        assert_eq!(h, ["h1", "h2", "h3", "h9"]);
    }
}
