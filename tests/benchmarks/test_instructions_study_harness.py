"""The pure parts of benchmarks/instructions_study.py and instructions_report.py: other jobs' loops
read from a /proc tree, the goal cells' own load when those loops are missing, the goal table."""

from __future__ import annotations

import argparse
import json

from scripts import benchmark_script

study = benchmark_script("instructions_study")
report = benchmark_script("instructions_report")

BUSY = ["sh", "-c", "while :; do :; done"]
PHASED = ["sh", "-c", "while :; do timeout 3 sh -c 'while :; do :; done'; sleep 3; done"]


def a_process(proc, pid: int, argv: list[str], parent: int, name: str):
    entry = proc / str(pid)
    entry.mkdir()
    (entry / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    (entry / "stat").write_text(f"{pid} ({name}) S {parent} {pid} {pid} 0 -1")
    (entry / "comm").write_text(name + "\n")


def test_busy_and_phased_loops_are_told_apart_and_a_phased_loop_s_burst_is_not_a_busy_loop(tmp_path):
    a_process(tmp_path, 1, ["/sbin/init"], 0, "init")
    a_process(tmp_path, 10, BUSY, 1, "sh")
    a_process(tmp_path, 11, ["/bin/sh", "-c", "while :; do :; done"], 1, "sh")
    a_process(tmp_path, 20, PHASED, 1, "sh")
    a_process(tmp_path, 21, ["timeout", "3", "sh", "-c", "while :; do :; done"], 20, "timeout")
    a_process(tmp_path, 22, BUSY, 21, "sh")  # the phased loop's burst, run by timeout
    a_process(tmp_path, 30, ["grep", "while :; do :; done"], 1, "grep")
    (tmp_path / "self").mkdir()
    assert study.others_loops(tmp_path) == {"busy": 2, "phased": 1}


def test_a_process_that_ends_while_it_is_read_is_not_counted(tmp_path):
    a_process(tmp_path, 10, BUSY, 1, "sh")  # its parent (1) has already gone: no comm to read
    a_process(tmp_path, 11, BUSY, 12, "sh")
    a_process(tmp_path, 12, ["bash"], 1, "bash")
    assert study.others_loops(tmp_path) == {"busy": 1, "phased": 0}


class FakeLoad:
    started: list[tuple] = []

    def __init__(self, phased, busy):
        FakeLoad.started.append((phased, busy))
        self.processes = []

    def stop(self):
        FakeLoad.started.append("stopped")


def test_a_lock_is_held_when_proc_locks_lists_a_flock_on_its_inode_not_a_waiter_s(tmp_path):
    lock, locks = tmp_path / "timing.lock", tmp_path / "locks"
    lock.touch()
    inode = lock.stat().st_ino
    locks.write_text(f"1: POSIX  ADVISORY  WRITE 700 fe:00:{inode} 0 EOF\n"
                     f"2: -> FLOCK  ADVISORY  WRITE 800 fe:00:{inode} 0 EOF\n"
                     f"3: FLOCK  ADVISORY  WRITE 900 fe:00:{inode + 1} 0 EOF\n")
    assert not study.timing_lock_held(lock, locks)
    locks.write_text(locks.read_text() + f"4: FLOCK  ADVISORY  WRITE 18883 fe:00:{inode} 0 EOF\n")
    assert study.timing_lock_held(lock, locks)
    assert not study.timing_lock_held(tmp_path / "absent.lock", locks)


def a_goal_trial(monkeypatch, loops: list[dict], locked: bool = False) -> dict:
    seen = iter(loops)
    monkeypatch.setattr(study, "others_loops", lambda: next(seen))
    monkeypatch.setattr(study, "timing_lock_held", lambda: locked)
    monkeypatch.setattr(study, "Load", FakeLoad)
    monkeypatch.setattr(study.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(study, "one", lambda *a: {"metric": "instructions", "verdict": "slower", "rounds": 8})
    FakeLoad.started = []
    args = argparse.Namespace(goals=True, timeout=1.0, alpha=None)
    return study.measured({}, "instructions", 1, None, args, "none")


def test_a_goal_trial_beside_two_other_busy_loops_adds_no_load_and_records_them(monkeypatch):
    row = a_goal_trial(monkeypatch, [{"busy": 2, "phased": 1}, {"busy": 2, "phased": 0}])
    assert FakeLoad.started == []
    assert row["load"] == "none" and not row["own_load_fallback"] and row["waited_s"] == 0
    assert row["others_loops_before"] == {"busy": 2, "phased": 1}
    assert row["others_loops_after"] == {"busy": 2, "phased": 0}


def test_a_gap_between_another_study_s_records_is_waited_out(monkeypatch):
    row = a_goal_trial(monkeypatch, [{"busy": 0, "phased": 0}] * 3 + [{"busy": 2, "phased": 1}] * 2)
    assert FakeLoad.started == []
    assert row["load"] == "none" and row["waited_s"] == 15


def test_with_no_other_busy_loops_the_trial_runs_beside_its_own_phased_load_and_two_loops(monkeypatch):
    missing = study.OTHERS_GAP_S // 5 + 2
    row = a_goal_trial(monkeypatch, [{"busy": 1, "phased": 0}] * missing)
    assert FakeLoad.started == [(True, 2), "stopped"]
    assert row["load"] == "phased+2" and row["own_load_fallback"]
    assert row["waited_s"] == study.OTHERS_GAP_S


def test_while_another_job_times_without_busy_loops_the_trial_adds_no_load_and_records_none(monkeypatch):
    missing = study.LOCKED_GAP_S // 5 + 2
    row = a_goal_trial(monkeypatch, [{"busy": 0, "phased": 1}] * missing, locked=True)
    assert FakeLoad.started == []
    assert row["load"] == "none" and not row["own_load_fallback"]
    assert row["waited_s"] == study.LOCKED_GAP_S and row["others_loops_before"]["busy"] == 0


def goal_row(case, load, verdict, loops=None, seconds=70.0, rounds=96, loadavg="4.5"):
    row = {"case": case, "load": load, "verdict": verdict, "rounds": rounds, "elapsed_s": seconds,
           "loadavg_before": str([loadavg, "5.0", "5.0"])}
    if loops:
        row.update(others_loops_before=loops, others_loops_after=loops)
    return row


def test_the_goal_table_has_a_row_per_own_load_and_a_total_with_every_trial():
    rows = [goal_row("python +2%", "phased+2", "slower", seconds=120, loadavg="18.1") for _ in range(5)]
    rows += [goal_row("python +2%", "none", "slower", {"busy": 2, "phased": 1}, loadavg="6.2") for _ in range(14)]
    rows += [goal_row("python +2%", "none", "inconclusive", {"busy": 2, "phased": 1}, loadavg="7.9")]
    rows[-1]["others_loops_after"] = {"busy": 0, "phased": 0}  # the other job stopped during it
    lines = report.goals(rows).splitlines()
    assert lines[2].startswith("| python +2% | phased+2 | 5 | slower 5 | 96 | 120, 120 | 18.1-18.1 | not recorded |")
    assert lines[3].startswith("| python +2% | none | 15 | inconclusive 1, slower 14 |")
    assert lines[3].endswith("| 6.2-7.9 | 14 of 15 |")
    assert lines[4].startswith("| **python +2%, all** |  | 20 | inconclusive 1, slower 19 |")
    assert lines[4].endswith("| 6.2-18.1 | 14 of 15 |")


def test_a_trial_that_fell_back_on_the_study_s_own_load_is_counted_apart_from_the_first_trials():
    rows = [goal_row("python A/A", "phased+2", "equivalent") for _ in range(5)]
    rows += [goal_row("python A/A", "phased+2", "equivalent", {"busy": 0, "phased": 0})]
    rows[-1]["own_load_fallback"] = True
    lines = report.goals(rows).splitlines()
    assert lines[2].startswith("| python A/A | phased+2 | 5 |")
    assert lines[3].startswith("| python A/A | phased+2 (no other loops found) | 1 |")
    assert lines[4].startswith("| **python A/A, all** |  | 6 | equivalent 6 |")


def test_a_run_that_failed_at_its_first_sample_is_shown_as_failed_not_as_a_verdict():
    failed = {"verdict": "inconclusive", "rounds": 0, "notes": ["failed-rounds"], "elapsed_s": 4.1}
    assert report.shown(failed) == "failed at its first sample, 4 s"
    assert report.shown({**failed, "rounds": 12, "estimate": 0.5}).startswith("inconclusive +0.50%, 12 r")


def test_the_data_directory_s_names_are_read_as_the_study_s(tmp_path):
    (tmp_path / "instructions-goals.jsonl").write_text(json.dumps(goal_row("c A/A", "none", "equivalent")) + "\n")
    assert report.rows(report.named(tmp_path, "goals"))[0]["case"] == "c A/A"


def test_a_matrix_cell_measured_again_gets_a_row_of_its_own_and_a_load_with_no_runs_none():
    def run(load, metric, verdict, seed):
        return {"case": "criterion A/A", "load": load, "metric": metric, "verdict": verdict, "estimate": 0.0,
                "rounds": 16, "elapsed_s": 100.0, "seed": seed}
    found = [run("quiet", "cpu", "inconclusive", 1), run("none", "instructions", "equivalent", 2),
             run("none", "instructions", "equivalent", 3),
             {**run("none", "cpu", "slower", 4), "case": "gzip A/A"}]
    lines = report.matrix(found).splitlines()[2:]
    assert [line.split(" | ")[:3] for line in lines] == [
        ["| criterion A/A", "quiet", "—"], ["| criterion A/A", "none", "equivalent +0.00%, 16 r, 100 s"],
        ["| criterion A/A", "none", "equivalent +0.00%, 16 r, 100 s"], ["| gzip A/A", "none", "—"]]
