"""A job's state transitions (chalicelib/jobs/lifecycle.py): the table is the only authority."""
from __future__ import annotations

import pytest

from chalicelib.jobs.lifecycle import (ACTIVE, TERMINAL, TRANSITIONS, IllegalTransition, JobStatus, as_states, check_transition,
                                       is_terminal)


def test_every_status_has_a_row_in_the_table():
    assert set(TRANSITIONS) == set(JobStatus)


def test_final_states_are_exactly_those_nothing_may_follow():
    assert TERMINAL == {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED}
    assert ACTIVE == {JobStatus.QUEUED, JobStatus.RUNNING}


@pytest.mark.parametrize("final", sorted(TERMINAL))
@pytest.mark.parametrize("after", sorted(JobStatus))
def test_nothing_follows_a_final_state(final, after):
    with pytest.raises(IllegalTransition):
        check_transition("job-1", [final], after)


def test_a_job_never_goes_back_to_queued():
    for start in JobStatus:
        with pytest.raises(IllegalTransition):
            check_transition("job-1", [start], JobStatus.QUEUED)


def test_an_active_job_may_run_again_finish_or_be_cancelled():
    for start in ACTIVE:
        for to in (JobStatus.RUNNING, JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED):
            assert check_transition("job-1", [start], to) == {start}


def test_one_illegal_start_among_several_refuses_the_whole_change():
    with pytest.raises(IllegalTransition) as refused:
        check_transition("job-7", [JobStatus.RUNNING, JobStatus.SUCCEEDED], JobStatus.CANCELLED)
    assert refused.value.from_ == JobStatus.SUCCEEDED and "job-7" in str(refused.value)


def test_states_read_from_the_table_as_strings_are_the_same_states():
    assert as_states("RUNNING") == {JobStatus.RUNNING}
    assert as_states(["QUEUED", JobStatus.RUNNING]) == ACTIVE
    assert is_terminal("CANCELLED") and not is_terminal("QUEUED")
    assert f"{JobStatus.RUNNING}" == "RUNNING"
