//! A directory another user owns, named in an option by root (their home
//! or project directory): that user cannot make root run their program or
//! write through their links, however they swap what root made there
//! (issue 58, items 1-4). Each test plants the attack as that user.

use super::*;

/// The attacker, as `user`: watches `dir` and acts as `mode` says (a
/// Python program run by the user, as an attacker would).
const ATTACKER: &str = r#"
import ctypes, glob, os, sys, time
mode, d, target, marker = sys.argv[1:5]
libc = ctypes.CDLL(None, use_errno=True)
def exchange(a, b):
    return libc.renameat2(-100, a.encode(), -100, b.encode(), 2)
def cmdline(p):
    try: return open(p, 'rb').read()
    except OSError: return b''
def links_in(fake, names):
    os.makedirs(fake, exist_ok=True)
    for n in names:
        try: os.symlink(target, os.path.join(fake, n))
        except FileExistsError: pass
deadline = time.time() + 300
done = set()
while time.time() < deadline:
    if mode == "exec":
        for p in glob.glob('/proc/[0-9]*/cmdline'):
            args = cmdline(p).split(b'\0')
            # Every program of the run's directory the command line names (the forker, what it executes).
            progs = [a for a in (x.decode(errors='replace') for x in args) if a.startswith(d + '/oscycles-run-') and '/oscycles-exec-' in a]
            if progs and progs[-1] not in done:
                done.update(progs)
                run = progs[-1][len(d) + 1:].split('/')[0]
                fake = os.path.join(d, 'fake-' + run)
                for a in progs:
                    prog = os.path.join(fake, *a[len(d) + 1:].split('/')[1:])
                    os.makedirs(os.path.dirname(prog), exist_ok=True)
                    open(prog, 'w').write('#!/bin/sh\nid >> %s\nexit 7\n' % marker)
                    os.chmod(prog, 0o755)
                print('exchanged', run, exchange(os.path.join(d, run), fake), flush=True)
    elif mode == "interleave":
        for e in glob.glob(d + '/interleaved-*'):
            if e not in done and os.stat(e).st_uid != os.getuid():
                done.add(e)
                fake = e + '.fake'
                links_in(fake, ['%s-round-%d.cases' % (s, k) for s in 'AB' for k in range(64)])
                print('exchanged', e, exchange(e, fake), flush=True)
    elif mode == "console":
        pids = [p.split('/')[2] for p in glob.glob('/proc/[0-9]*/cmdline') if d.encode() in cmdline(p)]
        for doc in glob.glob(d + '/*.json'):
            run = doc[:-len('.json')]
            links_in(d, ['%s.qemu-tcg-%s-%d.console.log' % (os.path.basename(run), p, n) for p in pids for n in range(64)])
    time.sleep(0.002)
"#;

/// The attacker started as `user` in `mode` on `dir`, aiming at `target`,
/// leaving `marker` if root ran their program; killed on drop.
struct Attacker(std::process::Child);

impl Attacker {
    fn start(user: &OtherUser, mode: &str, dir: &Path, target: &Path, marker: &Path) -> Attacker {
        // setpriv executes the program itself (runuser would fork): killing the child kills the attacker.
        let child = Command::new("setpriv")
            .args([
                &format!("--reuid={}", user.name),
                &format!("--regid={}", user.name),
                "--init-groups",
                "/usr/bin/python3",
                "-c",
                ATTACKER,
                mode,
            ])
            .arg(dir)
            .arg(target)
            .arg(marker)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Attacker(child)
    }
}

impl Drop for Attacker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A root directory, 0755, with a root 0600 file the attacker wants
/// written, and `dir`: the user's own project directory (0755).
fn stage(user: &OtherUser, name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let root = tempdir(name);
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let precious = root.join("precious");
    std::fs::write(&precious, b"root's data").unwrap();
    std::fs::set_permissions(&precious, std::fs::Permissions::from_mode(0o600)).unwrap();
    let dir = root.join("project");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(user.uid), Some(user.uid)).unwrap();
    (root, precious, dir)
}

