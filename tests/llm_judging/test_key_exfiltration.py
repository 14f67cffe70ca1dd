"""Keys by allowlist (issue 21.3), with the attack replayed: a staff user with only the judge-model permissions
names SECRET_KEY as a judge model's api_key_env and their own server as its base_url. The admin form refuses it,
a run refuses it, a call refuses it, and the attacker's server receives nothing."""

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.urls import reverse

from llm_collect import client
from llm_collect.keys import address_allowed, key_host_allowed
from llm_judging.models import JudgeCall, JudgeModel
from llm_judging.services.calling import judge_item
from llm_judging.services.runs import start_judging_run
from surveys.key_variables import key_variable_allowed
from tests.fakes.llm_servers import FakeLLMServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged_study(db):
    """A live study with cells (two human judges are enough here)."""
    from tests.conftest import make_judged_study

    return make_judged_study(slug="keys", participants=2)


@pytest.fixture
def attacker():
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def judge_editor(client, django_user_model, judged_study):
    """A researcher of the study (judge models are a study's), with only the judge-model permissions."""
    from surveys.models import StudyMembership

    user = django_user_model.objects.create_user("editor", password="pw", is_staff=True)
    StudyMembership.objects.create(study=judged_study, user=user, role=StudyMembership.Role.RESEARCHER)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="llm_judging", codename__contains="judgemodel")
    )
    client.force_login(user)
    return client


def test_the_admin_form_refuses_a_secret_as_a_key_and_names_the_setting(judge_editor, attacker, judged_study):
    form = {"study": judged_study.pk, "key": "evil", "provider": "openai", "model": "gpt-4o", "base_url": attacker.url,
            "api_key_env": "SECRET_KEY", "parameters": "{}"}  # fmt: skip
    response = judge_editor.post(reverse("admin:llm_judging_judgemodel_add"), form)
    assert response.status_code == 200
    assert "LLM_KEY_VARIABLES" in response.content.decode()
    assert not JudgeModel.objects.exists()
    assert attacker.requests == []


def test_a_judge_model_made_before_the_rule_is_refused_by_the_run_and_by_the_call(judged_study, attacker, settings):
    evil = JudgeModel.objects.create(study=judged_study, key="evil", provider="openai", model="gpt-4o",
                                     base_url=attacker.url, api_key_env="SECRET_KEY")  # fmt: skip
    with pytest.raises(ValidationError, match="LLM_KEY_VARIABLES"):
        start_judging_run(study=judged_study, judges=[evil])
    assert not JudgeCall.objects.exists()
    # A call queued before the rule (or a row made some other way) is refused at the call itself.
    cell = judged_study.cells.first()
    call = JudgeCall.objects.create(judge=evil, cell=cell, order="ab", first_answer=cell.answer_a,
                                    second_answer=cell.answer_b)  # fmt: skip
    assert judge_item(call_id=call.pk) == "failed"
    call.refresh_from_db()
    assert "LLM_KEY_VARIABLES" in call.error
    assert attacker.requests == []  # the attacker's server received nothing, SECRET_KEY least of all


