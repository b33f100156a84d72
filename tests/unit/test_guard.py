"""Both sides of the loop guard: real loops fire, legitimate repetition never does."""

import pytest

from ovisocr_loader.client.guard import StreamGuard, find_degenerate
from ovisocr_loader.config import GuardPolicy

POLICY = GuardPolicy()
INTRO = "# Report\n\nThe results are shown below and discussed in the text.\n\n"


def _cells(rows: int, cols: int, cell: str = "") -> str:
    row = "<tr>" + "".join(f"<td>{cell}</td>" for _ in range(cols)) + "</tr>"
    return "<table>" + row * rows + "</table>"


@pytest.mark.parametrize("tail", [
    "1" * 2000,
    "O " * 600,
    "\n\nO O O O" + " O" * 500,
    "ab" * 400,
    "The same sentence again and again. " * 30,
    "😀😂🎉👍🔥✨💯🙏🚀🌟" * 40,
    "1 11 1 111 11 1 " * 80,
])
def test_loops_fire(tail):
    verdict = find_degenerate(INTRO + tail, POLICY)
    assert verdict is not None
    assert verdict.clean_end <= len(INTRO) + len(tail) // 2
    assert INTRO.strip() in (INTRO + tail)[: verdict.clean_end]


def test_loop_trim_keeps_the_clean_prefix_and_no_garbage():
    text = INTRO + "Total: 12" + "1" * 3000
    verdict = find_degenerate(text, POLICY)
    assert verdict is not None
    prefix = text[: verdict.clean_end]
    assert prefix.startswith(INTRO)
    assert "1111" not in prefix


def test_think_marker_and_counter_garbage_fire_at_the_marker():
    text = INTRO + "Contents\n\n\n<think>\n\n</think>\n\n## 1\n## 2\n## 3\n"
    verdict = find_degenerate(text, POLICY)
    assert verdict is not None and verdict.kind == "think_marker"
    assert text[: verdict.clean_end].rstrip().endswith("Contents")


@pytest.mark.parametrize("text", [
    INTRO + _cells(40, 6),                        # 40 rows of identical empty cells
    INTRO + _cells(60, 1, "0"),                   # a column of zeros
    INTRO + _cells(99, 3),                        # still below the markup threshold
    INTRO + "\n".join(f"{i}. Item number {i}" for i in range(1, 300)),  # long numbered list
    INTRO + "\n".join(f"Chapter {i} " + ". " * 40 + f"{i * 7}" for i in range(1, 40)),  # TOC
    INTRO + "Name: " + "_" * 120 + "\nDate: " + "_" * 120,  # form rules
    INTRO + "\n".join("0" for _ in range(150)),   # plain column of zeros
    INTRO + "-" * 399,                            # a long rule below the threshold
    INTRO + "| --- " * 60 + "|",                  # a wide pipe table separator
])
def test_legitimate_repetition_never_fires(text):
    assert find_degenerate(text, POLICY) is None
    guard = StreamGuard(POLICY)
    assert all(guard.feed(text[i:i + 7]) is None for i in range(0, len(text), 7))
    assert guard.finish() is None


def test_markup_loop_fires_past_one_hundred_identical_rows():
    verdict = find_degenerate(INTRO + "<table>" + "<tr><td></td></tr>" * 150, POLICY)
    assert verdict is not None and verdict.kind == "repetition"


def test_stream_guard_fires_soon_after_the_loop_starts():
    guard = StreamGuard(POLICY)
    fed = 0
    for piece in [INTRO] + ["1111"] * 1000:
        fed += len(piece)
        if guard.feed(piece) is not None:
            break
    else:
        pytest.fail("the guard never fired")
    loop_chars = fed - len(INTRO)
    assert loop_chars < POLICY.min_loop_chars + 2 * POLICY.check_every_chars


def _unit(period: int) -> str:
    """A loop unit of ``period`` characters that is no repeat of a shorter one."""
    return ("x" + "abcdefghijklmnopqrstuvwyz" * 9)[:period - 1] + "Q" if period > 1 else "Q"


@pytest.mark.parametrize("policy", [POLICY, GuardPolicy(min_loop_chars=100, min_loop_repeats=3,
                                                        max_period=60)])
def test_every_period_fires_at_exactly_the_repeats_it_needs(policy):
    # the cheap search that rules loops out first must never rule out a real one
    for period in range(1, policy.max_period + 1):
        needed = max(policy.min_loop_repeats, -(-policy.min_loop_chars // period))
        text = INTRO + "Z" + _unit(period) * needed
        verdict = find_degenerate(text, policy)
        assert verdict is not None and verdict.kind == "repetition", period
        assert verdict.period == period
        short = find_degenerate(INTRO + "Z" + _unit(period) * (needed - 1), policy)
        assert short is None or short.kind != "repetition", period
