"""The cyclic garbage collector held while the console script starts (``pairbench.collector``)."""

from __future__ import annotations

import gc

import pytest

from pairbench import collector


@pytest.fixture
def collector_restored():
    enabled = gc.isenabled()
    yield
    collector.release()
    gc.unfreeze()
    (gc.enable if enabled else gc.disable)()


def test_holding_disables_the_collector_and_releasing_freezes_what_exists_and_enables_it(collector_restored):
    gc.enable()
    collector.hold()
    assert not gc.isenabled() and collector.held()
    kept = [object()]
    collector.release()
    assert gc.isenabled() and not collector.held()
    assert gc.get_freeze_count() >= len(kept)


def test_a_collector_disabled_before_the_hold_stays_disabled_after_the_release(collector_restored):
    gc.disable()
    collector.hold()
    assert not collector.held()
    collector.release()
    assert not gc.isenabled() and gc.get_freeze_count() == 0


def test_releasing_twice_or_without_a_hold_does_nothing(collector_restored):
    gc.enable()
    collector.release()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    collector.hold()
    collector.release()
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    collector.release()
    assert frozen > 0 and gc.get_freeze_count() == 0
