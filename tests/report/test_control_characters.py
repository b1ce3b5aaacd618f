"""Escape sequences from a result file, a command line or another process are shown, never obeyed.

A name, a command, a machine reading or a note may hold terminal control
sequences (a window title, a clipboard write, a hyperlink, cursor movement,
line erase) or bytes that are not UTF-8. Every output shows them with their
control characters made visible (``report.safe.visible``): on the terminal
(``show``, ``doctor --environment``) and in every text export, to standard
output or to a file.
"""

from __future__ import annotations

import json
import re

import pytest
from report_helpers import DATA, invoke

from pairbench.report.safe import visible

# window title, clipboard write (OSC 52), hyperlink, clear screen + cursor home, line erase,
# an 8-bit CSI (C1), a right-to-left override, and a byte that was not UTF-8 (surrogate escape)
TITLE = "\x1b]0;pwned\x07"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"
LINK = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
CURSOR = "\x1b[2J\x1b[H"
ERASE = "\x1b[2K\r"
C1_CSI = "\x9b31m"
RLO = "\u202e"
NOT_UTF8 = "\udcff"
SEQUENCES = (TITLE, CLIPBOARD, LINK, CURSOR, ERASE, C1_CSI, RLO, NOT_UTF8)
# what no output may hold raw: C0 but the newline, DEL, C1, bidi controls, line separators, lone surrogates
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                         "\u2066-\u2069\ud800-\udfff]")


def hostile(text: str) -> str:
    return text + "".join(SEQUENCES)


def hostile_document() -> dict:
    """The report fixture with escape sequences in every string a user, a machine or a file gave."""
    doc = json.loads((DATA / "compare.json").read_text(encoding="utf-8"))
    doc["tool"]["version"] = hostile("0.2.0")
    doc["started_at"], doc["stopped_because"] = hostile("2026"), hostile("stopped")
    env = doc["environment"]
    for key in ("host", "os", "kernel", "cpu_model"):
        env[key] = hostile(env[key])
    env["activity"]["busiest_processes"][0]["name"] = hostile("cron")
    env["load_average"] = [3.5, 3.0, 2.0]  # busy: the load finding names the busiest process
    env["activity"]["busiest_processes"][0]["cpu_percent"] = 90.0
    for side in doc["sides"]:
        side["name"] = hostile(side["name"])
        side["command"]["text"] = hostile(side["command"]["text"])
        side["command"]["argv"] = [hostile(a) for a in side["command"]["argv"]]
    doc["benchmarks"][0] = {"name": hostile("bench"), "params": {hostile("n"): hostile("10")}, "unit": "ns"}
    doc["notes"] = [{"code": "recorded", "data": {"text": hostile("noticed")}},
                    {"code": hostile("from-the-future"), "data": {"x": hostile("y")}},
                    {"code": "leftover-processes", "data": {"side": hostile("old"), "count": 2}}]
    return doc


@pytest.fixture
def hostile_result(tmp_path):
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(hostile_document()), encoding="utf-8")
    return path


def assert_shown_not_obeyed(text: str, what: str) -> None:
    from plotly.offline import get_plotlyjs

    text = text.replace(get_plotlyjs(), "")  # inlined as shipped (it holds tabs): not text from outside
    raw = RAW_CONTROL.search(text)
    assert raw is None, ascii(f"{what}: raw {raw.group()!r} at {raw.start()}: {text[max(0, raw.start() - 60):raw.end() + 20]!r}")
    assert "\\x1b]0;pwned\\x07" in text or "\\u001b]0;pwned\\u0007" in text, what


def test_visible_shows_control_characters_as_escapes_and_leaves_other_text_alone():
    assert visible("a\x1b[2Jb\x07") == "a\\x1b[2Jb\\x07"
    assert visible("tab\there\nnew\rline") == "tab\\there\\nnew\\rline"
    assert visible("\x9b31m \x7f \u202e \u2028") == "\\x9b31m \\x7f \\u202e \\u2028"
    assert visible("caf\udcc3\udca9") == "caf\\xc3\\xa9"  # bytes that were not UTF-8, shown as bytes
    assert visible("naïve ✓ 日本 <b>|`*") == "naïve ✓ 日本 <b>|`*"
    assert visible(visible(TITLE)) == visible(TITLE)


def test_show_makes_every_control_character_visible(hostile_result):
    result = invoke("show", str(hostile_result))
    assert result.code == 0, result.err
    assert_shown_not_obeyed(result.out, "show")


@pytest.mark.parametrize("fmt", ["markdown", "csv", "json", "html"])
def test_report_on_standard_output_makes_every_control_character_visible(hostile_result, fmt):
    result = invoke("report", str(hostile_result), "--format", fmt)
    assert result.code == 0, result.err
    assert_shown_not_obeyed(result.out, fmt)


@pytest.mark.parametrize("suffix", ["md", "csv", "json", "html"])
def test_report_written_to_a_file_makes_every_control_character_visible(hostile_result, tmp_path, suffix):
    out = tmp_path / f"report.{suffix}"
    result = invoke("report", str(hostile_result), "-o", str(out))
    assert result.code == 0, result.err
    for written in tmp_path.glob("report*"):
        assert_shown_not_obeyed(written.read_text(encoding="utf-8"), written.name)


def test_csv_summary_table_makes_every_control_character_visible(hostile_result):
    result = invoke("report", str(hostile_result), "--format", "csv", "--table", "summary")
    assert result.code == 0, result.err
    assert_shown_not_obeyed(result.out, "summary csv")


def test_json_report_keeps_the_exact_strings_with_control_characters_escaped(hostile_result):
    result = invoke("report", str(hostile_result), "--format", "json")
    assert result.code == 0, result.err
    assert RAW_CONTROL.search(result.out) is None
    names = [side["name"] for side in json.loads(result.out)["sides"]]
    assert names == [side["name"] for side in hostile_document()["sides"]]


def test_doctor_on_stored_metadata_makes_every_control_character_visible(hostile_result):
    result = invoke("doctor", "--environment", str(hostile_result))
    assert result.code == 0, result.err
    assert RAW_CONTROL.search(result.out) is None, ascii(result.out)
    assert "\\x1b]0;pwned\\x07" in result.out  # the host in the header


def test_names_and_commands_with_bytes_that_are_not_utf8_are_exported_with_the_bytes_shown(tmp_path, use_executor):
    use_executor(default=0.01)
    exports = {option: tmp_path / f"r.{suffix}" for option, suffix in
               (("--export-markdown", "md"), ("--export-csv", "csv"), ("--export-html", "html"))}
    args = [arg for option, path in exports.items() for arg in (option, str(path))]
    result = invoke("compare", "--runs", "12", "--name", "old\udcff", "--name", "n\udce9w",
                    "--json", str(tmp_path / "r.json"), *args, "sleep 0.1\udcfe", "sleep 0.2")
    assert result.code in (0, 1), result.err
    for path in (*exports.values(), tmp_path / "r.summary.csv"):
        text = path.read_bytes().decode("utf-8")  # valid UTF-8
        assert "old\\xff" in text and "n\\xe9w" in text, path.name
        assert RAW_CONTROL.search(text.replace(_plotly(), "")) is None, path.name
    for fmt in ("markdown", "csv", "json", "html"):
        out = tmp_path / f"again.{fmt}"
        assert invoke("report", str(tmp_path / "r.json"), "--format", fmt, "-o", str(out)).code == 0, fmt
        out.read_bytes().decode("utf-8")


def _plotly() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()
