"""The staff dashboard's routes (included at /dashboard/)."""

from django.urls import path

from game.research import views_dashboard

app_name = "dashboard"

urlpatterns = [
    path("", views_dashboard.dashboard, name="home"),
    path("export.csv", views_dashboard.export_csv, name="export_csv"),
    path("export.jsonl", views_dashboard.export_jsonl, name="export_jsonl"),
]
