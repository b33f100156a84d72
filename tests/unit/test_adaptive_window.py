"""The adaptive window (what the controller judges a limit by) and the rules that let
a newcomer in: pure, no clock, no server."""

from __future__ import annotations

from ovisocr_loader.client.adaptive import AdaptivePolicy, ControllerState, decide
from ovisocr_loader.client.metrics import ServerLoad
from ovisocr_loader.client.window import Window

POLICY = AdaptivePolicy()


def test_the_rate_is_text_streamed_after_the_settle_not_pages_finished():
    window = Window(completed=100, streamed=50_000, preemptions=None, policy=POLICY)
    # the first second: requests just added are in prefill; what streams is not counted
    window.sample(0.5, in_flight=64, completed=100, streamed=50_100)
    window.sample(1.0, in_flight=64, completed=100, streamed=51_000)
    window.sample(2.0, in_flight=64, completed=101, streamed=54_000)
    assert not window.full
    window.sample(3.0, in_flight=64, completed=102, streamed=57_000)
    obs = window.observe(64, None, None, 64)
    assert window.full and obs.completed == 2 and obs.in_flight == 64
    assert obs.rate == 3000.0      # characters/s from 1.0 s on, whatever pages ended


def test_a_window_closed_before_its_settle_still_has_a_rate_in_characters():
    """Pressure on another endpoint can close a window early: its rate must not fall
    back to pages per second and be compared with rates in characters per second."""
    window = Window(completed=0, streamed=10_000, preemptions=None, policy=POLICY)
    window.sample(0.25, in_flight=16, completed=1, streamed=10_100)
    window.sample(0.5, in_flight=16, completed=1, streamed=10_400)
    assert window.observe(16, None, None, 16).streamed_per_s == 800.0
    window.sample(1.0, in_flight=16, completed=1, streamed=10_900)
    assert window.observe(16, None, None, 16).streamed_per_s == 900.0


def test_a_window_is_full_after_the_settle_and_window_s_however_few_pages_ended():
    window = Window(completed=0, streamed=0, preemptions=None, policy=POLICY)
    seconds = [0.25 * n for n in range(1, 13)]
    full = []
    for second in seconds:
        window.sample(second, in_flight=128, completed=0, streamed=int(second * 1000))
        full.append(window.full)
    assert full.index(True) == seconds.index(POLICY.settle_s + POLICY.window_s)


def test_the_server_is_read_once_a_second():
    window = Window(completed=0, streamed=0, preemptions=None, policy=POLICY)
    due = []
    for n in range(1, 13):
        window.sample(0.25 * n, in_flight=1, completed=0, streamed=0)
        due.append(window.metrics_due())
    assert [0.25 * (i + 1) for i, d in enumerate(due) if d] == [1.0, 2.0, 3.0]


def test_preemptions_are_counted_from_the_window_opening():
    window = Window(completed=0, streamed=0, preemptions=40.0, policy=POLICY)
    window.sample(1.0, in_flight=8, completed=3, streamed=0)
    assert window.observe(8, None, 55.0, 8).preempted == 15.0
    assert window.observe(8, None, None, 8).preempted == 0.0


def observation(limit: int, ours: int, others: int, *, kv: float = 0.5, waiting: int = 0,
                completed: int = 10, rate: float = 1000.0):
    window = Window(completed=0, streamed=0, preemptions=0.0, policy=POLICY)
    window.sample(1.0, in_flight=ours, completed=0, streamed=0)
    window.sample(3.0, in_flight=ours, completed=completed, streamed=int(2 * rate))
    load = ServerLoad(running=ours + others - waiting, waiting=waiting, kv_usage=kv,
                      preemptions=0.0)
    return window.observe(limit, load, 0.0, ours)


def test_a_queue_cut_holds_further_cuts_until_as_many_pages_have_ended():
    state = ControllerState(16, settled=True, rates={16: 1000.0})
    queue = observation(16, 16, 16, waiting=17, completed=0)
    assert decide(state, queue, POLICY).limit == 7
    # the other client's requests still queue: old news until 12 of ours have ended
    assert decide(state, observation(7, 7, 16, waiting=7, completed=5), POLICY).limit == 7
    assert decide(state, observation(7, 7, 16, waiting=7, completed=7), POLICY).limit < 7


def test_a_hold_after_a_cut_ignores_pressure_but_not_room_to_grow():
    newcomer = ControllerState(32)
    # a small yield to a full cache shared with a big incumbent
    assert decide(newcomer, observation(32, 32, 99, kv=0.93), POLICY).limit == 31
    assert "taking effect" in decide(newcomer, observation(31, 31, 99, kv=0.95),
                                     POLICY).reason
    # the incumbent made room: the newcomer grows at once, the hold notwithstanding
    grown = decide(newcomer, observation(31, 31, 65, kv=0.7, rate=1500.0), POLICY)
    assert grown.limit == 62 and "grow" in grown.reason


def test_the_bigger_client_of_a_full_cache_makes_room_halfway_in_one_step():
    incumbent = ControllerState(99, settled=True, rates={99: 3000.0})
    decision = decide(incumbent, observation(99, 99, 31, kv=0.92), POLICY)
    assert decision.limit == 99 - (99 - 31) // 2 and "yield" in decision.reason
