"""Atomic writes that never follow a planted link and keep the mode of the file they replace."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from planted_links import OTHER_USER as OTHER
from planted_links import needs_root, planted_link, shared_directory

from pairbench.outputs import UnsafeLinkError, may_follow
from pairbench.store.files import atomic_write_text

STICKY_SHARED = stat.S_IFDIR | 0o1777  # like /tmp


def _stat(mode: int, uid: int) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, uid, 0, 0, 0, 0, 0))


@pytest.mark.parametrize(("link_uid", "dir_mode", "dir_uid", "follow"), [
    (1000, STICKY_SHARED, 0, True),  # my own link in /tmp
    (OTHER, STICKY_SHARED, 0, False),  # someone else's link in /tmp: the attack
    (OTHER, STICKY_SHARED, OTHER, True),  # the owner of a sticky directory may link in it
    (OTHER, stat.S_IFDIR | 0o0777, 0, True),  # world-writable but not sticky: the kernel follows
    (OTHER, stat.S_IFDIR | 0o1755, 0, True),  # sticky but not world-writable
    (OTHER, stat.S_IFDIR | 0o0755, OTHER, True),  # another user's own directory
])
def test_links_are_followed_by_the_kernels_protected_symlinks_rule(link_uid, dir_mode, dir_uid, follow):
    assert may_follow(_stat(stat.S_IFLNK | 0o777, link_uid), _stat(dir_mode, dir_uid), euid=1000) is follow


@pytest.fixture
def shared(tmp_path):
    """A sticky, world-writable directory like /tmp, and a file of ours outside it."""
    return shared_directory(tmp_path)


@needs_root
def test_a_link_another_user_planted_in_a_shared_directory_is_not_written_through(tmp_path):
    link, victim = planted_link(tmp_path, "x.json")
    directory = link.parent
    with pytest.raises(UnsafeLinkError, match=r"x\.json.*sticky, world-writable directory.*protected_symlinks") as info:
        atomic_write_text(link, "pwned\n")
    assert isinstance(info.value, PermissionError) and "\n" not in info.value.strerror
    assert victim.read_text() == "root:x:0:0\n" and link.is_symlink()
    assert sorted(p.name for p in directory.iterdir()) == ["x.json"]  # no temporary file left


@needs_root
def test_a_planted_link_to_a_directory_on_the_way_is_not_followed_either(shared, tmp_path):
    directory, _ = shared
    (tmp_path / "etc").mkdir()
    link = directory / "results"
    link.symlink_to(tmp_path / "etc")
    os.lchown(link, OTHER, OTHER)
    with pytest.raises(UnsafeLinkError):
        atomic_write_text(link / "passwd", "pwned\n")
    assert list((tmp_path / "etc").iterdir()) == []


def test_my_own_link_in_a_shared_directory_is_written_through(shared):
    directory, victim = shared
    link = directory / "x.json"
    link.symlink_to(victim)
    atomic_write_text(link, "new\n")
    assert victim.read_text() == "new\n" and link.is_symlink()


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664])
def test_replacing_a_file_keeps_its_mode(tmp_path, mode):
    path = tmp_path / "r.json"
    path.write_text("old")
    path.chmod(mode)
    previous = os.umask(0o022)
    try:
        atomic_write_text(path, "new")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == mode and path.read_text() == "new"


def test_a_new_file_gets_the_usual_mode(tmp_path):
    previous = os.umask(0o027)
    try:
        atomic_write_text(tmp_path / "r.json", "new")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o640


def test_a_device_or_pipe_is_never_replaced_by_a_file(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        atomic_write_text(fifo, "x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_link_loop_is_an_os_error(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(OSError):
        atomic_write_text(tmp_path / "a", "x")


def test_relative_paths_and_dot_dot_resolve_as_the_kernel_does(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "real" / "sub").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real" / "sub")
    monkeypatch.chdir(tmp_path)
    atomic_write_text(Path("link/../r.json"), "x")  # link/.. is real/, not tmp_path
    assert (tmp_path / "real" / "r.json").read_text() == "x" and not (tmp_path / "r.json").exists()
