"""The options of ``run`` and ``compare``, as click declares them.

click only reads them: every value arrives as the text typed (or None when
not given) and ``parsers.parse_settings`` validates it, once, with the
defaults of ``settings.DEFAULTS`` (the help shows them from there).
"""

from __future__ import annotations

import click

from pairbench import __version__
from pairbench.settings import METRIC_CHOICES, SORT_CHOICES, default, harness_defaults
from pairbench.verdict import FAIL_ON_CHOICES


def _shown(option: str, kind: str) -> str:
    """``kind``'s default of ``option`` as help shows it, with bench's own for some harnesses."""
    value = default(option, kind)
    return "" if value is None else f"  [default: {value}{_harnesses_own(option, kind)}]"


def _harnesses_own(option: str, kind: str) -> str:
    own = harness_defaults(option) if kind == "bench" else {}
    return "".join(f"; {v} for {h}" for h, v in own.items())


def recipe_max_time_shown(first: str = "") -> str:
    """The --max-time default of a command measuring the project's recipe (``confirm``, ``record``),
    which is a bench target's as ``bench``'s and a [confirm] command's as ``compare``'s; ``first``:
    what a one-side measurement gets instead, said after them."""
    return (f"  [default: a bench target's {default('max_time', 'bench')} per benchmark"
            f"{_harnesses_own('max_time', 'bench')}; a [confirm] command's {default('max_time', 'compare')}"
            f"{first}]")


BENCH_SAMPLING = ("warmup", "runs", "min_runs", "max_runs", "max_time", "timeout", "output", "seed",
                  "json_path", "sort", "time_unit", "names", "quiet", "version")
"""The sampling options ``bench`` takes (workers have no shell, helpers, input or parameters)."""


def sampling_options(kind: str, *, keep: tuple[str, ...] | None = None, max_time_shown: str | None = None):
    """Options shared by ``run`` and ``compare`` (their defaults are ``kind``'s); only those named
    in ``keep`` when given (``bench``); ``max_time_shown``: --max-time's default as help says it,
    when it is not ``kind``'s."""

    return lambda f: applied(_sampling_declarations(kind, max_time_shown), f, keep)


def applied(options: list, f, keep: tuple[str, ...] | None = None):
    """``f`` with the click option decorators ``options``, which --help lists in this order; only
    those named in ``keep`` when given."""
    for option in reversed(options):
        if keep is None or _key(option) in keep:
            f = option(f)
    return f


def _key(decorator) -> str:
    """The parameter name a click option decorator declares (``max_time``, ``json_path``)."""
    probe = decorator(lambda **_: None)
    return probe.__click_params__[-1].name


def _sampling_declarations(kind: str, max_time_shown: str | None = None) -> list:
    """Every sampling option, as click decorators, with ``kind``'s defaults in the help."""
    return [
        click.option("--warmup", "-w", metavar="N", help="Warmup rounds, run and stored but not analysed."
                     + _shown("warmup", kind)),
        click.option("--runs", "-r", metavar="N", help="Exact number of rounds (turns adaptive stopping off)."),
        click.option("--min-runs", "-m", metavar="N", help="Rounds to run before stopping is considered."
                     + _shown("min_runs", kind)),
        click.option("--max-runs", "-M", metavar="N", help="Stop after this many rounds at most."),
        click.option("--max-time", metavar="DURATION", help="Time budget for sampling (e.g. 30s, 2m)."
                     + (max_time_shown if max_time_shown is not None else _shown("max_time", kind))),
        click.option("--prepare", "-p", metavar="CMD", multiple=True,
                     help="Command run through sh -c before every sample, untimed; once for every "
                          "command, or once per command in their order."),
        click.option("--conclude", metavar="CMD", multiple=True,
                     help="Command run through sh -c after every sample, untimed; once, or once per command."),
        click.option("--setup", "-s", metavar="CMD", help="Command run through sh -c once before sampling."),
        click.option("--cleanup", "-c", metavar="CMD", help="Command run through sh -c once at the end."),
        click.option("--timeout", metavar="DURATION",
                     help="Kill a sample's process group after this long (e.g. 10s)."),
        click.option("--shell", "-S", metavar="SHELL|none",
                     help="Run commands through SHELL -c (sh, bash, 'bash --norc', a path; its start-up "
                          "is measured and reported). Default: none, commands run directly, split into "
                          "words like a shell does; shell syntax (| && > $VAR) is refused without a shell."),
        click.option("-N", "no_shell", is_flag=True, default=None,
                     help="Run commands without a shell (--shell none), as hyperfine's -N."),
        click.option("--input", metavar="null|FILE",
                     help="What the commands read as standard input (FILE through sh's exec, whose "
                          "start-up is measured and reported)." + _shown("input", kind)),
        click.option("--output", "output", metavar="null|inherit|pipe|FILE",
                     help="Where the commands' stdout and stderr go (pipe: read and discarded, as "
                          "hyperfine's; ./pipe for a file named pipe)." + _shown("output", kind)),
        click.option("--parameter-scan", "-P", "parameter_scan", nargs=3, multiple=True,
                     metavar="NAME MIN MAX",
                     help="Measure each command for NAME = MIN, MIN+1, ... MAX, written as {NAME} in the "
                          "commands: each value is a benchmark parameter, compared round by round."),
        click.option("--parameter-step-size", "-D", "parameter_step_size", multiple=True, metavar="STEP",
                     help="The step of -P/--parameter-scan (decimals allowed)."),
        click.option("--parameter-list", "-L", "parameter_list", nargs=2, multiple=True, metavar="NAME VALUES",
                     help="Measure each command for each of the comma-separated VALUES of {NAME}; several "
                          "-L give every combination."),
        click.option("--ignore-failure", "-i", is_flag=True,
                     help="Keep going when a command fails; failed samples are stored, not analysed."),
        click.option("--seed", metavar="N",
                     help="Seed of the random order (printed and stored, so runs can be repeated)."),
        click.option("--json", "json_path", metavar="FILE",
                     help="Write the result document (raw samples included) to FILE; - for standard output."),
        click.option("--sort", metavar="|".join(SORT_CHOICES),
                     help="Order of the summaries and comparisons: auto and command keep the commands' "
                          "order; mean-time puts the fastest first." + _shown("sort", kind)),
        click.option("--time-unit", "-u", "time_unit", metavar="UNIT",
                     help="Show every duration in this unit: nanosecond, microsecond, millisecond, second "
                          "(default: a unit that suits each number)."),
        click.option("--name", "-n", "names", multiple=True,
                     help="Name for a command, in order (repeat for each command)."),
        click.option("--quiet", "-q", is_flag=True, help="No progress display."),
        click.version_option(__version__, "--version", "-V", prog_name="pairbench"),
    ]


