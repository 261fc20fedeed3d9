from django.urls import path

from game.replays import views

app_name = "replays"

urlpatterns = [
    path("rounds/", views.recent_rounds, name="recent"),
    path("rounds/<int:round_id>/", views.replay_page, name="replay"),
    path("rounds/<int:round_id>/analysis.json", views.analysis_json, name="analysis"),
    path("t/<str:public_id>/round/<int:number>/", views.table_round, name="table_round"),
]
