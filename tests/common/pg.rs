//! A throwaway PostgreSQL for one test: `initdb` and `pg_ctl` as the
//! `postgres` user, listening only on a Unix socket in a short private
//! directory; stopped and removed when dropped (also when the test fails).

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    /// `postgresql://postgres@/postgres?host=DIR`.
    pub url: String,
}

/// Where Debian keeps initdb and pg_ctl (the newest version there).
fn bin_dir() -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is installed (scripts/setup installs it)")
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("pg_ctl").exists())
        .collect();
    dirs.sort_by_key(|p| p.parent().and_then(|v| v.file_name()).and_then(|v| v.to_str()).and_then(|v| v.parse::<u32>().ok()));
    dirs.pop().expect("a /usr/lib/postgresql/*/bin with pg_ctl")
}

fn as_postgres(bin: &Path, tool: &str, args: &[&str]) -> std::process::Output {
    Command::new("runuser").args(["-u", "postgres", "--"]).arg(bin.join(tool)).args(args).output().expect("runuser runs")
}

impl Postgres {
    pub fn start() -> Postgres {
        // A socket path must fit in 108 bytes: a short directory in /tmp.
        let dir = tempfile::Builder::new().prefix("ocpg").tempdir_in("/tmp").unwrap().keep();
        let ok = Command::new("chown").args(["postgres:postgres"]).arg(&dir).status().unwrap().success();
        assert!(ok, "chown of {}", dir.display());
        let bin = bin_dir();
        let pg = Postgres { url: format!("postgresql://postgres@/postgres?host={}", dir.display()), dir, bin };
        let data = pg.dir.join("data");
        let d = data.to_str().unwrap();
        let out = as_postgres(&pg.bin, "initdb", &["-D", d, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
        assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
        let opts = format!("-k {} -c listen_addresses='' -F", pg.dir.display());
        let log = pg.dir.join("log");
        let out = as_postgres(&pg.bin, "pg_ctl", &["-D", d, "-o", &opts, "-l", log.to_str().unwrap(), "-w", "-t", "60", "start"]);
        assert!(
            out.status.success(),
            "pg_ctl start: {}{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        pg
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        as_postgres(&self.bin, "pg_ctl", &["-D", data.to_str().unwrap(), "-m", "immediate", "-w", "stop"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
