"""``pairbench merge``, ``pairbench convert`` and ``pairbench diff``: suites across machines, and the
results other tools saved.

``convert`` was called ``import`` until 0.3, a word ``pairbench store import`` (loading results
into the history store) uses too; the old spelling still runs it, hidden from the help, and says
the new name."""

from __future__ import annotations

import click

from pairbench.cli.app import EXIT_CODES_HELP, App, cli, deprecated_alias
from pairbench.cli.measuring import fail_on_gate, fail_on_metric_gate
from pairbench.cli.options import fail_on_metric_option
from pairbench.cli.report import check_outputs, write_document
from pairbench.errors import EXIT_OK, UsageError
from pairbench.harness_registry import IMPORT_FORMATS
from pairbench.settings import default
from pairbench.verdict import FAIL_ON_CHOICES


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("shards", nargs=-1, required=True, metavar="SHARD.json...")
@click.option("--json", "json_path", required=True, metavar="FILE",
              help="Write the merged suite result to FILE (- for standard output).")
@click.option("--fail-on", type=click.Choice(FAIL_ON_CHOICES), default=default("fail_on"), show_default=True,
              help="Exit 1 when a verdict of the merged suite (not negligible) matches.")
@click.pass_obj
def merge(app: App, shards: tuple[str, ...], json_path: str, fail_on: str):
    """Join the results of a suite's shards (bench --shard K/N) into one suite result.

    The shards must be of one suite (the same benchmarks, settings, sides and
    pairbench version), each shard once, none missing. The merged result is
    analysed as one suite: Holm's procedure across every shard's comparisons.

    \b
    Examples:
      pairbench merge --json suite.json shard-1.json shard-2.json shard-3.json
      pairbench merge --json suite.json --fail-on slower shards/*.json
    """
    from pairbench.analysis import analyse
    from pairbench.report import text
    from pairbench.store.merge import Shard
    from pairbench.store.merge import merge as join
    from pairbench.store.resultfile import read_result

    if json_path != "-":
        check_outputs([("--json", json_path)], example="suite.json", inputs=[(f"shard {p}", p) for p in shards])
    run = join([Shard(path, read_result(path)) for path in shards])
    analysis = analyse(run)
    if json_path != "-":
        app.io.out(text.renderer(run, analysis)(run, analysis, color=app.io.color))
    write_document(app.io, run, analysis, json_path)
    return fail_on_gate(app, analysis.real_comparisons, fail_on)


@cli.command("convert", epilog=EXIT_CODES_HELP)
@click.argument("path", metavar="FILE")
@click.option("--json", "json_path", required=True, metavar="OUT",
              help="Write the pairbench result document to OUT (- for standard output).")
@click.option("--format", "fmt", type=click.Choice(IMPORT_FORMATS), default=None,
              help="The format of FILE (default: recognised from its content).")
@click.pass_obj
def convert(app: App, path: str, json_path: str, fmt: str | None):
    """Read a result another tool saved and write it as a pairbench result.

    \b
    hyperfine         --export-json FILE
    gbench            Google Benchmark --benchmark_format=json or --benchmark_out
    go                go test -bench output (text; -count N gives N samples)
    pytest-benchmark  --benchmark-json, or --benchmark-save with --benchmark-save-data
    criterion         target/criterion (or one benchmark's directory)

    The samples are as the tool recorded them (not interleaved); what the tool
    did not record (CPU times, max RSS) is shown as "—". A few lines say what
    was imported and where it was written; pairbench show, report and diff then
    read the result like any other.

    \b
    Examples:
      hyperfine --export-json base.json './app'; pairbench convert --json base.pb.json base.json
      go test -bench . -count 10 > old.txt; pairbench convert --json old.json old.txt
      pairbench diff old.json new.json
    """
    from pairbench.analysis import analyse
    from pairbench.report import text
    from pairbench.store.imports import read_import

    if json_path != "-":
        check_outputs([("--json", json_path)], example="imported.json", inputs=[("the file imported", path)])
    run = read_import(path, fmt)
    analysis = analyse(run)
    write_document(app.io, run, analysis, json_path, announce=False)
    if json_path != "-":
        app.io.out(text.render_import(run, json_path, color=app.io.color))
    return EXIT_OK


deprecated_alias(convert, "import")


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option("--alpha", metavar="P", default=f"{default('alpha'):g}", show_default=True,
              help="Family-wise error rate of the verdicts (Holm's procedure over the benchmarks).")
@click.option("--threshold", metavar="PERCENT", default=f"{default('threshold'):g}", show_default=True,
              help="Smallest change that matters, in percent.")
@click.option("--fail-on", type=click.Choice(FAIL_ON_CHOICES), default=default("fail_on"), show_default=True,
              help="Exit 1 when a verdict (not negligible) matches.")
@fail_on_metric_option
@click.option("--json", "json_path", metavar="FILE", help="Also write the differences as JSON to FILE (- for "
              "standard output, instead of the table).")
@click.pass_obj
def diff(app: App, old: str, new: str, alpha: str, threshold: str, fail_on: str, fail_on_metric: tuple[str, ...],
         json_path: str | None):
    """Compare two saved results per benchmark, without pairs (two-sample statistics).

    OLD and NEW are pairbench results (of run, compare, bench, merge or import).
    Each benchmark both hold is compared with the Hodges-Lehmann shift and the
    Mann-Whitney test. The runs were made at different times and are not
    paired: whatever the machine did between them is part of every difference
    (how much, on this project's machine: benchmarks/RESULTS.md). For the
    interleaved answer measure both builds at once: pairbench bench OLD NEW.

    \b
    Examples:
      pairbench diff main.json pr.json
      pairbench convert --json old.json old-gbench.json; pairbench diff old.json new.json --fail-on slower
      pairbench diff old.json new.json --fail-on-metric allocs/op
    """
    from pairbench.analysis.unpaired import diff_runs
    from pairbench.cli.report import analysing_stored
    from pairbench.parsers import parse_alpha, parse_fail_on_metric, parse_threshold
    from pairbench.report.exports import renderer
    from pairbench.store.resultfile import read_result

    level, smallest, gated = parse_alpha(alpha), parse_threshold(threshold), parse_fail_on_metric(fail_on_metric)
    if json_path not in (None, "-"):
        check_outputs([("--json", json_path)], example="diff.json", inputs=[("OLD", old), ("NEW", new)])
    runs = []
    for path in (old, new):
        with analysing_stored(path):
            runs.append(read_result(path))
    result = diff_runs(*runs, alpha=level, threshold=smallest)
    if not result.differences:
        raise UsageError(f"{old} and {new} have no benchmark in common: nothing to compare")
    as_json = renderer("diff", "json")
    if json_path == "-":
        app.io.out(as_json(result, old, new).removesuffix("\n"))
    else:
        app.io.out(renderer("diff", "text")(result, old, new, color=app.io.color))
        if json_path:
            from pairbench.cli.report import write_files

            write_files(app.io, [(json_path, as_json(result, old, new))])
    matched = fail_on_gate(app, result.differences, fail_on, "benchmark(s)")
    return fail_on_metric_gate(app, gated, {u.unit: u.worsened() for u in result.units}) or matched
