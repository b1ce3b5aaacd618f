"""Which busy processes the doctor may tell the user to pause (``kill -STOP``) while measuring.

Never pairbench's own parents (its shell, terminal, ``make``, a test runner:
pausing one stops pairbench too), kernel threads (they ignore SIGSTOP), nor the
processes that keep the desktop or login session alive (display servers,
compositors, session managers, sshd, multiplexer servers): pausing one freezes
the screen or the session pairbench runs in. Those are named, not paused.
"""

from __future__ import annotations

from collections.abc import Mapping

from pairbench.environment.stored import stored

SHOWN_PROCESSES = 3
# Display servers, compositors, shells of the desktop, session and login managers, terminal
# multiplexer servers (names as in /proc/[pid]/stat, at most 15 characters): pausing one
# freezes the screen or the session pairbench runs in. Any "systemd*" process counts too.
SESSION_PROCESSES = frozenset({
    "init", "Xorg", "X", "Xwayland", "Xvfb", "gnome-shell", "gnome-session-b", "mutter",
    "kwin", "kwin_x11", "kwin_wayland", "plasmashell", "ksmserver", "sway", "weston", "Hyprland",
    "wayfire", "labwc", "river", "niri", "cage", "xfwm4", "xfce4-session", "openbox", "i3",
    "cinnamon", "muffin", "marco", "mate-session", "lxqt-session", "gdm", "gdm3", "sddm",
    "lightdm", "dbus-daemon", "dbus-broker", "sshd", "login", "tmux: server", "screen", "SCREEN",
    "pipewire", "wireplumber", "pulseaudio",
})


def unpausable(process: Mapping, ancestors: set[int]) -> str:
    """Why ``process`` must not be paused: ``parent`` (of pairbench), ``kernel-thread``, ``session``
    (the desktop or login session); "" when it may be."""
    name = str(process.get("name", ""))
    if process["pid"] in ancestors:
        return "parent"
    if process["pid"] == 2 or process.get("ppid") == 2:
        return "kernel-thread"
    if process["pid"] == 1 or name in SESSION_PROCESSES or name.startswith("systemd"):
        return "session"
    return ""


def pausing(busiest: list, activity: Mapping) -> dict:
    """Which of the ``SHOWN_PROCESSES`` busiest processes to pause (``pause``: their PIDs) and which to
    leave running (``keep``: name, PID and why); only for metadata read from this machine just now,
    since a PID read from a file may belong to an unrelated process by now."""
    ancestors = set(stored(activity.get("ancestor_pids"), list, "activity.ancestor_pids") or ())
    why = [unpausable(p, ancestors) for p in busiest]
    return {"pause": [p["pid"] for p, reason in zip(busiest, why, strict=True) if not reason][:SHOWN_PROCESSES],
            "keep": [{"name": p["name"], "pid": p["pid"], "why": reason}
                     for p, reason in zip(busiest[:SHOWN_PROCESSES], why[:SHOWN_PROCESSES], strict=True) if reason]}
