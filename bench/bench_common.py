#!/usr/bin/python3
"""Helpers the benchmark scripts share (run_e2e.py, run_shapes.py, profile_overhead.py):
argument parsers, child processes with their resource usage, what the reports say about the
machine and the source tree, and the build of the previous release they compare with."""
import argparse
import hashlib
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
SOURCE_DIRS = ("runtime", "converter", "schema")


class SetupError(Exception):
    pass


# ----------------------------------------------------------------------------- arguments


def csv_ints(s):
    try:
        v = [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got '{s}'")
    if not v or min(v) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got '{s}'")
    return v


def csv_names(choices):
    def parse(s):
        v = [x.strip() for x in s.split(",") if x.strip()]
        bad = [x for x in v if x not in choices]
        if not v or bad:
            raise argparse.ArgumentTypeError(f"unknown {bad or s}; choose from {','.join(choices)}")
        return v
    return parse


def parser(description, doc, build_help):
    """The scripts' argument parser: the docstring as epilog, --build-dir (this build), and the
    configurations: --batch, --threads, --beam (comma-separated; every combination runs)."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=doc)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"), help=build_help)
    ap.add_argument("--batch", type=csv_ints, default=[1, 16])
    ap.add_argument("--threads", type=csv_ints, default=[1, 2])
    ap.add_argument("--beam", type=csv_ints, default=[1, 4])
    return ap


# ----------------------------------------------------------------------------- child processes


def load1():
    return round(os.getloadavg()[0], 2)


def run_child(cmd, env, timeout, log_path, cpu=None):
    """Runs cmd with stdout/stderr to files; returns (exit code, stdout text, rusage, wall s).
    cpu: pin the child to this CPU (None: the scheduler's choice)."""
    out_path = log_path + ".out"
    with open(out_path, "wb") as out, open(log_path + ".err", "wb") as err:
        t0 = time.perf_counter()
        pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=ROOT, preexec_fn=pin)
        deadline = t0 + timeout
        try:
            while True:
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                if pid == p.pid:
                    break
                if time.perf_counter() > deadline:
                    p.kill()
                    pid, status, ru = os.wait4(p.pid, 0)
                    p.returncode = -9
                    return 124, "", ru, time.perf_counter() - t0
                time.sleep(0.02)
        except BaseException:  # interrupted (Ctrl-C, SIGTERM): do not leave the child running
            p.kill()
            os.wait4(p.pid, 0)
            p.returncode = -9
            raise
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
    with open(out_path, encoding="utf-8", errors="replace") as f:
        return p.returncode, f.read(), ru, wall


def child_env(threads):
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(threads)
    env["OMP_WAIT_POLICY"] = "PASSIVE"
    return env


def run(cmd, what, timeout=None, **kw):
    """subprocess.run that raises SetupError with the command's output when it fails."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if r.returncode != 0:
        raise SetupError(f"{what} failed (exit {r.returncode}): {' '.join(cmd)}\n{(r.stdout + r.stderr)[-3000:]}")
    return r.stdout


def torch_peer_cmd(variant, model_dir):
    """The PyTorch peer (bench/torch_marian.py) of a variant (fp32, int8) on an HF checkpoint."""
    return [PY, os.path.join(HERE, "torch_marian.py"), "--variant", variant, "--model-dir", model_dir]


def finish(report_path, log, summary, failures):
    """End of a benchmark run: prints the report, the summary and the failures; the exit code."""
    with open(report_path, encoding="utf-8") as f:
        print(f.read())
    log(summary)
    if failures:
        log("FAILED:\n  " + "\n  ".join(failures))
        return 1
    return 0


def raise_interrupt(signum, frame):
    """SIGTERM handler: stop like Ctrl-C (children are killed, partial results kept)."""
    raise KeyboardInterrupt(f"signal {signum}")


# ----------------------------------------------------------------------------- outputs


def sha256(path):
    """Hex SHA-256 of a file (which generator or binary a result came from)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for blk in iter(lambda: f.read(1 << 20), b""):
            h.update(blk)
    return h.hexdigest()


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f]


def id_parity(path_a, path_b):
    """Share of identical lines over the common prefix (both files hold the first N sentences)."""
    a, b = read_lines(path_a), read_lines(path_b)
    n = min(len(a), len(b))
    if not n:
        return None
    return sum(x == y for x, y in zip(a[:n], b[:n])) / n


def fmt(v, nd=0, suffix=""):
    return "–" if v is None else f"{v:,.{nd}f}{suffix}"


def md_failures(failures):
    """The report's FAILURES section (no lines when there are none)."""
    return ["## FAILURES\n"] + [f"- {f}" for f in failures] + [""] if failures else []


