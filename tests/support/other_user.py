"""What the tests that run something as another, unprivileged user need: that user, the command that
becomes it, and a place it can read holding what it runs.

As root (CI), the tests of permission-dependent branches run their processes as ``nobody``
(``setpriv``). That user must reach the Python interpreter, the installed packages and this
checkout's ``src`` and ``tests``; none of them may sit below a directory it cannot enter (a clone in
a 0700 directory, as ``mktemp -d`` makes it, or a virtual environment based on a Python under
root's home). :func:`shared_environment` arranges it: a directory every user may enter (0755) that
holds

* ``venv``: a virtual environment of a Python the user can run (this one, or another of the same
  version on the machine, else a copy of this one's installation), without packages of its own:
  a ``.pth`` file puts the checkout's ``src`` and this environment's ``site-packages`` on its path;
  its ``bin`` has ``pairbench``;
* copies (hard links where the file system allows, else copies) of whatever of those the user
  cannot reach where they are, and of the checkout's files the tests read (``tests``, ``scripts``,
  ``pyproject.toml``) when ``with_tests``.

Not as root, the user is this one and nothing is copied. When no unprivileged user can be
become (no ``setpriv`` or ``runuser``, no such user), :func:`drop_command` raises
:class:`CannotDrop` with the reason: the caller fails with it, it never skips silently.

Runnable as a script for ``scripts/test-unprivileged.sh``:
``python other_user.py prepare DEST`` prints ``PYTHON=...``, ``ROOT=...`` and ``LIBRARY_PATH=...``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
UNPRIVILEGED = "nobody"
_CHECKOUT_FILES = ("tests", "scripts", "pyproject.toml", "setup.py")


class CannotDrop(Exception):
    """Running as another user is not possible here; the message says why."""


def is_root() -> bool:
    return os.geteuid() == 0


def drop_command(user: str = UNPRIVILEGED) -> list[str]:
    """The command prefix that runs a program as ``user`` with its group and no other (empty when
    this process is not root: it is unprivileged already)."""
    if not is_root():
        return []
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise CannotDrop(f"there is no user {user!r} to run the unprivileged tests as") from None
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups"]
    if shutil.which("runuser"):
        return ["runuser", "-u", user, "--"]
    raise CannotDrop("neither setpriv nor runuser (util-linux) is installed, so root cannot run the "
                     "unprivileged tests as another user; install util-linux")


def user_ids(user: str = UNPRIVILEGED) -> tuple[int, int]:
    """The uid and gid the tests run as when unprivileged (this process's own when not root)."""
    if not is_root():
        return os.getuid(), os.getgid()
    entry = pwd.getpwnam(user)
    return entry.pw_uid, entry.pw_gid


def private_to(path: Path, uid: int, gid: int) -> Path:
    """``path`` (a new directory, and everything below it) made the user's own."""
    for directory, names, files in os.walk(path):
        os.chown(directory, uid, gid)
        for name in (*names, *files):
            os.lchown(os.path.join(directory, name), uid, gid)
    return path


def user_reaches(drop: list[str], path: Path, *, execute: bool = False) -> bool:
    """Whether the user of ``drop`` can read ``path`` (and enter or run it with ``execute``)."""
    test = ["test", "-x" if execute else "-r", str(path)]
    return subprocess.run([*drop, *test], capture_output=True, check=False, timeout=30).returncode == 0


@dataclass
class SharedEnvironment:
    """What :func:`shared_environment` made: the root of the shared directory, the checkout's
    root as the user reaches it (``checkout``), the interpreter to run, and the environment
    variables it needs (``env``: ``LD_LIBRARY_PATH`` for a copied interpreter)."""

    root: Path
    checkout: Path
    python: Path
    env: dict[str, str] = field(default_factory=dict)
    copied: list[str] = field(default_factory=list)

    @property
    def bin(self) -> Path:
        return self.python.parent

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def shared_environment(drop: list[str] | None = None, *, with_tests: bool = False,
                       checkout: Path = REPO) -> SharedEnvironment:
    """A Python with pairbench that the user of ``drop`` can run (see the module docstring)."""
    drop = drop_command() if drop is None else drop
    root = Path(tempfile.mkdtemp(prefix="pairbench-other-user-", dir=parent_near(checkout)))
    root.chmod(0o755)
    shared = SharedEnvironment(root, checkout, Path(sys.executable))
    try:
        if not drop:
            return shared
        _place_checkout(shared, drop, checkout, with_tests)
        interpreter, library = _interpreter(shared, drop)
        site = Path(sysconfig.get_paths()["purelib"])
        if not user_reaches(drop, site, execute=True):
            site = _linked_copy(site, root / "site-packages")
            shared.copied.append("site-packages")
        if library:
            shared.env["LD_LIBRARY_PATH"] = str(library)
        shared.python = _venv(root / "venv", interpreter, [shared.checkout / "src", site], shared.env)
        _make_readable(root)
        return shared
    except BaseException:
        shared.cleanup()
        raise


def parent_near(path: Path) -> str | None:
    """A directory every user may enter on ``path``'s file system (hard links then work), else the
    default temporary directory."""
    device = path.stat().st_dev
    for candidate in (os.environ.get("TMPDIR"), "/tmp", "/var/tmp", tempfile.gettempdir()):
        if candidate and os.path.isdir(candidate) and os.stat(candidate).st_dev == device \
                and os.stat(candidate).st_mode & 0o001:
            return candidate
    return None


def _place_checkout(shared: SharedEnvironment, drop: list[str], checkout: Path, with_tests: bool) -> None:
    """The checkout's ``src`` (and the files the tests read) where the user reaches them."""
    wanted = ("src", *(_CHECKOUT_FILES if with_tests else ()))
    if all(user_reaches(drop, checkout / name, execute=(checkout / name).is_dir())
           for name in wanted if (checkout / name).exists()):
        return
    shared.checkout = shared.root / "checkout"
    shared.checkout.mkdir()
    for name in wanted:
        source = checkout / name
        if source.is_dir():
            _linked_copy(source, shared.checkout / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif source.exists():
            shutil.copy2(source, shared.checkout / name)
    shared.copied.append("checkout")


def _interpreter(shared: SharedEnvironment, drop: list[str]) -> tuple[Path, Path | None]:
    """A Python of this version the user can run, and the library directory it needs (a copy of
    this installation's, when the copy is what it runs)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [Path(sys.executable).resolve(), Path(getattr(sys, "_base_executable", sys.executable)).resolve(),
                  *(Path(d) / f"python{version}" for d in ("/usr/bin", "/usr/local/bin", "/bin"))]
    for candidate in dict.fromkeys(candidates):
        if candidate.is_file() and _runs_as(drop, candidate, version):
            return candidate, None
    prefix = _linked_copy(Path(sys.base_prefix), shared.root / "python", ignore=shutil.ignore_patterns(
        "__pycache__", "test", "tests", "idlelib", "tkinter", "turtledemo", "site-packages"))
    shared.copied.append("python")
    return prefix / "bin" / f"python{version}", prefix / "lib"


def _runs_as(drop: list[str], python: Path, version: str) -> bool:
    code = "import sys, venv; print('%d.%d' % sys.version_info[:2])"
    # through env: setpriv itself may start a program its user could not (it finds it before it drops)
    done = subprocess.run([*drop, "env", str(python), "-I", "-c", code], capture_output=True, text=True, check=False,
                          timeout=60, cwd="/")
    return done.returncode == 0 and done.stdout.strip() == version


def _linked_copy(source: Path, destination: Path, ignore=None) -> Path:
    """``source`` at ``destination``: hard links where the file system allows them (a second for
    thousands of files), else copies; directories readable and enterable by everyone."""
    try:
        shutil.copytree(source, destination, symlinks=True, ignore=ignore, copy_function=os.link)
    except (OSError, shutil.Error):
        shutil.rmtree(destination, ignore_errors=True)
        shutil.copytree(source, destination, symlinks=True, ignore=ignore)
    return destination


def _venv(where: Path, interpreter: Path, paths: list[Path], env: dict[str, str]) -> Path:
    """A virtual environment of ``interpreter`` (no pip) whose path holds ``paths``, with a
    ``pairbench`` command; its Python."""
    subprocess.run([str(interpreter), "-m", "venv", "--without-pip", str(where)], check=True, capture_output=True,
                   timeout=120, env={**os.environ, **env})
    python = where / "bin" / "python"
    site = next((where / "lib").glob("python*/site-packages"))
    (site / "pairbench-shared.pth").write_text("".join(f"{p}\n" for p in paths))
    script = where / "bin" / "pairbench"
    script.write_text(f"#!{python}\nimport sys\nfrom pairbench.__main__ import entry_point\nsys.exit(entry_point())\n")
    script.chmod(0o755)
    return python


def _make_readable(root: Path) -> None:
    """Every directory below ``root`` enterable and every file readable by everyone (the copies'
    own modes are their sources'; a hard link shares its source's mode, left as it is)."""
    for directory, _, files in os.walk(root):
        os.chmod(directory, os.stat(directory).st_mode | 0o555)
        for name in files:
            path = os.path.join(directory, name)
            if not os.path.islink(path) and os.stat(path).st_nlink == 1:
                os.chmod(path, os.stat(path).st_mode | 0o444)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] != "prepare":
        sys.stderr.write("usage: other_user.py prepare\n")
        return 2
    try:
        shared = shared_environment(with_tests=True)
    except CannotDrop as why:
        sys.stderr.write(f"{why}\n")
        return 3
    print(f"PYTHON={shared.python}\nROOT={shared.checkout}\nSHARED={shared.root}\n"
          f"LIBRARY_PATH={shared.env.get('LD_LIBRARY_PATH', '')}\nCOPIED={','.join(shared.copied)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