def decision_options(f, *, self_check: bool = True, fail_on: bool = True):
    """``compare``'s options: how strict its verdicts are and when CI fails (``bench`` has no
    --self-check, ``bisect`` no --fail-on either)."""
    options = [
        click.option("--alpha", metavar="P", help="Family-wise error rate of the verdicts, 1e-6 to 0.5."
                     + _shown("alpha", "compare")),
        click.option("--threshold", metavar="PERCENT",
                     help="Smallest change that matters, in percent." + _shown("threshold", "compare")),
        click.option("--fail-on", metavar="|".join(FAIL_ON_CHOICES),
                     help="Exit 1 when a verdict (not negligible) matches: slower, faster, change (either)."
                          + _shown("fail_on", "compare")),
        metric_option("What the verdicts are on"),
        click.option("--self-check", is_flag=True,
                     help="Also run a copy of the baseline: an A/A comparison that must not find a change."),
    ][: None if self_check else -1]
    if not fail_on:
        options = options[:2] + options[3:]
    return applied(options, f)


METRIC_HELP = ("cpu time (user + system: other tasks' time slices are left out, so it stays steady on a busy "
               "machine, but so is time spent sleeping, reading or waiting for a child), wall (elapsed) time, or "
               "auto: CPU time for a benchmark whose first 10 rounds show it CPU-bound, else wall time; or instructions "
               "(user-space instructions executed, by the processor's counter, else Callgrind: load cannot move "
               "them) or cycles-model (Callgrind's cache-model estimate): docs/instructions.md.")


def metric_option(what: str, default: str | None = None):
    """``--metric``, offering every choice of the one list (``settings.METRIC_CHOICES``); ``what``
    begins its help, ``default`` replaces the shown default."""
    shown = f"  [default: {default}]" if default else _shown("metric", "compare")
    return click.option("--metric", metavar="|".join(METRIC_CHOICES), help=f"{what}: {METRIC_HELP}{shown}")


def fail_on_metric_option(f):
    """``--fail-on-metric UNIT`` (repeatable): ``bench`` and ``diff`` gate on a harness's own unit."""
    return click.option("--fail-on-metric", "fail_on_metric", metavar="UNIT", multiple=True,
                        help="Also exit 1 when a benchmark's own UNIT (as the harness reports it: B/op, allocs/op, "
                             "a counter) is worse (higher; lower for a rate, /s), not negligibly; repeat for more "
                             "units, or all. Each unit is its own family in Holm's procedure; --fail-on gates on "
                             "time only.")(f)


def store_options(f):
    """``--store URL`` and ``--no-store`` for a measuring command (not settings: where a result goes)."""
    options = [
        click.option("--store", "store", metavar="URL",
                     help="Also keep the result in this history store: sqlite:///PATH (or a file path), "
                          "postgresql://USER@HOST/DB. Default: $PAIRBENCH_STORE, else the [store] of "
                          "pairbench.toml or [tool.pairbench] in pyproject.toml, else not stored."),
        click.option("--no-store", "no_store", is_flag=True, default=False,
                     help="Do not keep the result in the history store, whatever the config says."),
    ]
    return applied(options, f)


PASS_ENV_HELP = ("Give the programs pairbench runs the environment variable NAME (repeatable). They never get "
                 "pairbench's own credentials (PAIRBENCH_STORE, libpq's PG* variables) unless named here; "
                 "code of another commit (bench --against, confirm, bisect) gets only PATH, HOME, the locale, TZ, "
                 "TERM and TMPDIR besides.")


def environment_options(f):
    """``--pass-env NAME`` for a command that runs programs (not settings: what their environment holds;
    see ``measure.child_environment``)."""
    return click.option("--pass-env", "pass_env", metavar="NAME", multiple=True, help=PASS_ENV_HELP)(f)