def test_an_allowed_key_is_not_sent_to_a_host_the_deployment_does_not_allow(
    judged_study, attacker, settings, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    settings.LLM_ALLOWED_HOSTS = ["api.example.org"]  # listed hosts only: localhost no longer allowed
    judge = JudgeModel.objects.create(study=judged_study, key="redirected", provider="openai", model="gpt-4o",
                                      base_url=attacker.url, api_key_env="OPENAI_API_KEY")  # fmt: skip
    with pytest.raises(ValidationError, match="LLM_ALLOWED_HOSTS"):
        start_judging_run(study=judged_study, judges=[judge])
    target = client.Target(provider="openai", model="gpt-4o", base_url=attacker.url, api_key_env="OPENAI_API_KEY")
    with pytest.raises(client.KeyRefused, match=r"127\.0\.0\.1"):
        client.complete(target, system_prompt="S", user_prompt="U")
    assert attacker.requests == []


@pytest.mark.parametrize(
    ("name", "allowed"),
    [("OPENAI_API_KEY", True), ("GOOGLE_API_KEY", True), ("MY_LAB_API_KEY", True), ("SECRET_KEY", False),
     ("PROLIFIC_API_TOKEN", False), ("PROLIFIC_WEBHOOK_SECRET", False), ("DATABASE_URL", False), ("", False)],
)  # fmt: skip
def test_which_variables_may_hold_a_key_by_default(name, allowed):
    assert key_variable_allowed(name) is allowed


def test_a_project_setting_is_never_a_key_whatever_the_list_says(settings):
    settings.SENTRY_API_KEY = "x"  # a setting of the project's own that ends in _API_KEY
    settings.LLM_KEY_VARIABLES = ["*_API_KEY", "SECRET_KEY"]
    assert not key_variable_allowed("SENTRY_API_KEY")
    assert not key_variable_allowed("SECRET_KEY")
    settings.LLM_KEY_VARIABLES = ["OPENAI_API_KEY"]
    assert not key_variable_allowed("MY_LAB_API_KEY")


def test_which_hosts_may_receive_a_call(settings):
    settings.LLM_ALLOWED_HOSTS = []  # the providers' own hosts only: nothing local by default
    for url in ("https://api.openai.com/v1", "https://api.anthropic.com"):
        assert key_host_allowed(url), url
    for url in ("http://127.0.0.1:8001", "http://localhost:5432", "http://localhost:6379", "https://attacker.example"):
        assert not key_host_allowed(url), url
    settings.LLM_ALLOWED_HOSTS = [".together.xyz", "llm.lab.example", "10.1.2.0/24"]
    assert key_host_allowed("https://api.together.xyz/v1")
    assert key_host_allowed("https://llm.lab.example")
    assert key_host_allowed("http://10.1.2.7:8000/v1")
    assert key_host_allowed("https://generativelanguage.googleapis.com/v1beta")  # a provider's own, always
    assert not key_host_allowed("http://127.0.0.1:8001")
    assert not key_host_allowed("https://eviltogether.xyz")


@pytest.mark.parametrize(
    ("address", "host", "listed", "allowed"),
    [("93.184.216.34", "api.example.org", [], True), ("127.0.0.1", "x.test", [], False),
     ("127.0.0.2", "127.0.0.2", ["127.0.0.1"], False), ("169.254.169.254", "metadata", [], False),
     ("10.0.0.5", "x.test", [], False), ("::1", "x.test", [], False), ("::ffff:127.0.0.1", "x.test", [], False),
     ("fe80::1", "x.test", [], False), ("127.0.0.1", "x.test", ["127.0.0.1"], True),
     ("10.1.2.7", "x.test", ["10.1.2.0/24"], True), ("10.0.0.5", "llm.lab", ["llm.lab"], True),
     ("10.0.0.5", "llm.lab", [".lab"], False)],
)  # fmt: skip
def test_which_addresses_a_call_may_connect_to(settings, address, host, listed, allowed):
    settings.LLM_ALLOWED_HOSTS = listed
    assert address_allowed(address, host) is allowed


@pytest.mark.parametrize(
    "base_url", ["http://169.254.169.254/latest/meta-data/", "http://127.0.0.2:9/v1", "http://localhost:6379"]
)
def test_a_keyless_judge_model_reaches_no_internal_address(judge_editor, judged_study, base_url, settings):
    """Issue 35: with no api_key_env a base_url of the metadata service or another loopback address was called,
    and the internal service's reply shown. The form, the run and the call refuse it now; nothing is sent."""
    form = {"study": judged_study.pk, "key": "inside", "provider": "openai-compatible", "model": "m", "base_url": base_url,
            "api_key_env": "", "parameters": "{}"}  # fmt: skip
    response = judge_editor.post(reverse("admin:llm_judging_judgemodel_add"), form)
    assert "LLM_ALLOWED_HOSTS" in response.content.decode()
    assert not JudgeModel.objects.exists()
    judge = JudgeModel.objects.create(
        study=judged_study, key="inside", provider="openai-compatible", model="m", base_url=base_url
    )
    with pytest.raises(ValidationError, match="LLM_ALLOWED_HOSTS"):
        start_judging_run(study=judged_study, judges=[judge])
    target = client.Target(provider="openai-compatible", model="m", base_url=base_url)
    with pytest.raises(client.DestinationRefused, match="LLM_ALLOWED_HOSTS"):
        client.complete(target, system_prompt="S", user_prompt="U")


def test_the_address_is_checked_when_connecting_not_only_the_name(attacker, settings):
    """A listed name (here any *.localhost) that resolves to loopback is refused at the connection itself."""
    settings.LLM_ALLOWED_HOSTS = [".localhost"]
    target = client.Target(
        provider="openai-compatible", model="m", base_url=attacker.url.replace("127.0.0.1", "localhost")
    )
    with pytest.raises(client.DestinationRefused, match="resolves to"):
        client.complete(target, system_prompt="S", user_prompt="U")
    assert attacker.requests == []
    settings.LLM_ALLOWED_HOSTS = ["localhost"]  # the exact name listed: the deployment's own server
    client.complete(target, system_prompt="S", user_prompt="U")
    assert len(attacker.requests) == 1


def test_a_listed_self_hosted_server_without_a_key_is_called(attacker, settings):
    settings.LLM_ALLOWED_HOSTS = ["127.0.0.1"]
    target = client.Target(provider="openai-compatible", model="llama3.3", base_url=attacker.url)
    client.complete(target, system_prompt="S", user_prompt="U")
    assert "authorization" not in attacker.requests[0][1]  # nothing to steal: no key is sent


def test_a_study_file_naming_a_secret_as_a_key_is_refused_with_the_setting_named(tmp_path):
    import json

    from django.core.management import CommandError, call_command

    from surveys.models import Study

    data = {
        "slug": "leaky",
        "name": "Leaky",
        "reference_system": "m",
        "questions": [{"key": "q", "text": "Which?"}],
        "systems": [{"key": "m", "label": "M", "provider": "openai", "model": "gpt-4o", "api_key_env": "SECRET_KEY"}],
        "vignettes": [{"key": "v", "character": "Sam", "text": "Story."}],
    }
    path = tmp_path / "leaky.study.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CommandError, match=r"systems\[0\]\.api_key_env.*LLM_KEY_VARIABLES"):
        call_command("import_study", str(path))
    assert not Study.objects.filter(slug="leaky").exists()


def test_the_system_form_refuses_a_secret_and_shows_what_is_not_sent(admin_client, judged_study):
    from surveys.models import System

    system = System(study=judged_study, key="x", label="X", provider="openai", model="gpt-5-mini",
                    api_key_env="SECRET_KEY", parameters={"temperature": 0.5})  # fmt: skip
    with pytest.raises(ValidationError, match="LLM_KEY_VARIABLES"):
        system.full_clean()  # what the study page's system rows run
    system.api_key_env = "OPENAI_API_KEY"
    system.full_clean()
    system.save()
    judged_study.status = "draft"
    judged_study.save(update_fields=["status"])
    page = admin_client.get(reverse("admin:surveys_study_change", args=[judged_study.pk])).content.decode()
    assert "Changed before sending" in page
    assert "temperature not sent: gpt-5-mini (OpenAI reasoning model) does not accept it." in page


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "ALL_PROXY", "http_proxy"])
def test_a_proxy_from_the_environment_never_connects_in_the_address_checks_place(
    attacker, settings, monkeypatch, variable
):
    """Issue 35 feared that httpx's proxy variables would let a proxy connect where CheckedAddresses refuses. httpx
    uses them only for a client without its own transport, and the LLM client has one: the call still connects
    directly, is refused by address, and the proxy is never asked. This fails if the client ever honours them."""
    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, attacker.url.split("/v1")[0])  # the fake server stands in for the proxy
    settings.LLM_ALLOWED_HOSTS = [".localhost"]
    target = client.Target(provider="openai-compatible", model="m", base_url="http://localhost:9/v1")
    with pytest.raises(client.DestinationRefused, match="resolves to"):
        client.complete(target, system_prompt="S", user_prompt="U")
    assert attacker.requests == []  # the proxy was never asked
