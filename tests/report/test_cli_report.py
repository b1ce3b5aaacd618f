"""`pairbench report` and the --export-* options: formats, file names, errors, atomic writes."""

from __future__ import annotations

import csv
import json

import click
import pytest
from click.testing import CliRunner
from planted_links import needs_root, planted_link
from report_helpers import DATA, invoke

from pairbench.analysis import analyse
from pairbench.cli.app import Io
from pairbench.cli.report import export_options, write_exports
from pairbench.errors import EXIT_RESULT_FILE, EXIT_USAGE, UsageError
from pairbench.report.exports import DOCUMENTS, REGISTRY, renderer
from pairbench.store.resultfile import read_result

COMPARE = str(DATA / "compare.json")


def test_report_without_options_prints_markdown():
    result = invoke("report", COMPARE)
    assert result.code == 0, result.err
    assert result.out.startswith("### pairbench compare: &lt;script&gt;window.")
    assert "vs old build\n\n| Comparison |" in result.out


def test_report_format_follows_the_output_suffix(tmp_path):
    for name, start in (("r.html", "<!DOCTYPE html>"), ("r.md", "### pairbench"), ("r.json", "{"),
                        ("r.csv", "benchmark,side,label,wall_ns")):
        result = invoke("report", COMPARE, "-o", str(tmp_path / name))
        assert result.code == 0, result.err
        assert (tmp_path / name).read_text(encoding="utf-8").startswith(start), name
        assert f"Report written to {tmp_path / name}" in result.err
        assert result.out == ""


def test_csv_output_writes_samples_and_the_summary_beside_them(tmp_path):
    result = invoke("report", COMPARE, "--format", "csv", "-o", str(tmp_path / "s.csv"))
    assert result.code == 0, result.err
    samples = list(csv.DictReader((tmp_path / "s.csv").open(encoding="utf-8")))
    summary = list(csv.DictReader((tmp_path / "s.summary.csv").open(encoding="utf-8")))
    assert len(samples) == 82 and len(summary) == 2
    only = invoke("report", COMPARE, "--format", "csv", "--table", "summary")
    assert only.out.startswith("benchmark,side,label,command,n,") and only.out.count("old build") == 2


def test_json_format_on_stdout_is_the_analysed_result():
    result = invoke("report", COMPARE, "--format", "json")
    doc = json.loads(result.out)
    assert doc["format"] == "pairbench.report/2" and doc["comparisons"][0]["verdict"] == "slower"


def test_report_reads_a_journal_of_an_interrupted_run(tmp_path, single_run):
    from pairbench.measure.sampler import Measured
    from pairbench.store.journal import Journal

    target = tmp_path / "r.json"
    journal = Journal(target, single_run.replace(state="running", samples={}))
    for sample in single_run.series(0, 0).rows()[:12]:
        journal.on_sample(Measured(side=0, benchmark=0, sample=sample))
    journal.close(remove=False)
    result = invoke("report", str(target))
    assert result.code == 0, result.err
    assert "| sleep 0.1 | 12 |" in result.out and "The run is interrupted" in result.out


def test_report_errors_name_the_problem(tmp_path):
    missing = invoke("report", str(tmp_path / "nope.json"))
    assert missing.code == EXIT_RESULT_FILE and "no such file" in missing.err
    unknown = invoke("report", COMPARE, "-o", str(tmp_path / "r.txt"))
    assert unknown.code == EXIT_USAGE and "cannot tell the report format from" in unknown.err
    table = invoke("report", COMPARE, "--format", "html", "--table", "samples")
    assert table.code == EXIT_USAGE and "--table samples applies to --format csv" in table.err
    nowhere = invoke("report", COMPARE, "-o", str(tmp_path / "no" / "dir" / "r.html"))
    assert nowhere.code == EXIT_USAGE and "does not exist" in nowhere.err  # checked before reading


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    import os

    target = tmp_path / "r.md"
    target.write_text("old", encoding="utf-8")

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    result = invoke("report", COMPARE, "-o", str(target))
    assert result.code == EXIT_RESULT_FILE and "No space left on device" in result.err
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]


@click.command()
@export_options
@click.pass_obj
def measuring(io, **options):
    """A stand-in for run/compare: exports the fixture result at its end."""
    run = read_result(COMPARE)
    write_exports(io, run, analyse(run), {key.removeprefix("export_"): path for key, path in options.items() if path})


def test_export_options_write_every_requested_file(tmp_path):
    args = ["--export-markdown", str(tmp_path / "r.md"), "--export-csv", str(tmp_path / "r.csv"),
            "--export-html", str(tmp_path / "r.html")]
    result = CliRunner().invoke(measuring, args, obj=Io(color=False))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.html", "r.md", "r.summary.csv"]
    assert (tmp_path / "r.md").read_text(encoding="utf-8").startswith("### pairbench compare")


def test_export_options_refuse_a_missing_directory_before_measuring(tmp_path, use_executor):
    executor = use_executor()
    result = invoke("compare", "--runs", "3", "--export-html", str(tmp_path / "no" / "r.html"),
                    "sleep 0.1", "sleep 0.2")
    assert result.code == EXIT_USAGE and "does not exist" in result.err
    assert executor.calls == []  # refused before anything ran


def test_no_export_options_means_no_files_and_nothing_rendered(tmp_path, monkeypatch):
    monkeypatch.setattr("pairbench.report.exports.render", lambda *args, **kwargs: 1 / 0)
    result = CliRunner().invoke(measuring, [], obj=Io(color=False))
    assert result.exit_code == 0


@needs_root
def test_report_does_not_write_through_a_link_planted_in_a_shared_directory(tmp_path):
    link, victim = planted_link(tmp_path)
    result = invoke("report", COMPARE, "-o", str(link))
    assert result.code == EXIT_USAGE  # refused before anything is read or rendered, as every output is
    assert result.err.count("\n") == 1 and "refusing to follow the symbolic link" in result.err
    assert victim.read_text() == "root:x:0:0\n" and oct(victim.stat().st_mode & 0o777) == "0o600"


@needs_root
@pytest.mark.parametrize("option", ["--json", "--export-markdown"])
def test_a_planted_link_is_refused_before_measuring(tmp_path, use_executor, option):
    link, victim = planted_link(tmp_path)
    executor = use_executor()
    result = invoke("compare", "--runs", "3", option, str(link), "sleep 0.1", "sleep 0.2")
    assert result.code == EXIT_USAGE and "refusing to follow the symbolic link" in result.err
    assert executor.calls == [] and victim.read_text() == "root:x:0:0\n"


def test_every_document_is_written_in_formats_of_the_one_vocabulary_and_each_has_its_renderer():
    for document, formats in DOCUMENTS.items():
        for fmt in formats:
            assert fmt in REGISTRY and callable(renderer(document, fmt)), (document, fmt)


def test_a_format_a_document_is_not_written_in_is_refused_naming_those_it_is():
    with pytest.raises(UsageError, match="a diff is written as text, json"):
        renderer("diff", "html")