def repo_relative(x):
    """x with every string path inside the repository made relative to its root (reports are
    committed: they name no machine's directories)."""
    if isinstance(x, str):
        return os.path.relpath(x, ROOT) if x.startswith(ROOT + os.sep) or x == ROOT else x
    if isinstance(x, dict):
        return {k: repo_relative(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [repo_relative(v) for v in x]
    return x


def repo_path(v):
    """A path argument as the report shows it: relative inside the repository, not shown outside."""
    if isinstance(v, str) and os.path.isabs(v):
        rel = os.path.relpath(v, ROOT)
        return "(outside the repository)" if rel.startswith("..") else rel
    return v


# ----------------------------------------------------------------------------- machine and tree


def _cpuinfo(key):
    """The first /proc/cpuinfo line's value for key (None where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_name():
    return _cpuinfo("model name") or platform.processor() or "?"


def cpu_flags():
    return set((_cpuinfo("flags") or "").split())


def newest_source():
    """(mtime, path) of the newest runtime/converter/schema source or bench/e2e_bench.cc."""
    best = (0.0, "")
    paths = [os.path.join(HERE, "e2e_bench.cc")]
    for d in SOURCE_DIRS:
        for dp, _, files in os.walk(os.path.join(ROOT, d)):
            paths += [os.path.join(dp, f) for f in files if f.endswith((".cc", ".h", ".hpp", ".fbs"))]
    for p in paths:
        try:
            best = max(best, (os.path.getmtime(p), p))
        except OSError:
            pass
    return best


def git_dirty_sources():
    try:
        r = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--"] + list(SOURCE_DIRS) +
                           ["bench/e2e_bench.cc"], capture_output=True, text=True)
        return [l[3:] for l in r.stdout.splitlines()]
    except OSError:
        return []


def git_rev():
    try:
        r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        return r.stdout.strip()
    except OSError:
        return "?"


def git_head(src):
    r = subprocess.run(["git", "-C", src, "rev-parse", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


# ----------------------------------------------------------------------------- the previous release


def add_baseline_args(ap, holds):
    """--baseline-build / --baseline-rev / --baseline-src: the build of the previous release
    (holding `holds`) the script compares this build with."""
    ap.add_argument("--baseline-build", default=None,
                    help=f"a build of the previous release holding {holds}; with --baseline-rev: checked to be "
                         "of that revision, or made there when missing (default build-baseline/)")
    ap.add_argument("--baseline-rev", default=None,
                    help="git revision of the previous release (a tag such as v0.1.0, or a commit)")
    ap.add_argument("--baseline-src", default=None,
                    help="checkout of --baseline-rev to build from (default: a detached git worktree created in "
                         "the system temp directory)")


def has_baseline(a):
    return bool(a.baseline_build or a.baseline_rev)


def _build_revision(bdir):
    """The revision a build directory was made from: the stamp ensure_baseline writes, else the
    git HEAD of its CMake source tree ("" when unknown)."""
    try:
        with open(os.path.join(bdir, "mtlite_baseline_rev")) as f:
            return f.read().strip()
    except OSError:
        pass
    try:
        with open(os.path.join(bdir, "CMakeCache.txt")) as f:
            home = next((l.split("=", 1)[1].strip() for l in f if l.startswith("CMAKE_HOME_DIRECTORY")), "")
        return git_head(home) if home else ""
    except OSError:
        return ""


def ensure_baseline(a, exes, targets, log):
    """The previous release's programs: exes {name: path inside a build}; built (cmake targets
    `targets`) from --baseline-rev into --baseline-build when missing. Returns ({name: path},
    revision or "" when --baseline-build is of an unknown revision). Raises SetupError."""
    if not has_baseline(a):
        raise SetupError("name the previous release: --baseline-build DIR or --baseline-rev REV")
    bdir = os.path.abspath(a.baseline_build or os.path.join(ROOT, "build-baseline"))
    paths = {n: os.path.join(bdir, p) for n, p in exes.items()}
    have_all = all(os.path.exists(p) for p in paths.values())
    if not a.baseline_rev:
        if not have_all:
            raise SetupError(f"--baseline-build {bdir} lacks " + ", ".join(p for p in paths.values()
                                                                          if not os.path.exists(p)))
        return paths, _build_revision(bdir)
    want = run(["git", "-C", ROOT, "rev-parse", a.baseline_rev + "^{commit}"], "git rev-parse").strip()
    if have_all:
        have = _build_revision(bdir)
        if have == want:
            return paths, want
        raise SetupError(f"{bdir} holds a build of {have or 'an unknown revision'}, not {a.baseline_rev} ({want}); "
                         "remove it or name another --baseline-build")
    src = os.path.abspath(a.baseline_src or os.path.join(tempfile.gettempdir(), f"mtlite-baseline-{want[:12]}"))
    if os.path.commonpath([src, ROOT]) == ROOT:
        raise SetupError(f"--baseline-src {src} is inside the repository; use a directory outside it")
    if not os.path.exists(src):
        log(f"git worktree add --detach {src} {a.baseline_rev}")
        run(["git", "-C", ROOT, "worktree", "add", "--detach", src, want], "git worktree add")
    if git_head(src) != want:
        raise SetupError(f"{src} is at {git_head(src) or '?'}, not {a.baseline_rev} ({want})")
    log(f"building the previous release ({a.baseline_rev}) into {bdir} (-j2; several minutes)")
    run(["cmake", "-S", src, "-B", bdir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DMTLITE_BUILD_TESTS=OFF",
         "-DMTLITE_BUILD_BENCH=ON", "-DMTLITE_BUILD_CONVERTER=ON"], "baseline configure")
    run(["cmake", "--build", bdir, "-j", "2", "--target"] + list(targets), "baseline build")
    with open(os.path.join(bdir, "mtlite_baseline_rev"), "w") as f:
        f.write(want + "\n")
    return paths, want
