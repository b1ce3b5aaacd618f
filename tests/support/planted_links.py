"""A link another user planted in a shared directory: the attack the store's writes must refuse."""

from __future__ import annotations

import os

import pytest

OTHER_USER = 4242
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a link to another user "
                                "(a real limit: chown needs CAP_CHOWN; make test runs as root in CI)")


def shared_directory(tmp_path):
    """``tmp_path/shared``, sticky and world-writable like /tmp, and ``tmp_path/passwd``, a file of
    ours outside it with mode 0600: (directory, victim)."""
    directory = tmp_path / "shared"
    directory.mkdir()
    directory.chmod(0o1777)
    victim = tmp_path / "passwd"
    victim.write_text("root:x:0:0\n")
    victim.chmod(0o600)
    return directory, victim


def planted_link(tmp_path, name: str = "x.md"):
    """``shared/NAME -> passwd``, owned by another user (needs root): (link, victim)."""
    directory, victim = shared_directory(tmp_path)
    link = directory / name
    link.symlink_to(victim)
    os.lchown(link, OTHER_USER, OTHER_USER)
    return link, victim
