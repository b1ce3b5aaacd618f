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
    """Why ``process`` must not be paused ("" when it may be)."""
    name = str(process.get("name", ""))
    if process["pid"] in ancestors:
        return "a parent of pairbench"
    if process["pid"] == 2 or process.get("ppid") == 2:
        return "a kernel thread"
    if process["pid"] == 1 or name in SESSION_PROCESSES or name.startswith("systemd"):
        return "part of the desktop or login session"
    return ""


def load_fix(busiest: list, activity: Mapping, *, live: bool = False) -> str:
    """Pause the busy processes that may be paused; never pairbench's parents or the session.

    PIDs are named only ``live`` (read from this machine just now): one read from
    a file may belong to an unrelated process by now.
    """
    if not busiest:
        return "stop background jobs and wait until `uptime` shows a load well below 0.5"
    if not live:
        return ("stop the busy programs or wait until they are idle; run `pairbench doctor` on that machine "
                "to see which processes to pause")
    ancestors = set(stored(activity.get("ancestor_pids"), list, "activity.ancestor_pids") or ())
    pausable = [p for p in busiest if not unpausable(p, ancestors)][:SHOWN_PROCESSES]
    kept = ", ".join(f"{p['name']} (pid {p['pid']}, {unpausable(p, ancestors)})"
                     for p in busiest[:SHOWN_PROCESSES] if unpausable(p, ancestors))
    if not pausable:
        return (f"close the programs that keep them busy, or wait until they are idle; do not pause "
                f"{kept}")
    pids = " ".join(str(p["pid"]) for p in pausable)
    fix = f"pause them while you measure: kill -STOP {pids} (then kill -CONT {pids})"
    return fix + (f"; leave {kept} running" if kept else "")
