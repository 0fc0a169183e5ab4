"""Fixtures of the Python package tests (run by ctest: `ctest --test-dir build -L python`).

The environment names the build tree: PYTHONPATH=<build>/python (the module under test),
MTLITE_PYTHON_BUILD_DIR (checked: the tests never run against a stale installed copy),
MTLITE_BIN (the CLI, for output comparisons), MTLITE_TEST_MODEL_DIR (demo.{int8,fp32}.mtlite).
Fixtures of scope "package" are made once for all the tests of this directory.
"""
import json
import os
import subprocess
import sys
import threading

import pytest

ROOT = os.environ.get("MTLITE_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DEV = os.path.join(ROOT, "tests", "data", "dev")
TOKENIZER_DATA = os.path.join(ROOT, "tests", "data", "tokenizer")
REFERENCE = os.path.join(ROOT, "tests", "reference")
DEMO_HF = os.path.join(ROOT, "models", "marian-en-de-tiny")
DEV_SETS = ["multi30k.val", "tatoeba.dev"]

sys.path.insert(0, REFERENCE)
from make_tokenizer_golden import read_lines  # noqa: E402  (lines split on "\n" only)


def _env(name):
    v = os.environ.get(name)
    if not v:
        raise pytest.UsageError(f"environment variable {name} is not set (run through ctest -L python)")
    return v


@pytest.fixture(scope="package")
def mtlite():
    build = os.path.realpath(_env("MTLITE_PYTHON_BUILD_DIR"))
    import mtlite as m
    where = os.path.realpath(m.__file__)
    assert where.startswith(build + os.sep), f"imported {where}, not the build tree's module under {build}"
    return m


@pytest.fixture(scope="package")
def cli():
    b = _env("MTLITE_BIN")
    assert os.access(b, os.X_OK), f"MTLITE_BIN={b} is not an executable"
    return b


@pytest.fixture(scope="package")
def model_dir():
    return _env("MTLITE_TEST_MODEL_DIR")


@pytest.fixture(scope="package")
def int8_path(model_dir):
    p = os.path.join(model_dir, "demo.int8.mtlite")
    assert os.path.exists(p), f"missing {p} (built by the demo_models target)"
    return p


@pytest.fixture(scope="package")
def fp32_path(model_dir):
    p = os.path.join(model_dir, "demo.fp32.mtlite")
    assert os.path.exists(p), f"missing {p} (built by the demo_models target)"
    return p


@pytest.fixture(scope="package")
def int8_model(mtlite, int8_path):
    return mtlite.Model(int8_path)




def dev_lines(name, side="en"):
    return read_lines(os.path.join(DEV, f"{name}.{side}"))


def in_threads(work, keys):
    """Runs work(key) on one thread per key, all at once; returns {key: result}, or raises the
    first exception of a thread."""
    results, errors = {}, []

    def run(key):
        try:
            results[key] = work(key)
        except Exception as e:  # re-raised below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def run_cli(cli, args, lines, check=True):
    """`mtlite ARGS` with the lines on stdin; returns (returncode, stdout lines, stderr)."""
    p = subprocess.run([cli] + list(args), input="".join(l + "\n" for l in lines).encode("utf-8"),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900)
    out = p.stdout.decode("utf-8").split("\n")
    if out and out[-1] == "":
        out.pop()
    if check and p.returncode != 0:
        raise AssertionError(f"mtlite {' '.join(args)} exited {p.returncode}: {p.stderr.decode()[-2000:]}")
    return p.returncode, out, p.stderr.decode("utf-8", "replace")


@pytest.fixture(scope="package")
def multi_model(mtlite, tmp_path_factory):
    """A random checkpoint whose vocabulary holds OPUS-MT language codes (make_random_checkpoint.py
    --preset multi), converted with mtlite.convert."""
    d = tmp_path_factory.mktemp("multi")
    hf = d / "hf"
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE")
    subprocess.run([sys.executable, os.path.join(REFERENCE, "make_random_checkpoint.py"), str(hf),
                    "--preset", "multi"], check=True, env=env, stdout=subprocess.DEVNULL, timeout=600)
    out = d / "multi.int8.mtlite"
    report = mtlite.convert(hf, out, quantize="int8")
    assert report["file_bytes"] == os.path.getsize(out)
    return str(out)


@pytest.fixture(scope="package")
def lang_code_cases():
    with open(os.path.join(TOKENIZER_DATA, "lang_codes.jsonl"), encoding="utf-8") as f:
        return [json.loads(l) for l in f]
