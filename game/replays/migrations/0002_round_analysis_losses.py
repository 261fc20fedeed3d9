"""RoundAnalysis.losses: each seat's cards and the points and tricks they gave away,
for the dashboard's tallies; filled here for the analyses stored before it.
The tallies of those analyses come from ``manage.py rebuild_tallies`` once after
deploying (docs/architecture.md, "An analysis")."""

from django.db import migrations, models

SEATS = "NESW"


def losses_of(result: dict) -> dict:
    """analysis.seat_losses as it is now (a migration keeps its own copy)."""
    cards, points, tricks = [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]
    for c in result["cards"]:
        s = SEATS.index(c["seat"])
        cards[s] += 1
        points[s] += c["points_lost"]
        tricks[s] += c["tricks_lost"]
    return {"cards": cards, "dd_points_lost": points, "dd_tricks_lost": tricks}


def fill(apps, schema_editor):
    RoundAnalysis = apps.get_model("replays", "RoundAnalysis")
    stored = RoundAnalysis.objects.filter(result__isnull=False).only("round_id", "result")
    batch = []
    for a in stored.iterator(chunk_size=500):
        a.losses = losses_of(a.result)
        batch.append(a)
        if len(batch) >= 500:
            RoundAnalysis.objects.bulk_update(batch, ["losses"])
            batch = []
    RoundAnalysis.objects.bulk_update(batch, ["losses"])


class Migration(migrations.Migration):
    dependencies = [
        ("replays", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="roundanalysis",
            name="losses",
            field=models.JSONField(
                blank=True,
                help_text="per seat N, E, S, W: cards, dd_points_lost, dd_tricks_lost "
                "(analysis.seat_losses), what the dashboard's tallies read; null with an error",
                null=True,
            ),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
