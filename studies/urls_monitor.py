"""The staff's study monitor (studies.monitor_views), under /dashboard/studies/."""

from django.urls import path

from studies import monitor_views

app_name = "study_monitor"

urlpatterns = [
    path("", monitor_views.studies, name="list"),
    path("<str:slug>/", monitor_views.study, name="study"),
    path("<str:slug>/state.json", monitor_views.study_json, name="state"),
    path("<str:slug>/act/", monitor_views.act, name="act"),
    path("<str:slug>/export.zip", monitor_views.export_zip, name="export"),
    path(
        "<str:slug>/export-with-payments.zip",
        monitor_views.export_zip_with_payments,
        name="export_payments",
    ),
]
