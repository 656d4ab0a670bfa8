"""How the scripts/validate* scripts run other programs, and the check that they are declared.

Every external program a validate script runs goes through `run` or `popen` here. Both look the
program up in scripts/programs (the declared list that scripts/setup installs from):

- a program missing from that list is a mistake in the script: it stops naming the file to add
  it to, so that the next missing install step is caught by the test suite, not by a new user;
- a declared program that is not installed stops the script with one sentence naming
  scripts/setup, not a traceback.

    python3 scripts/tools.py audit    # every program each scripts/validate* runs, checked

`audit` reads the scripts' source (Python's ast): each call of run/popen whose command is a list
literal names its program in the first string (after `taskset -c CPUS`). It fails on a program
not in scripts/programs, and on a validate script that imports subprocess (it would bypass this).
The project's own programs (oscycles, scripts/setup) are passed as variables, not literals.
"""
import ast
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
# Wrappers and how many of their own arguments come before the program they start.
WRAPPERS = {"taskset": 2}


def declared():
    """scripts/programs as {program: package}."""
    out = {}
    with open(PROGRAMS) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if len(words) >= 3:
                out[words[0]] = words[1]
    return out


def program_of(cmd):
    """The program a command line starts: the first word, or what a wrapper starts."""
    i = 0
    while i < len(cmd) and os.path.basename(str(cmd[i])) in WRAPPERS:
        i += 1 + WRAPPERS[os.path.basename(str(cmd[i]))]
    return str(cmd[i]) if i < len(cmd) else str(cmd[0])


def _check(cmd):
    script = os.path.basename(sys.argv[0])
    names = {str(cmd[0]), program_of(cmd)}
    table = declared()
    for name in sorted(names):
        if os.sep in name:
            continue  # the project's own programs, by path
        if name not in table:
            sys.exit(f"{script}: runs '{name}', which scripts/programs does not declare: add it there with its Debian package")
        if shutil.which(name) is None:
            sys.exit(f"{script}: '{name}' is not installed: run scripts/setup validate (as root) to install {table[name]}")


def run(cmd, check=True, capture=True, **kw):
    """subprocess.run for a declared program; output captured as text unless capture=False."""
    _check(cmd)
    if capture:
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
    return subprocess.run(cmd, check=check, **kw)


def popen(cmd, **kw):
    """subprocess.Popen for a declared program."""
    _check(cmd)
    return subprocess.Popen(cmd, **kw)


PIPE, STDOUT, DEVNULL = subprocess.PIPE, subprocess.STDOUT, subprocess.DEVNULL


def calls(path):
    """The literal programs a script runs through run/popen, and whether it imports subprocess."""
    tree = ast.parse(open(path).read(), path)
    found, imports = set(), False
    # `cmd = ["runsc", ...]` then run(cmd): a name bound to a list literal stands for it.
    lists = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    lists.setdefault(t.id, []).append(node.value)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "subprocess" for a in node.names):
            imports = True
        if isinstance(node, ast.ImportFrom) and node.module == "subprocess":
            imports = True
        if not (isinstance(node, ast.Call) and node.args):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if name not in ("run", "popen", "sh"):
            continue
        first = node.args[0]
        if isinstance(first, ast.BinOp):  # ["perf", "bench"] + args
            first = first.left
        candidates = lists.get(first.id, []) if isinstance(first, ast.Name) else [first]
        for lit in candidates:
            if not isinstance(lit, ast.List):
                continue
            words = [e.value if isinstance(e, ast.Constant) else None for e in lit.elts]
            prog = program_of([w if w is not None else "?" for w in words])
            for w in {words[0] if words else None, prog}:
                if isinstance(w, str) and w != "?":
                    found.add(w)
    return found, imports


def audit():
    table = declared()
    bad = []
    scripts = sorted(p for p in os.listdir(HERE) if p.startswith("validate"))
    for s in scripts:
        progs, imports = calls(os.path.join(HERE, s))
        if imports:
            bad.append(f"scripts/{s} imports subprocess: run programs through scripts/tools.py (run, popen)")
        for p in sorted(progs - set(table)):
            bad.append(f"scripts/{s} runs '{p}', which scripts/programs does not declare")
        print(f"scripts/{s}: {' '.join(sorted(progs))}")
    for b in bad:
        print(b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:] != ["audit"]:
        sys.exit("usage: python3 scripts/tools.py audit")
    sys.exit(audit())
