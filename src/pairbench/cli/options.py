"""The options of ``run`` and ``compare``, as click declares them.

click only reads them: every value arrives as the text typed (or None when
not given) and ``settings.parse_settings`` validates it, once, with the
defaults of ``settings.DEFAULTS`` (the help shows them from there).
"""

from __future__ import annotations

import click

from pairbench.settings import default
from pairbench.verdict import FAIL_ON_CHOICES


def _shown(option: str, kind: str) -> str:
    value = default(option, kind)
    return "" if value is None else f"  [default: {value}]"


def sampling_options(kind: str):
    """Options shared by ``run`` and ``compare`` (their defaults are ``kind``'s)."""

    def decorate(f):
        options = [
            click.option("--warmup", metavar="N", help="Warmup rounds, run and stored but not analysed."
                         + _shown("warmup", kind)),
            click.option("--runs", "-r", metavar="N", help="Exact number of rounds (turns adaptive stopping off)."),
            click.option("--min-runs", metavar="N", help="Rounds to run before stopping is considered."
                         + _shown("min_runs", kind)),
            click.option("--max-runs", metavar="N", help="Stop after this many rounds at most."),
            click.option("--max-time", metavar="DURATION", help="Time budget for sampling (e.g. 30s, 2m)."
                         + _shown("max_time", kind)),
            click.option("--prepare", metavar="CMD", help="Command run before every sample, untimed."),
            click.option("--setup", metavar="CMD", help="Command run once before sampling."),
            click.option("--cleanup", metavar="CMD", help="Command run once at the end."),
            click.option("--timeout", metavar="DURATION",
                         help="Kill a sample's process group after this long (e.g. 10s)."),
            click.option("--shell", is_flag=True,
                         help="Run commands through sh -c (its start-up cost is measured and reported)."),
            click.option("--output", "output", metavar="null|inherit|FILE",
                         help="Where the commands' stdout and stderr go." + _shown("output", kind)),
            click.option("--ignore-failure", "-i", is_flag=True,
                         help="Keep going when a command fails; failed samples are stored, not analysed."),
            click.option("--seed", metavar="N",
                         help="Seed of the random order (printed and stored, so runs can be repeated)."),
            click.option("--json", "json_path", metavar="FILE",
                         help="Write the result document (raw samples included) to FILE; - for standard output."),
            click.option("--name", "-n", "names", multiple=True,
                         help="Name for a command, in order (repeat for each command)."),
            click.option("--quiet", "-q", is_flag=True, help="No progress display."),
        ]
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


def decision_options(f):
    """``compare``'s options: how strict its verdicts are and when CI fails."""
    options = [
        click.option("--alpha", metavar="P", help="Family-wise error rate of the verdicts." + _shown("alpha", "compare")),
        click.option("--threshold", metavar="PERCENT",
                     help="Smallest change that matters, in percent." + _shown("threshold", "compare")),
        click.option("--fail-on", metavar="|".join(FAIL_ON_CHOICES),
                     help="Exit 1 when a verdict (not negligible) matches: slower, faster, change (either)."
                          + _shown("fail_on", "compare")),
        click.option("--self-check", is_flag=True,
                     help="Also run a copy of the baseline: an A/A comparison that must not find a change."),
    ]
    for option in reversed(options):
        f = option(f)
    return f
