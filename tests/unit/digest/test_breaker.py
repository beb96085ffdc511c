from __future__ import annotations

import pytest

from services.digest.breaker import CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_opens_when_failures_exceed_seventy_percent_with_five_samples() -> None:
    b = CircuitBreaker()
    # 4 of 5 failed (80 %): the fifth outcome opens it.
    for ok in (False, False, True, False):
        assert b.record(ok) is False and b.allow()
    assert b.record(False) is True
    assert not b.allow() and b.is_open


def test_does_not_open_below_min_samples() -> None:
    b = CircuitBreaker()
    for _ in range(4):
        assert b.record(False) is False
    assert b.allow() and b.failure_ratio == 1.0


def test_exactly_seventy_percent_does_not_open() -> None:
    b = CircuitBreaker()
    outcomes = [False] * 7 + [True] * 3  # 7 of 10: at the threshold, not above it
    assert not any(b.record(ok) for ok in reversed(outcomes))
    assert b.allow() and b.samples == 10 and b.failure_ratio == pytest.approx(0.7)
    # The window slides: one more failure pushes a success out; 8 of 10 opens.
    assert b.record(False) is True


def test_three_of_five_does_not_open() -> None:
    b = CircuitBreaker()
    assert not any(b.record(ok) for ok in (False, True, False, True, False))
    assert b.allow()


def test_resets_after_sixty_seconds_and_on_demand() -> None:
    clock = Clock()
    b = CircuitBreaker(clock=clock)
    for _ in range(5):
        b.record(False)
    assert not b.allow()
    clock.now += 59.9
    assert not b.allow()
    assert b.record(True) is False and b.samples == 5  # outcomes while open are not counted
    clock.now += 0.1
    assert b.allow() and b.samples == 0  # closed, with a fresh window
    for _ in range(5):
        b.record(False)
    assert not b.allow()
    b.reset()  # the start of a research iteration
    assert b.allow() and b.samples == 0


def test_rejects_nonsense_configuration() -> None:
    with pytest.raises(ValueError):
        CircuitBreaker(window=4, min_samples=5)
