from django.contrib.auth import views as auth_views
from django.urls import path

from lobby import player_pages, table_views, views

app_name = "lobby"

urlpatterns = [
    path("", views.home, name="home"),
    path("tables.json", views.tables_json, name="tables_json"),
    path("guest/", views.guest, name="guest"),
    path("play/", views.play_now, name="play_now"),
    path("tables/new/", views.new_table, name="new_table"),
    path("t/<str:public_id>/", table_views.table_page, name="table"),
    path("t/<str:public_id>/seating.json", table_views.seating_json, name="seating"),
    path("t/<str:public_id>/seat/", table_views.seat_action, name="seat"),
    path("t/<str:public_id>/rematch/", table_views.rematch, name="rematch"),
    path("join/<str:token>/", table_views.join, name="join"),
    path("profile/", player_pages.profile, name="profile"),
    path("profile/public/", player_pages.make_public, name="make_public"),
    path("players/<str:username>/", player_pages.public_profile, name="public_profile"),
    path("leaderboard/", player_pages.leaderboard, name="leaderboard"),
    path("accounts/signup/", views.signup, name="signup"),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(next_page="lobby:home"),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(next_page="lobby:home"), name="logout"),
]
