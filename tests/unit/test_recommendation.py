from __future__ import annotations

from hypothesis import given, settings, strategies as st

from chalicelib.meter.recommendation import Assessment, DecisionState, next_state

STAY, EVALUATE, SWITCH = "stay_on_bedrock", "evaluate", "switch_to_self_hosted"


def day(decision):
    return Assessment(decision, ("reason",), {})


def test_a_switch_needs_several_consecutive_days():
    state = DecisionState(STAY)
    for _ in range(2):
        state = next_state(state, day(SWITCH), days_to_confirm=3)
        assert state.current == STAY and state.pending == SWITCH
    state = next_state(state, day(SWITCH), days_to_confirm=3)
    assert state.current == SWITCH and state.history[-1] == f"{STAY}->{SWITCH}"


def test_an_interrupted_streak_starts_over():
    state = DecisionState(STAY)
    state = next_state(state, day(SWITCH), 3)
    state = next_state(state, day(STAY), 3)
    state = next_state(state, day(SWITCH), 3)
    assert state.current == STAY and state.pending_days == 1


def test_close_numbers_never_undo_a_switch():
    state = DecisionState(SWITCH)
    for _ in range(10):
        state = next_state(state, day(EVALUATE), 3)
    assert state.current == SWITCH


def test_going_back_to_bedrock_also_needs_confirmation():
    state = DecisionState(SWITCH)
    state = next_state(state, day(STAY), 2)
    assert state.current == SWITCH
    state = next_state(state, day(STAY), 2)
    assert state.current == STAY


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([STAY, EVALUATE, SWITCH]), min_size=2, max_size=40), st.integers(min_value=2, max_value=5))
def test_never_flips_on_two_consecutive_days_with_identical_inputs(decisions, confirm):
    state = DecisionState(STAY)
    changes = []
    for index, decision in enumerate(decisions):
        before = state.current
        state = next_state(state, day(decision), confirm)
        changes.append(state.current != before)
        if index > 0 and decisions[index] == decisions[index - 1] and changes[index - 1]:
            # the day after a flip, the same inputs confirm it: no second flip
            assert not changes[index]
    # and a flip needs `confirm` identical days in a row before it
    run = 0
    for index, decision in enumerate(decisions):
        run = run + 1 if index and decision == decisions[index - 1] else 1
        if changes[index]:
            assert run >= confirm
