"""The shared statistics: the median every module uses, and the verdict of `make ab` and `make
compare` on synthetic samples (deterministic: seeded or written out)."""
import math
import random

import pytest

from harness.accounting import stats


def test_median_is_the_statistical_one_and_ignores_missing_values():
    assert stats.median([3, 1, 2]) == 2
    assert stats.median([4, 1, 3, 2]) == 2.5  # the middle two averaged, not the upper one
    assert stats.median([None, 5, None]) == 5
    assert stats.median([]) is None and stats.median([None]) is None


def test_median_and_spread():
    assert stats.median_and_spread([100, 90, 110]) == {"median": 100, "min": 90, "max": 110, "spread_pct": 20.0, "n": 3}
    assert stats.median_and_spread([None]) == {"median": None, "min": None, "max": None, "spread_pct": None, "n": 0}
    assert stats.median_and_spread([0, 0])["spread_pct"] is None  # no percentage of a zero median
    assert stats.median_and_spread([5.41, 4.66, 5.51], None)["median"] == 5.41
    assert stats.median_and_spread([5.41, 4.66, 5.51])["median"] == 5.4


def test_a_clear_difference_is_real_and_says_which_side_is_better():
    v = stats.compare([1000, 1010, 990], [1200, 1190, 1215], higher_is_better=True)
    assert v.word == stats.REAL and v.better is True
    assert v.change_pct == pytest.approx(20.0)
    assert "every run of B is above every run of A" in v.why
    assert "medians are 200 apart" in v.why
    assert "medians are 0.2 k apart" in stats.compare([1000, 1010, 990], [1200, 1190, 1215], True,
                                                          fmt=lambda x: f"{x / 1000:g} k").why
    # the same numbers as a cost (CPU µs per request): B is worse
    assert stats.compare([1000, 1010, 990], [1200, 1190, 1215], higher_is_better=False).better is False
    assert stats.compare([1200, 1190, 1215], [1000, 1010, 990], higher_is_better=False).better is True


def test_overlapping_runs_are_noise_however_far_apart_the_medians():
    v = stats.compare([1000, 1010, 1300], [1200, 1190, 1215], higher_is_better=True)
    assert v.word == stats.NOISE and v.better is None
    assert "overlap" in v.why


def test_separate_runs_closer_than_a_side_s_spread_are_noise():
    # every B above every A, but A's own runs span 90 and the medians differ by 40
    v = stats.compare([900, 950, 990], [991, 995, 1000], higher_is_better=True)
    assert v.word == stats.NOISE
    assert "not more than the wider side's spread" in v.why


def test_fewer_than_three_runs_a_side_cannot_tell():
    v = stats.compare([1000], [2000], higher_is_better=True)
    assert v.word == stats.UNKNOWN and v.change_pct == pytest.approx(100.0)
    # two a side: one identical pair in three would separate, so no verdict however clear it looks
    assert stats.compare([1000, 1001], [2000, 2001], higher_is_better=True).word == stats.UNKNOWN
    assert stats.compare([1000, None], [2000, 2100], higher_is_better=True).word == stats.UNKNOWN
    assert stats.compare([], [], higher_is_better=True).change_pct is None


def test_equal_runs_on_both_sides_are_not_a_difference():
    assert stats.compare([5, 5, 5], [5, 5, 5], higher_is_better=False).word == stats.NOISE


def test_false_positive_bound_counts_rank_orders():
    assert stats.false_positive_bound(3, 3) == pytest.approx(0.1)
    assert stats.false_positive_bound(4, 4) == pytest.approx(2 / 70)
    assert stats.false_positive_bound(5, 5) == pytest.approx(2 / 252)
    assert stats.false_positive_bound(2, 3) == pytest.approx(0.2)


@pytest.mark.parametrize("noise", [
    ("normal", lambda r: r.gauss(1000, 50)),
    ("heavy-tailed", lambda r: 1000 + 50 * math.tan(math.pi * (r.random() - 0.5))),
    ("skewed, like steal bursts", lambda r: 1000 - r.expovariate(1 / 50)),
])
def test_identical_sides_are_called_real_no_more_often_than_the_bound(noise):
    """Seeded simulation of A/A runs: the observed false-positive rate stays under the counting bound
    (10% at 3 runs a side) for very different noise; for normal noise it is about 4%."""
    name, draw = noise
    rng = random.Random(18)
    trials, n = 4000, 3
    real = sum(stats.compare([draw(rng) for _ in range(n)], [draw(rng) for _ in range(n)], True).word == stats.REAL
               for _ in range(trials))
    assert real / trials < stats.false_positive_bound(n, n), name


def test_a_shift_of_ten_spreads_is_found_every_time():
    rng = random.Random(18)
    found = sum(stats.compare([rng.gauss(1000, 10) for _ in range(3)], [rng.gauss(1100, 10) for _ in range(3)],
                              True).word == stats.REAL for _ in range(500))
    assert found >= 495
