"""Fresh workers per block (``measure.worker.Rotation``): every old process ends before a new one
starts, and the sides start in a seeded random order, not baseline first every block."""

from __future__ import annotations

from pairbench.measure.sampler import RoundEnd
from pairbench.measure.worker import Rotation


class RecordingWorker:
    """What Rotation calls on a worker, written to a shared log."""

    def __init__(self, side: str, log: list[tuple[str, str]]):
        self.side, self.log, self.block = side, log, -1

    def retire(self) -> None:
        self.log.append(("retire", self.side))

    def spawn(self) -> None:
        self.log.append(("spawn", self.side))

    def greeted(self) -> None:
        self.log.append(("greeted", self.side))


def spawn_orders(seed: int, blocks: int) -> tuple[list[tuple[str, ...]], list[list[tuple[str, str]]]]:
    log: list[tuple[str, str]] = []
    rotation = Rotation(2, [RecordingWorker("base", log), RecordingWorker("cand", log)], seed=seed)
    orders, logs = [], []
    for _ in range(blocks):
        log.clear()
        rotation.refresh()
        logs.append(list(log))
        orders.append(tuple(side for what, side in log if what == "spawn"))
        for rounds in (1, 2):
            rotation.on_round(RoundEnd(round=rounds, warmup=False, samples=(), rounds=rotation.block * 2 + rounds,
                                       taken=0, elapsed_ns=0))
    return orders, logs


def test_every_old_worker_ends_before_any_new_one_starts():
    _, logs = spawn_orders(seed=3, blocks=6)
    for log in logs:
        kinds = [what for what, _ in log]
        assert kinds == ["retire", "retire", "spawn", "spawn", "greeted", "greeted"]


def test_the_sides_start_in_a_seeded_random_order_from_block_to_block():
    orders, _ = spawn_orders(seed=3, blocks=40)
    first = [order[0] for order in orders]
    assert 10 <= first.count("base") <= 30  # Bin(40, 1/2): outside [10, 30] has probability 0.002
    assert spawn_orders(seed=3, blocks=40)[0] == orders
    assert spawn_orders(seed=4, blocks=40)[0] != orders


def test_a_worker_refreshed_for_this_block_is_not_restarted():
    log: list[tuple[str, str]] = []
    rotation = Rotation(2, [RecordingWorker("base", log), RecordingWorker("cand", log)], seed=1)
    rotation.refresh()
    log.clear()
    rotation.refresh()
    assert log == []
