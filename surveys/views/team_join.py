"""A colleague invited onto a study's team chooses their first password through the invitation's link
(surveys/services/team_invitations.py), and is signed in to the studies."""

from django.contrib import messages
from django.contrib.auth.views import PasswordResetConfirmView
from django.urls import reverse_lazy

from ..services.team_invitations import join_tokens


class TeamJoinView(PasswordResetConfirmView):
    template_name = "admin/surveys/team_join.html"
    token_generator = join_tokens
    reset_url_token = "choose-password"
    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"
    success_url = reverse_lazy("admin:surveys_study_changelist")
    title = "Choose your password"

    def get_user(self, uidb64):
        user = super().get_user(uidb64)
        # Only the accounts invitations make: staff and active (a deactivated one stays out).
        return user if user is not None and user.is_staff and user.is_active else None

    def form_valid(self, form):
        response = super().form_valid(form)
        messages.success(
            self.request, f"Welcome, {form.user.get_username()}: your password is set and you are signed in."
        )
        return response
