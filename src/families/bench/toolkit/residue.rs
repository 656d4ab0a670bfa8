//! What a case may leave behind in the process that runs the next one:
//! threads, open descriptors, children, mappings, timers, anonymous memory, the CPU
//! affinity and scheduling policy. A case whose result depends on the cases
//! before it is one that inherits some of this; `leaked` names what grew.

use std::collections::BTreeSet;

/// The state of this process that a case could leave changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Residue {
    pub threads: usize,
    pub fds: usize,
    pub children: BTreeSet<i32>,
    pub mappings: usize,
    /// POSIX timers (/proc/self/timers; 0 where the kernel does not list them).
    pub timers: usize,
    /// Anonymous resident memory (RssAnon), KiB.
    pub rss_anon_kib: u64,
    pub affinity: Vec<usize>,
    pub policy: String,
}

fn status_field(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|l| l.strip_prefix(key)?.split_whitespace().next()?.parse().ok())
}

/// The children of every thread of this process.
fn children() -> BTreeSet<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return BTreeSet::new() };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("children")).ok())
        .flat_map(|s| s.split_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<i32>>())
        .collect()
}

impl Residue {
    pub fn now() -> Residue {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        Residue {
            threads: status_field(&status, "Threads:").unwrap_or(0) as usize,
            fds: std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count()),
            children: children(),
            mappings: std::fs::read_to_string("/proc/self/maps").map_or(0, |m| m.lines().count()),
            timers: std::fs::read_to_string("/proc/self/timers").map_or(0, |t| t.lines().filter(|l| l.starts_with("ID:")).count()),
            rss_anon_kib: status_field(&status, "RssAnon:").unwrap_or(0),
            affinity: crate::measure::placement::allowed_cpus(),
            policy: crate::measure::placement::current_policy().to_string(),
        }
    }

    /// What grew or changed from `before` to `self`, one phrase each; anonymous
    /// memory counts when it grew by more than `slack_kib`.
    pub fn leaked(&self, before: &Residue, slack_kib: u64) -> Vec<String> {
        let mut out = Vec::new();
        let mut more = |what: &str, b: usize, a: usize| {
            if a > b {
                out.push(format!("{what} {b} -> {a}"));
            }
        };
        more("threads", before.threads, self.threads);
        more("open descriptors", before.fds, self.fds);
        more("mappings", before.mappings, self.mappings);
        more("timers", before.timers, self.timers);
        let new_children: Vec<&i32> = self.children.difference(&before.children).collect();
        if !new_children.is_empty() {
            out.push(format!("children left running: {new_children:?}"));
        }
        if self.rss_anon_kib > before.rss_anon_kib + slack_kib {
            out.push(format!("anonymous memory {} -> {} KiB", before.rss_anon_kib, self.rss_anon_kib));
        }
        if self.affinity != before.affinity {
            out.push(format!("CPU affinity {:?} -> {:?}", before.affinity, self.affinity));
        }
        if self.policy != before.policy {
            out.push(format!("scheduling policy {} -> {}", before.policy, self.policy));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_grew_is_named_and_what_shrank_is_not() {
        let before = Residue::now();
        assert!(before.threads >= 1 && before.fds >= 1 && before.mappings >= 1 && !before.affinity.is_empty(), "{before:?}");
        assert!(before.leaked(&before, 0).is_empty());
        let mut after = before.clone();
        after.threads += 1;
        after.fds += 2;
        after.mappings += 1;
        after.timers += 1;
        after.children.insert(-7);
        after.rss_anon_kib += 4096;
        after.affinity = vec![usize::MAX];
        let leaked = after.leaked(&before, 1024).join("; ");
        for what in ["threads", "open descriptors", "mappings", "timers", "children left running: [-7]", "anonymous memory", "CPU affinity"]
        {
            assert!(leaked.contains(what), "{what} missing from: {leaked}");
        }
        assert!(after.leaked(&before, 8192).iter().all(|l| !l.starts_with("anonymous")), "within the slack");
        assert!(before.leaked(&after, 0).iter().all(|l| l.starts_with("CPU affinity")), "only a change of affinity counts backwards");
    }

    #[test]
    fn a_child_of_this_process_is_seen() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let seen = Residue::now().children.contains(&(child.id() as i32));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(seen);
    }

    #[test]
    fn status_fields_parse() {
        assert_eq!(status_field("Name:\tx\nThreads:\t3\nRssAnon:\t  1200 kB\n", "RssAnon:"), Some(1200));
        assert_eq!(status_field("Threads:\t3\n", "RssAnon:"), None);
    }
}
