"""The built package installs and works outside the checkout: the wheel with the native spawner
(built by the C compiler ``scripts/install-test-deps.sh`` installs), the sdist on a machine
without a compiler with the Python spawner."""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from installs import REPO, Installed, install_into_fresh_environment, scratch_directory

pytestmark = pytest.mark.e2e  # starts real programs


def _compare(installed: Installed, workdir: Path) -> dict:
    """A real ``pairbench compare`` from the installed package: its result document."""
    done = installed.run("pairbench", "compare", "--runs", "5", "--seed", "1", "--no-store", "-q",
                         "--json", "result.json", "--export-html", "report.html", "--name", "true",
                         "--name", "sleep", "true", "sleep 0.001", cwd=workdir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sleep" in done.stdout and (workdir / "report.html").stat().st_size > 10_000
    return json.loads((workdir / "result.json").read_text())


def _module_path(installed: Installed, workdir: Path) -> Path:
    done = installed.run("python", "-c", "import pairbench; print(pairbench.__file__)", cwd=workdir)
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip())


def test_the_wheel_holds_the_native_spawner_and_is_tagged_for_its_platform_only(built):
    names = zipfile.ZipFile(built["wheel"]).namelist()
    assert "pairbench/measure/pairbench-spawner" in names
    assert any(n.endswith("/include/pairbench.h") for n in names)
    assert "pairbench/report/templates/report.html.j2" in names
    arch = platform.machine()
    assert built["wheel"].name.startswith("pairbench-0.")
    assert built["wheel"].name.endswith(f"-py3-none-manylinux_2_17_{arch}.manylinux2014_{arch}.whl")


def test_auditwheel_finds_the_wheel_consistent_with_its_manylinux_tag(built):
    # auditwheel (PyPI's own check of what a manylinux wheel may need) on the wheel as built: the spawner
    # is linked statically, so it needs no shared library and no glibc symbol beyond manylinux_2_17's
    done = subprocess.run([str(Path(sys.executable).with_name("auditwheel")), "show", str(built["wheel"])],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    text = " ".join(done.stdout.split())
    tag = re.search(r'consistent with the following platform tag: "manylinux_(\d+)_(\d+)_', text)
    assert tag is not None, text
    assert (int(tag[1]), int(tag[2])) <= (2, 17) and "requires no external shared libraries" in text


def test_the_sdist_holds_the_build_script_and_the_spawner_source_but_no_built_program(built):
    with tarfile.open(built["sdist"]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {"setup.py", "pyproject.toml", "README.md", "src/pairbench/measure/spawner.c"} <= names
    assert "src/pairbench/measure/pairbench-spawner" not in names


def test_the_sdist_and_the_wheel_carry_the_mit_license_pyproject_declares(built):
    declared = (REPO / "pyproject.toml").read_text()
    assert 'license = "MIT"' in declared and 'license-files = ["LICENSE"]' in declared
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License") and "THE SOFTWARE IS PROVIDED \"AS IS\"" in text
    with tarfile.open(built["sdist"]) as sdist:
        member = next(m for m in sdist.getmembers() if m.name.split("/", 1)[-1] == "LICENSE")
        assert sdist.extractfile(member).read().decode() == text
    wheel = zipfile.ZipFile(built["wheel"])
    licenses = [n for n in wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
    assert len(licenses) == 1 and wheel.read(licenses[0]).decode() == text
    metadata = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata


@pytest.mark.slow
def test_the_wheel_installs_in_a_fresh_environment_and_compares_with_the_native_spawner(
        built, wheelhouse, tmp_path):
    with scratch_directory("pairbench-wheel-") as scratch:
        root, workdir = Path(scratch) / "venv", tmp_path
        assert not root.is_relative_to(REPO) and not workdir.is_relative_to(REPO)
        installed = install_into_fresh_environment(root, built["wheel"], wheelhouse)
        _check_wheel_install(installed, root, workdir)


def _check_wheel_install(installed: Installed, root: Path, workdir: Path) -> None:
    assert _module_path(installed, workdir).is_relative_to(root)
    result = _compare(installed, workdir)
    assert result["environment"]["executor"]["spawner"] == "native"
    assert [s["name"] for s in result["sides"]] == ["true", "sleep"]
    header = installed.run("pairbench", "include-dir", cwd=workdir).stdout.strip()
    assert (Path(header) / "pairbench.h").is_file() and Path(header).is_relative_to(root)


@pytest.mark.slow
def test_the_sdist_installs_without_a_compiler_and_compares_with_the_python_spawner(
        built, wheelhouse, tmp_path):
    no_compiler = {**wheelhouse, "CC": str(tmp_path / "no-such-compiler")}
    with scratch_directory("pairbench-sdist-") as scratch:
        root = Path(scratch) / "venv"
        installed = install_into_fresh_environment(root, built["sdist"], no_compiler)
        assert _module_path(installed, tmp_path).is_relative_to(root)
        assert not list(root.rglob("pairbench-spawner"))
        result = _compare(installed, tmp_path)
        assert result["environment"]["executor"]["spawner"] == "python"


def test_the_readme_installs_the_wheel_the_build_makes(built):
    install = (REPO / "README.md").read_text().split("## Install", 1)[1].split("\n## ", 1)[0]
    assert f"pip install dist/{built['wheel'].name}" in install
