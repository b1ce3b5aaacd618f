"""Option sets shared by several commands, and their converters."""

from __future__ import annotations

import click

from pairbench.errors import UsageError
from pairbench.units import parse_duration_ns


def duration_option(option: str):
    def convert(ctx, param, value):
        if value is None:
            return None
        try:
            return parse_duration_ns(value, option=option)
        except UsageError as exc:
            raise click.BadParameter(str(exc).split(": ", 1)[-1]) from None

    return convert


def sampling_options(*, default_warmup: int, default_max_time: str):
    """Options shared by ``run`` and ``compare``."""

    def decorate(f):
        options = [
            click.option("--warmup", type=click.IntRange(min=0), default=default_warmup, show_default=True,
                         help="Warmup rounds, run and stored but not analysed."),
            click.option("--runs", "-r", type=click.IntRange(min=1), default=None,
                         help="Exact number of rounds (turns adaptive stopping off)."),
            click.option("--min-runs", type=click.IntRange(min=1), default=10, show_default=True,
                         help="Rounds to run before stopping is considered."),
            click.option("--max-runs", type=click.IntRange(min=1), default=None,
                         help="Stop after this many rounds at most."),
            click.option("--max-time", default=default_max_time, show_default=True, metavar="DURATION",
                         callback=duration_option("--max-time"),
                         help="Time budget for sampling (e.g. 30s, 2m)."),
            click.option("--prepare", default=None, metavar="CMD",
                         help="Command run before every sample, untimed."),
            click.option("--setup", default=None, metavar="CMD", help="Command run once before sampling."),
            click.option("--cleanup", default=None, metavar="CMD", help="Command run once at the end."),
            click.option("--timeout", default=None, callback=duration_option("--timeout"), metavar="DURATION",
                         help="Kill a sample's process group after this long (e.g. 10s)."),
            click.option("--shell", is_flag=True,
                         help="Run commands through sh -c (its start-up cost is measured and reported)."),
            click.option("--output", "output", default="null", show_default=True, metavar="null|inherit|FILE",
                         help="Where the commands' stdout and stderr go."),
            click.option("--ignore-failure", "-i", is_flag=True,
                         help="Keep going when a command fails; failed samples are stored, not analysed."),
            click.option("--seed", type=click.IntRange(min=0), default=None,
                         help="Seed of the random order (printed and stored, so runs can be repeated)."),
            click.option("--json", "json_path", default=None, metavar="FILE",
                         help="Write the result document (raw samples included) to FILE."),
            click.option("--name", "-n", "names", multiple=True,
                         help="Name for a command, in order (repeat for each command)."),
            click.option("--quiet", "-q", is_flag=True, help="No progress display."),
        ]
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


def percent_option(ctx, param, value):
    text = str(value).strip().rstrip("%")
    try:
        number = float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a percentage (e.g. 1 or 0.5%)") from None
    if not 0 < number < 100:
        raise click.BadParameter(f"must be between 0 and 100 percent, got {value!r}")
    return number
