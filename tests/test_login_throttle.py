"""Admin sign-in throttling (django-axes): wrong passwords lock an account from the address they came from, and a
burst from one address stops it; nobody elsewhere locks the rightful user out of their own address (issue 35)."""

from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

LOGIN = "/admin/login/?next=/admin/"


@pytest.fixture
def researchers(db, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast: many sign-ins here
    make = get_user_model().objects.create_user
    return {
        "ada": make("ada", password="right-password-ada", is_staff=True),
        "bo": make("bo", password="right-password-bo", is_staff=True),
    }


def sign_in(client: Client, username: str, password: str, address: str, **headers):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address, headers=headers)


def signed_in(response) -> bool:
    return response.status_code == 302 and response["Location"] == "/admin/"


def fail_until_locked(client: Client, username: str, address: str, **headers):
    responses = [sign_in(client, username, "wrong", address, **headers) for _ in range(5)]
    assert [r.status_code for r in responses[:4]] == [200] * 4  # the login form again, saying it was wrong
    return responses[-1]


def test_after_the_failure_limit_even_the_right_password_is_refused_with_the_lockout_page(researchers, settings):
    assert settings.AXES_FAILURE_LIMIT == 5
    client = Client()
    fail_until_locked(client, "ada", "10.0.0.1")
    refused = sign_in(client, "ada", "right-password-ada", "10.0.0.1")
    assert refused.status_code == 429
    page = refused.content.decode()
    assert "Sign-in paused after too many wrong passwords" in page
    assert "After 5 failed sign-in attempts for the account <strong>ada</strong>" in page
    assert "Try again in 15 minutes" in page
    assert client.get("/dashboard/").status_code == 302  # not signed in


def test_another_account_from_another_address_is_not_affected(researchers):
    fail_until_locked(Client(), "ada", "10.0.0.1")
    assert signed_in(sign_in(Client(), "bo", "right-password-bo", "10.0.0.2"))


def test_a_stranger_cannot_lock_the_rightful_user_out_of_their_own_address(researchers):
    """Issue 35: five wrong passwords for a known username locked it for everyone, from one address or five."""
    fail_until_locked(Client(), "ada", "10.0.0.1")  # the attacker's address: locked for ada
    assert sign_in(Client(), "ada", "right-password-ada", "10.0.0.1").status_code == 429
    for n in range(2, 7):  # five more wrong passwords, each from another address
        assert sign_in(Client(), "ada", "wrong", f"10.0.0.{n}").status_code == 200
    assert signed_in(sign_in(Client(), "ada", "right-password-ada", "10.9.9.9"))  # ada, from her own address
    assert signed_in(sign_in(Client(), "bo", "right-password-bo", "10.0.0.1"))  # another account from there


def test_a_burst_from_one_address_over_many_accounts_is_stopped(researchers, settings):
    assert settings.LOGIN_ADDRESS_FAILURE_LIMIT == 20
    client = Client()
    for n in range(20):  # four wrong passwords each on five accounts: no account reaches its limit
        assert sign_in(client, f"user{n % 5}", "wrong", "10.6.6.6").status_code == 200
    refused = sign_in(client, "bo", "right-password-bo", "10.6.6.6")
    assert refused.status_code == 429
    assert "Sign-in paused" in refused.content.decode()
    assert signed_in(sign_in(Client(), "bo", "right-password-bo", "10.0.0.2"))  # elsewhere, nothing changed
    with time_machine.travel(timezone.now() + timedelta(minutes=16)):
        assert signed_in(sign_in(Client(), "bo", "right-password-bo", "10.6.6.6"))


def test_the_right_password_works_again_after_the_cool_off(researchers):
    fail_until_locked(Client(), "ada", "10.0.0.1")
    with time_machine.travel(timezone.now() + timedelta(minutes=16)):
        assert signed_in(sign_in(Client(), "ada", "right-password-ada", "10.0.0.1"))


def test_the_limit_and_the_cool_off_come_from_the_settings(researchers, settings):
    settings.AXES_FAILURE_LIMIT = 2
    settings.AXES_COOLOFF_TIME = timedelta(minutes=3)
    client = Client()
    sign_in(client, "ada", "wrong", "10.0.0.1")
    locked = sign_in(client, "ada", "wrong", "10.0.0.1")
    assert locked.status_code == 429
    assert "Try again in 3 minutes" in locked.content.decode()


PROXY = "172.18.0.9"  # behind nginx every request reaches the app from nginx's address


def test_behind_a_proxy_whose_header_is_not_named_an_attacker_locks_the_account_for_everyone(researchers):
    # Every sign-in comes from nginx's address: set CLIENT_IP_HEADER (README, deployment behind nginx).
    fail_until_locked(Client(), "ada", PROXY, x_real_ip="203.0.113.10")
    assert sign_in(Client(), "ada", "right-password-ada", PROXY, x_real_ip="203.0.113.20").status_code == 429


def test_behind_a_proxy_whose_header_is_named_each_client_address_counts_apart(researchers, settings):
    settings.CLIENT_IP_HEADER, settings.TRUSTED_PROXIES = "X-Real-IP", 1
    fail_until_locked(Client(), "ada", PROXY, x_real_ip="203.0.113.10")
    assert signed_in(sign_in(Client(), "ada", "right-password-ada", PROXY, x_real_ip="203.0.113.20"))
    assert sign_in(Client(), "ada", "right-password-ada", PROXY, x_real_ip="203.0.113.10").status_code == 429


def test_the_client_ip_header_setting_comes_from_the_environment():
    from .test_project import SETUP, run_python

    code = SETUP + "from django.conf import settings as s; print(s.CLIENT_IP_HEADER, s.TRUSTED_PROXIES)"
    assert run_python(code, DEBUG="1", CLIENT_IP_HEADER="X-Real-IP").stdout.strip() == "X-Real-IP 1"
    assert run_python(code, DEBUG="1", CLIENT_IP_HEADER="X-Forwarded-For", TRUSTED_PROXIES="2").stdout.strip() == (
        "X-Forwarded-For 2"
    )
    assert run_python(code, DEBUG="1").stdout.strip() == "0"


def test_the_api_takes_no_password_so_there_is_nothing_to_guess_there(researchers):
    # The API authenticates by token (160 random bits) or by the admin's session: no password endpoint to throttle.
    basic = Client().get("/api/studies/", headers={"authorization": "Basic YWRhOnJpZ2h0LXBhc3N3b3JkLWFkYQ=="})
    assert basic.status_code in (401, 403)


def test_the_test_clients_sign_ins_still_work(researchers, client):
    # Django's client.login() authenticates without a request; only HTTP sign-ins are counted.
    assert client.login(username="ada", password="right-password-ada")
    assert not client.login(username="ada", password="wrong")
    client.force_login(researchers["bo"])
    assert client.get("/dashboard/").status_code == 200
