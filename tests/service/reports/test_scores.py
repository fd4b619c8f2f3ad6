"""Score distributions of graded tasks: intervals on every score, steps, pending kept visible."""

from __future__ import annotations

from service.reports.scores import Scored, score_section, score_step

FORMULA = "Q = 20 x (0.30 P + 0.25 I + 0.20 C + 0.10 L + 0.15 (5 - H))"


def run(group: str, score: float | None, verdict: str = "pass", i_level: int = 4) -> Scored:
    levels: dict[str, int | None] = {"P": 4, "I": i_level, "C": 4, "L": 4, "H": 0}
    if score is None:
        levels["I"] = None
    return Scored(
        task_ref="lighthouse-night-graded@1",
        group=group,
        verdict=verdict,
        score=score,
        levels=levels,
        bounds={"I >= 4": None if score is None else i_level >= 4, "H = 0": True},
        formula=FORMULA,
        threshold=80,
    )


def test_the_score_moves_in_steps_of_the_smallest_weight() -> None:
    assert score_step(FORMULA) == 2.0  # 20 x 0.10: one level of L
    assert score_step("3 x (0.5 A + 0.25 B)") == 0.75


def test_distribution_mean_interval_bounds_and_pending_are_reported() -> None:
    runs = [run("m1", s) for s in (82.0, 83.0, 83.0, 86.0, 90.0)]
    runs += [run("m1", 84.0, "fail", i_level=3), run("m1", None, "pending")]
    (entry,) = score_section(runs)
    assert entry["score_step"] == 2.0 and "ordinal" in entry["note"]
    (group,) = entry["groups"]
    assert group["runs"] == 7 and group["scored"] == 6 and group["score_unknown"] == 1
    assert group["verdicts"] == {"pass": 5, "fail": 1, "pending": 1, "incomplete": 0}
    assert group["pass_range"]["text"] == "between 71 % and 86 %"
    assert {d["score"]: d["runs"] for d in group["distribution"]}[83.0] == 2
    assert group["median"] == 83.0 and group["quartiles"] == [83.0, 86.0]
    low, high = group["mean_interval"]
    assert low <= group["mean"] <= high and high - low > 0
    held = group["bounds_held"]["I >= 4"]
    assert (held["held"], held["of"]) == (5, 6) and held["wilson"][0] < 5 / 6 < held["wilson"][1]
    assert group["levels"]["I"] == {3: 1, 4: 5}


def test_a_difference_of_0_1_is_never_read_as_meaningful() -> None:
    a = [run("a", s) for s in (83.0, 83.1, 83.0, 83.1, 83.0, 83.1, 83.0, 83.1)]
    b = [run("b", s) for s in (83.0, 83.0, 83.0, 83.0, 83.0, 83.0, 83.0, 83.0)]
    (entry,) = score_section(a + b)
    (cmp,) = entry["comparisons"]
    assert cmp["difference"] is not None and 0 < cmp["difference"] < 0.1
    assert cmp["interval"][0] > 0  # the bootstrap alone would call it apart...
    assert cmp["distinguishable"] is False and "smaller than one score step" in cmp["why"]


def test_a_difference_of_several_steps_with_an_interval_off_zero_is_read() -> None:
    a = [run("a", s) for s in (90.0, 92.0, 94.0, 90.0, 92.0, 94.0)]
    b = [run("b", s) for s in (80.0, 82.0, 84.0, 80.0, 82.0, 84.0)]
    (cmp,) = score_section(a + b)[0]["comparisons"]
    assert cmp["difference"] == 10.0 and cmp["distinguishable"] is True
    c = [run("c", s) for s in (70.0, 96.0, 72.0, 94.0)]
    d = [run("d", s) for s in (96.0, 70.0, 94.0, 72.0)]
    (noisy,) = score_section(c + d)[0]["comparisons"]
    assert noisy["distinguishable"] is False and noisy["why"] == "the interval includes 0"