/// Root's run was refused naming the directory's owner, or harmed nothing.
fn unharmed(what: &str, out: &Output, precious: &Path, marker: &Path) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(std::fs::read(precious).unwrap(), b"root's data", "{what}: root's file was written through a planted link; {err}");
    assert!(!marker.exists(), "{what}: root ran the other user's program: {}", std::fs::read_to_string(marker).unwrap_or_default());
    assert_eq!(out.status.code(), Some(2), "{what}: a directory another user owns is refused: {err}");
    assert!(err.contains("belongs to uid"), "{what}: {err}");
}

#[test]
fn a_scratch_directory_of_another_user_never_makes_root_run_their_program() {
    common::needs_root("it creates a user and runs oscycles as root in that user's directory");
    let _alone = as_root_alone();
    let user = OtherUser::create();
    let (root, precious, dir) = stage(&user, "foreign-scratch");
    let marker = dir.join("ran-as-root");
    let attacker = Attacker::start(&user, "exec", &dir, &precious, &marker);
    let results = root.join("results");
    let out = Command::new(bin())
        .args(["run", "--suite", "lmbench", "--bench", "proc.exec", "--rounds", "1", "--batches", "3", "--batch-ms", "30", "--quiet"])
        .arg("--scratch")
        .arg(&dir)
        .arg("--results")
        .arg(&results)
        .arg("--db")
        .arg(results.join("s.sqlite"))
        .output()
        .unwrap();
    drop(attacker);
    unharmed("--scratch", &out, &precious, &marker);
    // A directory of root's inside it is refused too: its owner could swap it.
    let inner = dir.join("roots");
    std::fs::create_dir(&inner).unwrap();
    let out = tiny(&root.join("results2"), &["--scratch", inner.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("belongs to uid"), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_results_directory_of_another_user_never_receives_a_console_through_a_link() {
    common::needs_root("it creates a user and runs oscycles as root in that user's directory");
    let _alone = as_root_alone();
    let _unprotected = Unprotected::set();
    let user = OtherUser::create();
    let (root, precious, dir) = stage(&user, "foreign-console");
    // A QEMU that panics at once: the console is kept beside the document.
    let fake = root.join("bin");
    std::fs::create_dir(&fake).unwrap();
    let qemu = fake.join("qemu-system-x86_64");
    std::fs::write(&qemu, "#!/bin/sh\ncase \"$*\" in *'-machine help'*) printf 'Supported machines are:\\nq35 Standard PC\\npc Standard PC\\n'; exit 0;; esac\nsleep 1\nfor a; do case \"$a\" in file:*) echo 'Kernel panic - not syncing: planted' > \"${a#file:}\";; esac; done\nexit 1\n")
        .unwrap();
    std::fs::set_permissions(&qemu, std::fs::Permissions::from_mode(0o755)).unwrap();
    let attacker = Attacker::start(&user, "console", &dir, &precious, &dir.join("unused"));
    let out = Command::new(bin())
        .env("PATH", format!("{}:{}", fake.display(), std::env::var("PATH").unwrap_or_default()))
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--env", "qemu-tcg", "--rounds", "1", "--quiet"])
        .args(["--init-timeout", "5", "--kernel", "/bin/true", "--results"])
        .arg(&dir)
        .arg("--db")
        .arg(root.join("s.sqlite"))
        .output()
        .unwrap();
    drop(attacker);
    unharmed("--results", &out, &precious, &dir.join("unused"));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn compare_interleave_into_another_users_directory_writes_no_case_list_through_a_link() {
    common::needs_root("it creates a user and runs oscycles as root in that user's directory");
    let _alone = as_root_alone();
    let _unprotected = Unprotected::set();
    let user = OtherUser::create();
    let (root, precious, dir) = stage(&user, "foreign-interleave");
    let attacker = Attacker::start(&user, "interleave", &dir, &precious, &dir.join("unused"));
    let tiny = "--suite syscall --bench syscall.getpid,syscall.getppid --batches 2 --batch-ms 0.05";
    let out = Command::new(bin())
        .args(["compare", "--interleave", "auto", "--budget", "0.5", "--a", tiny, "--results"])
        .arg(&dir)
        .output()
        .unwrap();
    drop(attacker);
    unharmed("compare --interleave", &out, &precious, &dir.join("unused"));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn fleet_run_into_another_users_directory_writes_no_manifest_through_a_link() {
    common::needs_root("it creates a user and runs oscycles as root in that user's directory");
    let _alone = as_root_alone();
    let _unprotected = Unprotected::set();
    let user = OtherUser::create();
    let (root, precious, dir) = stage(&user, "foreign-fleet");
    // The user's link where the manifest goes.
    let link = dir.join("manifest.json");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(user.uid), Some(user.uid)).unwrap();
    // An Ansible that lists one host and whose play fails at once.
    let ansible = root.join("ansible");
    std::fs::create_dir_all(ansible.join("bin")).unwrap();
    for (tool, out) in [
        ("ansible-inventory", r#"{"_meta": {"hostvars": {"h1": {}}}, "all": {"children": ["ungrouped"]}, "ungrouped": {"hosts": ["h1"]}}"#),
        ("ansible-playbook", r#"{"plays": [], "stats": {}}"#),
    ] {
        let p = ansible.join("bin").join(tool);
        std::fs::write(&p, format!("#!/bin/sh\necho '{out}'\nexit 2\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(root.join("inv"), "h1\n").unwrap();
    let out = Command::new(bin())
        .env("OSCYCLES_ANSIBLE_DIR", &ansible)
        .env("PATH", "/usr/bin:/bin")
        .args(["fleet", "run", "--inventory", root.join("inv").to_str().unwrap(), "--suite", "syscall", "--db"])
        .arg(root.join("s.sqlite"))
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    unharmed("fleet run --out", &out, &precious, &dir.join("unused"));
    let _ = std::fs::remove_dir_all(&root);
}

/// A directory another user owns first on root's PATH: root runs no
/// program from it (oscycles keeps only PATH's directories no other user
/// can change, and says which it left out).
#[test]
fn a_path_directory_of_another_user_never_makes_root_run_their_program() {
    let user = OtherUser::create();
    let (root, _, dir) = stage(&user, "foreign-path");
    let theirs = dir.join("bin");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(user.uid), Some(user.uid)).unwrap();
    let marker = root.join("ran");
    let qemu = theirs.join("qemu-system-x86_64");
    std::fs::write(&qemu, format!("#!/bin/sh\nid > {}\nexit 1\n", marker.display())).unwrap();
    std::fs::set_permissions(&qemu, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(&qemu, Some(user.uid), Some(user.uid)).unwrap();
    let results = root.join("results");
    std::fs::create_dir(&results).unwrap();
    let out = Command::new(bin())
        .env("PATH", format!("{}:{}", theirs.display(), std::env::var("PATH").unwrap_or_default()))
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--env", "qemu-tcg", "--rounds", "1", "--quiet"])
        .args(["--init-timeout", "5", "--kernel", "/bin/true", "--results"])
        .arg(&results)
        .arg("--db")
        .arg(root.join("s.sqlite"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!marker.exists(), "root ran the other user's program: {}", std::fs::read_to_string(&marker).unwrap_or_default());
    assert!(err.contains(&format!("PATH: left out '{}'", theirs.display())), "{err}");
    assert!(err.contains("belongs to uid"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

/// TMPDIR naming another user's directory: root's temporary directories
/// (the IPC case's FIFOs, `list`'s exec helpers) go into /tmp instead.
#[test]
fn a_tmpdir_of_another_user_is_left_out() {
    let user = OtherUser::create();
    let (root, _, dir) = stage(&user, "foreign-tmpdir");
    let out = Command::new(bin()).env("TMPDIR", &dir).args(["list", "proc.exec"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("TMPDIR: left out '{}'", dir.display())), "{err}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "root made nothing in the other user's directory");
    let _ = std::fs::remove_dir_all(&root);
}

/// Programs root is told to run by an option or a variable (`--a-exe`,
/// `--uml-kernel`, OSCYCLES_ANSIBLE_DIR's Ansible, an executable
/// `--inventory`): one another user owns, or one in that user's directory,
/// is refused (exit 2) and never run.
#[test]
fn a_program_another_user_owns_or_can_swap_is_never_run_by_root() {
    common::needs_root("it creates a user and names that user's programs to a root oscycles");
    let user = OtherUser::create();
    let (root, _, dir) = stage(&user, "foreign-program");
    let marker = root.join("ran");
    let script = format!("#!/bin/sh\nid >> {}\nexit 1\n", marker.display());
    let plant = |at: &Path| {
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, &script).unwrap();
        std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::chown(at, Some(user.uid), Some(user.uid)).unwrap();
    };
    // Theirs in root's own directory, and root's-looking names in theirs.
    let owned = root.join("bin/prog");
    plant(&owned);
    let swappable = dir.join("prog");
    plant(&swappable);
    let ansible = dir.join("ansible");
    plant(&ansible.join("bin/ansible-playbook"));
    plant(&ansible.join("bin/ansible-inventory"));
    let results = root.join("results");
    std::fs::create_dir(&results).unwrap();
    let db = root.join("s.sqlite");
    let r = results.to_str().unwrap();
    let d = db.to_str().unwrap();
    for prog in [&owned, &swappable] {
        let p = prog.to_str().unwrap();
        let cases: [(&str, Vec<&str>); 3] = [
            ("--a-exe", vec!["compare", "--interleave", "5", "--a-exe", p, "--results", r]),
            ("--uml-kernel", vec!["run", "--env", "uml", "--uml-kernel", p, "--suite", "syscall", "--results", r, "--db", d]),
            ("--inventory", vec!["fleet", "run", "--inventory", p, "--suite", "syscall", "--db", d, "--out", r]),
        ];
        for (what, args) in cases {
            // An Ansible of root's own for the inventory case: only the inventory is theirs.
            let out = Command::new(bin()).env("PATH", "/usr/bin:/bin").args(&args).output().unwrap();
            refused_unrun(&format!("{what} {p}"), &out, &marker);
        }
    }
    let inv = root.join("inv");
    std::fs::write(&inv, "h1\n").unwrap();
    let out = Command::new(bin())
        .env("OSCYCLES_ANSIBLE_DIR", &ansible)
        .env("PATH", "/usr/bin:/bin")
        .args(["fleet", "run", "--inventory", inv.to_str().unwrap(), "--suite", "syscall", "--db", d, "--out", r])
        .output()
        .unwrap();
    refused_unrun("OSCYCLES_ANSIBLE_DIR", &out, &marker);
    let _ = std::fs::remove_dir_all(&root);
}

/// Refused with exit 2 naming the owner, and the program never ran.
fn refused_unrun(what: &str, out: &Output, marker: &Path) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!marker.exists(), "{what}: root ran the other user's program: {}", std::fs::read_to_string(marker).unwrap_or_default());
    assert_eq!(out.status.code(), Some(2), "{what}: refused as bad usage: {err}");
    assert!(err.contains("belongs to uid"), "{what}: the owner named: {err}");
}

/// The SQLite store (issue 58, "not covered" item 1): root's `--db` in
/// another user's directory is refused (the walk of every directory above
/// it), and so is one in a sticky directory every user writes while the
/// kernel follows other users' links there (SQLite makes its -journal,
/// -wal and -shm files beside the store by name); with the protections on,
/// the sticky directory takes the store.
#[test]
fn a_store_in_another_users_directory_or_an_unprotected_shared_one_is_refused() {
    common::needs_root("it creates a user and changes fs.protected_* for a moment");
    let _alone = as_root_alone();
    let user = OtherUser::create();
    let (root, precious, dir) = stage(&user, "foreign-store");
    let results = root.join("results");
    std::fs::create_dir(&results).unwrap();
    let db = |d: &Path| ["--db".to_string(), d.join("s.sqlite").display().to_string()];
    let args = db(&dir);
    let out = tiny(&results, &[&args[0], &args[1]]);
    unharmed("--db in their directory", &out, &precious, &root.join("unused"));
    assert!(!dir.join("s.sqlite").exists(), "no store made there");
    let shared = root.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let args = db(&shared);
    {
        let _unprotected = Unprotected::set();
        let hard = "/proc/sys/fs/protected_hardlinks";
        let saved = std::fs::read_to_string(hard).unwrap();
        std::fs::write(hard, "0").unwrap();
        let out = tiny(&results, &[&args[0], &args[1]]);
        std::fs::write(hard, saved.trim()).unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("fs.protected_symlinks"), "the sentence names what to change: {err}");
    }
    let protect = ["symlinks", "hardlinks"].map(|k| {
        let p = format!("/proc/sys/fs/protected_{k}");
        let v = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, "1").unwrap();
        (p, v)
    });
    let out = tiny(&results, &[&args[0], &args[1]]);
    for (p, v) in &protect {
        std::fs::write(p, v.trim()).unwrap();
    }
    assert!(out.status.success(), "a sticky directory with the kernel's protections: {}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&root);
}
