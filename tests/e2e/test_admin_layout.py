"""The researcher's admin pages fit a 1280 px wide window with a study of eight systems (Chromium).

Measured as the page's scroll width (document.documentElement.scrollWidth): wider than the window
means a sideways scroll bar, and columns or systems the researcher cannot see without it.
"""

import pytest
from django.contrib.auth import get_user_model

from surveys.models import Answer, Participant, System
from surveys.services.answer_records import replace_features
from surveys.services.answer_shape import FeatureIn
from surveys.services.lifecycle import go_live
from tests.conftest import make_study

WIDTH = 1280
SYSTEMS = ["gpt-4o", "claude-3-7-sonnet", "gemini-2.0-flash", "llama-3.3-70b", "deepseek-v3", "mistral-large",
           "lay-human", "philosopher"]  # fmt: skip
FEATURES = [
    FeatureIn(feature="Ownership of the money and the duty of restitution", weight=35,
              reason="The cash and the wallet belong to someone else; financial hardship does not transfer ownership."),
    FeatureIn(feature="Impact on the owner and their family", weight=25,
              reason="The photo suggests a family, and losing four hundred dollars could cause real hardship."),
    FeatureIn(feature="Marcus's own financial pressure", weight=15,
              reason="His rent shortfall is a genuine need that explains the temptation but does not justify it."),
    FeatureIn(feature="Honesty when unobserved", weight=15,
              reason="Because no one saw him, the choice tests integrity rather than fear of being caught."),
    FeatureIn(feature="Effort required to return it", weight=10,
              reason="The long bus ride is an inconvenience, modest compared with the owner's loss."),
]  # fmt: skip


def _eight_system_study():
    study = make_study(slug="eight-systems", systems=SYSTEMS, vignettes=2, reference="lay-human")
    study.name = "Everyday dilemmas: eight systems compared on five questions"
    study.save()
    for system in study.systems.filter(key__in=SYSTEMS[:6]):
        System.objects.filter(pk=system.pk).update(
            kind=System.Kind.LLM,
            provider=System.Provider.OPENAI_COMPATIBLE,
            model=f"{system.key}-instruct-2025-01-31",
            base_url="https://inference.example.org/v1/chat/completions",
            api_key_env="INFERENCE_API_KEY",
            parameters={"temperature": 0.7, "max_tokens": 1200},
        )
    for answer in Answer.objects.for_study(study):
        answer.action = "Return the wallet with all of the cash to the address on the licence, today. " * 3
        answer.additional_information = "Whether the owner can be reached by phone; whether the landlord would wait."
        answer.save()
        replace_features(answer=answer, features=FEATURES)
    for n in range(3):
        Participant.objects.create(
            study=study,
            prolific_pid=f"5f0c8a1b2c3d4e5f6a7b8c{n:02d}",
            session_id=f"70aa11bb22cc33dd44ee55{n:02d}",
            status=Participant.Status.COMPLETED,
            prolific_status="AWAITING REVIEW",
            seconds_total=754.2,
        )
    return study


def _signed_in_page(browser_context, live_server):
    get_user_model().objects.create_superuser("ada", "ada@example.org", "right-password-ada")
    page = browser_context.new_page()
    page.set_viewport_size({"width": WIDTH, "height": 800})
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "right-password-ada")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    return page


def _scroll_width(page, url: str) -> int:
    page.goto(url)
    return page.evaluate("document.documentElement.scrollWidth")


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_the_study_answer_and_participant_pages_fit_1280_px_with_eight_systems(live_server, browser_context):
    study = _eight_system_study()
    answer = Answer.objects.for_study(study).filter(system__key="gpt-4o").first()
    pages = {
        "study page (systems inline)": f"/admin/surveys/study/{study.pk}/change/",
        "new study page": "/admin/surveys/study/add/",
        "answer form": f"/admin/surveys/answer/{answer.pk}/change/",
        "answers side by side": f"/admin/surveys/study/{study.pk}/answers/",
        "participants list": "/admin/surveys/participant/",
        "answers list": "/admin/surveys/answer/",
    }
    page = _signed_in_page(browser_context, live_server)
    widths = {name: _scroll_width(page, live_server.url + path) for name, path in pages.items()}
    go_live(study=study)  # its parts shown read-only, as text
    participant = Participant.objects.filter(study=study).first()
    widths["live study page"] = _scroll_width(page, f"{live_server.url}/admin/surveys/study/{study.pk}/change/")
    widths["participant page"] = _scroll_width(
        page, f"{live_server.url}/admin/surveys/participant/{participant.pk}/change/"
    )
    for name in ["cell", "judgment", "respondent", "invitation", "prolificevent"]:
        widths[f"{name} list"] = _scroll_width(page, f"{live_server.url}/admin/surveys/{name}/")
    print(f"scroll width at {WIDTH} px: {widths}")  # shown with -s: the numbers behind the assertion
    assert {name: width for name, width in widths.items() if width > WIDTH} == {}

    # Every system's column is on screen side by side, and the participants list's last column too.
    page.goto(f"{live_server.url}/admin/surveys/study/{study.pk}/answers/")
    right_edges = page.eval_on_selector_all(
        f"#vignette-{study.vignettes.first().pk} + .mj-vignette + .mj-grid > div",
        "columns => columns.map(c => c.getBoundingClientRect().right)",
    )
    assert len(right_edges) == len(SYSTEMS)
    assert max(right_edges) <= WIDTH
    page.goto(f"{live_server.url}/admin/surveys/participant/")
    # The list scrolls inside its own box: its last column is cut when the box is narrower than the table.
    box = page.eval_on_selector("#changelist-form .results", "box => [box.scrollWidth, box.clientWidth]")
    assert box[0] <= box[1]
    assert page.locator("#result_list thead th:last-child").inner_text().strip().lower() == "started"
