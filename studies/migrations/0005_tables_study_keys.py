"""The study tables formed before the game's tables knew their study (game 0018):
each table's study condition and pilot flag, copied to its round rows and match
result, and the dashboard's tallies recomputed with them (as ``rebuild_tallies``
would: every tallied round and every match, in shard 0). A site with no study
table's rounds changes nothing."""

from django.db import migrations

from game.research.tallies import day_of, round_tallies
from game.research.tally_keys import KEY, SUMS, add, match_cells
from game.research.round_columns import side_bot

ROUND_COLUMNS = (
    "finished_at", "rules_key", "stand_in_round", "makeup_ns", "makeup_ew", "bot_ns", "bot_ew",
    "points_ns", "points_ew", "made_ns", "made_ew", "nil_bids_ns", "nil_bids_ew", "nil_made_ns",
    "nil_made_ew", "nil_category", "bid_n", "bid_e", "bid_s", "bid_w", "tricks_n", "tricks_e",
    "tricks_s", "tricks_w", "round_type_n", "round_type_e", "round_type_s", "round_type_w",
    "seat_kinds", "bot_n", "bot_e", "bot_s", "bot_w", "dealer", "blind_nils",
    "study_condition", "pilot",
)  # fmt: skip
MATCH_COLUMNS = ("finished_at", "rules_key", "stand_in_rounds", "makeup_ns", "makeup_ew",
                 "winner", "bot_n", "bot_e", "bot_s", "bot_w", "round_types_ns",
                 "round_types_ew", "study_condition", "pilot")  # fmt: skip


def backfill(apps, schema_editor):
    StudyTable = apps.get_model("studies", "StudyTable")
    StudySeat = apps.get_model("studies", "StudySeat")
    Table = apps.get_model("game", "Table")
    RoundRecordRow = apps.get_model("game", "RoundRecordRow")
    MatchResult = apps.get_model("game", "MatchResult")
    RoundTally = apps.get_model("game", "RoundTally")
    pilots = set(
        StudySeat.objects.filter(participant__pilot=True).values_list("study_table_id", flat=True)
    )
    changed = False
    for t in StudyTable.objects.values("pk", "table_id", "condition_id", "study__pilot"):
        study = {
            "study_condition": t["condition_id"],
            "pilot": t["study__pilot"] or t["pk"] in pilots,
        }
        Table.objects.filter(pk=t["table_id"]).update(**study)
        for model in (RoundRecordRow, MatchResult):
            changed |= model.objects.filter(table_id=t["table_id"]).update(**study) > 0
    if not changed:
        return
    # Tallied rounds only: a pending one is added by the next flush, under its new key.
    rounds = RoundRecordRow.objects.filter(tallied=True).values(*ROUND_COLUMNS)
    cells = round_tallies(rounds.iterator(chunk_size=5000))
    for m in MatchResult.objects.values(*MATCH_COLUMNS).iterator(chunk_size=5000):
        m["bot_ns"], m["bot_ew"] = side_bot((m["bot_n"], m["bot_s"])), side_bot((m["bot_e"], m["bot_w"]))
        add(cells, day_of(m["finished_at"]), match_cells(m))
    RoundTally.objects.all().delete()
    RoundTally.objects.bulk_create(
        (RoundTally(**dict(zip(KEY, k)), **dict(zip(SUMS, v))) for k, v in cells.items()),
        batch_size=2000,
    )


class Migration(migrations.Migration):

    dependencies = [
        ("studies", "0004_view_payments_permission"),
        ("game", "0019_study_keys"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
