"""sim_cost: SIM's cost per deal count, and k_s = 0 never changes a bid."""

from __future__ import annotations


def test_the_cost_command_reports_each_deal_count_and_k_s_zero_never_changes_a_bid() -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("sim_cost", "--views", "4", "--deals", "1,2", "--weights", "0,1", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "4 bidding views, seed 1"
    assert [line.split(":")[0] for line in lines[1:]] == ["deals   1", "deals   2"]
    assert all("k_s 0.0 0.0%" in line for line in lines[1:])
