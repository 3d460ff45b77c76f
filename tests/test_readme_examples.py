"""Each package's README: its Python examples run as written, and its install command names
exactly the package and the siblings its pyproject declares (our packages are not on PyPI, so
pip must be given every one of them), with the constraints file."""

from __future__ import annotations

import linecache
import pathlib
import re
import shlex
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def _blocks(package: str, language: str) -> list[str]:
    text = (ROOT / "packages" / package / "README.md").read_text()
    return [body for lang, body in FENCE.findall(text) if lang == language]


def _siblings(package: str) -> set[str]:
    """The package and every ptc-* package it depends on, directly or not, by folder name."""
    project = tomllib.loads((ROOT / "packages" / package / "pyproject.toml").read_text())["project"]
    found = {package}
    for dep in project["dependencies"]:
        if dep.startswith("ptc-"):
            found |= _siblings(dep.removeprefix("ptc-"))
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_readme_example_runs(package, capsys):
    (example,) = _blocks(package, "python")[:1]
    filename = f"packages/{package}/README.md (example)"
    # capture reads the user's source lines (graphs' source lines, error messages) through linecache
    linecache.cache[filename] = (len(example), None, example.splitlines(True), filename)
    exec(compile(example, filename, "exec"), {"__name__": f"readme_{package}"})
    capsys.readouterr()


@pytest.mark.parametrize("package", PACKAGES)
def test_readme_install_command_names_the_package_and_its_siblings(package):
    commands = [line for block in _blocks(package, "bash") for line in [block.replace("\\\n", " ")] if "pip install" in line]
    assert commands, f"packages/{package}/README.md says nothing about pip install"
    words = shlex.split(commands[0].split("pip install", 1)[1])
    assert words[:2] == ["-c", "constraints.txt"]
    assert {w.removeprefix("./packages/") for w in words[2:]} == _siblings(package)
