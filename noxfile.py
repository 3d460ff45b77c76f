"""Sessions: one per package (installed alone), `integration` (the cross-package tests in
tests/ with everything installed), `tests` (every test in one environment), `demo` (the main job),
`docs` (the documentation site, built strictly, with its examples run), `lint` (ruff with the
root ruff.toml).

`nox` with no arguments runs `lint`, the package sessions and `integration`: every test once,
each package's tests in an environment holding only that package and what it declares; then
`integration` builds the documentation in its environment (everything is installed there
already), as `docs` does.

torch is large, so it is installed once into `.nox/_shared_torch` (pinned by constraints.txt,
which on our machines resolves to the CPU wheel on disk) and every session's virtualenv sees
it through a `.pth` file. pip then treats `torch>=2.11` as already satisfied, while our own
packages and their other dependencies are still installed per session, so a package's
session holds only what that package declares. Our packages are built without build isolation
(setuptools comes with the shared torch): an isolated build makes a fresh environment and
installs setuptools into it for every package, which took most of an install's time.

Tests run in one process per core (pytest-xdist, at most 4; PTC_TEST_WORKERS=1 for one):
CI's two cores halve the suite's time, since most tests spend it in single-threaded Python
(capture, code generation) or in one g++ at a time.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sys

import nox

ROOT = pathlib.Path(__file__).parent
CONSTRAINTS = ROOT / "constraints.txt"
SHARED_TORCH = ROOT / ".nox" / "_shared_torch"

# Our packages and the ones of ours each depends on (mirrors the pyproject files; the
# boundary test in tests/ checks that imports agree with them).
PACKAGES: dict[str, list[str]] = {
    "fake_tensor": [],
    "guards": ["fake_tensor"],
    "capture": ["fake_tensor", "guards"],
    "aot_autograd": ["fake_tensor"],
    "inductor": ["fake_tensor", "aot_autograd"],
    "compiler": ["fake_tensor", "guards", "capture", "aot_autograd", "inductor"],
}

nox.options.sessions = ["lint", *PACKAGES, "integration"]
nox.options.reuse_existing_virtualenvs = True


def _pinned(requirement: str) -> str:
    for line in CONSTRAINTS.read_text().splitlines():
        if line.split("==")[0].strip() == requirement:
            return line.strip()
    raise KeyError(requirement)


def _share_torch(session: nox.Session) -> None:
    """Install torch once for all sessions and make this session's venv see it."""
    marker = SHARED_TORCH / ".complete"
    if not marker.exists():
        session.run_install(
            sys.executable, "-m", "pip", "install", "--quiet", "--target", str(SHARED_TORCH),
            _pinned("torch"), "numpy", "setuptools>=68", external=True,
        )
        marker.touch()
    site = session.run_install(
        "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        silent=True,
    ).strip()
    pathlib.Path(site, "_shared_torch.pth").write_text(str(SHARED_TORCH) + "\n")


def _install(session: nox.Session, *packages: str) -> None:
    closure: list[str] = []
    for name in packages:
        for dep in [*PACKAGES[name], name]:
            if dep not in closure:
                closure.append(dep)
    _share_torch(session)
    session.install("--no-build-isolation", "-c", str(CONSTRAINTS), *(f"./packages/{name}[test]" for name in closure),
                    "pytest-xdist")


def _pytest(session: nox.Session, *paths: str) -> None:
    """pytest over `paths` in PTC_TEST_WORKERS processes (default: one per core, at most 4;
    1 runs in this process). Tests are handed out a module at a time (`--dist loadscope`): a
    module's fixtures, such as the conformance corpus's run of every case, then run once."""
    workers = int(os.environ.get("PTC_TEST_WORKERS", min(os.cpu_count() or 1, 4)))
    parallel = ["-n", str(workers), "--dist", "loadscope"] if workers > 1 else ["-p", "no:xdist"]
    session.run("pytest", *parallel, *paths, *session.posargs, env={"HF_HUB_OFFLINE": "1"})


def _provide_chromium(session: nox.Session) -> None:
    """The compile report's browser test renders the report in Debian's chromium: installed
    here when it is missing and the machine allows it (root, apt-get, a reachable mirror).
    Otherwise nothing happens and that test skips, saying why. apt fails fast without a mirror
    (no retries, short timeouts), and each step has a cap."""
    if shutil.which("chromium") or not shutil.which("apt-get") or os.geteuid() != 0:
        return
    quick = ["-o", "Acquire::Retries=0", "-o", "Acquire::http::Timeout=10", "-qq"]
    for cap, command in (("120", ["update"]), ("300", ["install", "-y", "--no-install-recommends", "chromium"])):
        session.run("timeout", cap, "apt-get", *quick, *command, external=True, success_codes=list(range(256)),
                    env={"DEBIAN_FRONTEND": "noninteractive"})


def _package_session(name: str):
    def run(session: nox.Session) -> None:
        _install(session, name)
        if name == "compiler":
            _provide_chromium(session)
        _pytest(session, f"packages/{name}/tests")

    run.__doc__ = f"Install only ptc-{name} and its dependencies; run its tests."
    return run


for _name in PACKAGES:
    nox.session(name=_name)(_package_session(_name))


def _install_everything(session: nox.Session) -> None:
    _install(session, *PACKAGES)
    session.install("-c", str(CONSTRAINTS), "transformers")


@nox.session
def integration(session: nox.Session) -> None:
    """Install every package; run the cross-package, boundary and real-model tests in tests/,
    then build the documentation as `docs` does (about half a minute). With arguments
    (`nox -s integration -- -k name`) it runs the tests they select and builds nothing."""
    _install_everything(session)
    _pytest(session, "tests")
    if not session.posargs:
        _build_docs(session)


@nox.session
def tests(session: nox.Session) -> None:
    """Install every package; run all package tests and the cross-package tests in tests/."""
    _install_everything(session)
    _pytest(session, *(f"packages/{n}/tests" for n in PACKAGES), "tests")


# reuse_venv: a second run (e.g. `nox -s demo -- --model bert`) reuses the environment
# instead of reinstalling torch-adjacent dependencies and every package.
@nox.session(reuse_venv=True)
def demo(session: nox.Session) -> None:
    """The main job: compile a real model and report what happened and how fast."""
    _install_everything(session)
    session.run("python", "-m", "compiler.demo", *session.posargs, env={"HF_HUB_OFFLINE": "1"})


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site (Sphinx with MyST Markdown, the API reference from
    docstrings) with warnings as errors, after running the pages' examples (doctest builder).
    Output: build/docs/html/index.html. Nothing is fetched from the network while building."""
    _install(session, "compiler")
    _build_docs(session)


def _build_docs(session: nox.Session) -> None:
    """Run the pages' examples (the doctest builder, the only one that executes them), then
    write the HTML from the documents the first build parsed (one doctree folder for both)."""
    session.install("-c", str(CONSTRAINTS), "sphinx>=8", "myst-parser>=4")
    for builder in ("doctest", "html"):
        session.run("sphinx-build", "-W", "--keep-going", "-q", "-b", builder, "-d", "build/docs/doctrees",
                    "docs", f"build/docs/{builder}", env={"HF_HUB_OFFLINE": "1"})


@nox.session
def lint(session: nox.Session) -> None:
    """`ruff check` over the repository with ruff.toml's rules (a second or two)."""
    session.install("ruff")
    session.run("ruff", "check", ".", *session.posargs)
