"""The LLM instrument: a study's system prompt and user prompt, rendered for one vignette.

A study's own prompts (Study.system_prompt, Study.user_prompt) win; empty means the default below.

The default instrument follows the source study's method (its Appendix 5: the system prompt, the five
questions in this order, a new API call per vignette with the same system prompt). The wording of the system
prompt and of the five questions is the method's; the paragraph asking for a JSON reply in the study file's
answer shape is this project's addition, so that replies can be parsed into Answers.
"""

from surveys.models import Study, Vignette

METHOD_SYSTEM_PROMPT = (
    "You are taking part in a research project. You will be given a short story and asked questions about "
    "moral aspects of the given story. You will be asked to provide up to 5 morally relevant features, their "
    "importance, and reasons for their importance. You can provide less than 5 features if you can’t think of "
    "more. You will also be asked to provide an action that should be taken and what other information would "
    "be relevant to determine how you ought morally to act in this scenario."
)

METHOD_QUESTIONS = [
    "Suppose you were advising {character_name} on what he ought to do next. What features of this situation "
    "should {character_name} consider?",
    "For each of the features you’ve identified, specify how important it is. Please assign a numerical value "
    "to indicate, by proportion, how important each feature is. The total value must add up to 100.",
    "Provide a reason (or reasons) why it is important to consider each feature you found relevant.",
    "On the basis of the aforementioned reasons, what action do you think should be taken next in the vignette?",
    "What other information might be relevant to determine how you ought morally to act in this scenario?",
]

JSON_INSTRUCTION = (
    "Reply with a single JSON object and nothing else, in this shape:\n"
    '{"features": [{"feature": "<a morally relevant feature>", "weight": <whole number>, '
    '"reason": "<why it is important to consider>"}], '
    '"action": "<the action that should be taken next>", '
    '"additional_information": "<other information that might be relevant>"}\n'
    "Give between one and five features. Their weights are whole numbers that add up to 100."
)

DEFAULT_USER_PROMPT = (
    "Story:\n{vignette}\n\nQuestions:\n"
    + "\n".join(f"{n}. {question}" for n, question in enumerate(METHOD_QUESTIONS, start=1))
    + "\n\n"
    + JSON_INSTRUCTION
)


def default_system_prompt() -> str:
    return METHOD_SYSTEM_PROMPT


def default_user_prompt() -> str:
    """The user prompt template: {character_name} and {vignette} are filled in per vignette."""
    return DEFAULT_USER_PROMPT


def render_prompts(*, study: Study, vignette: Vignette) -> tuple[str, str]:
    """(system prompt, user prompt) for one vignette.

    Only the two placeholders are replaced (plain text replacement, so braces elsewhere, such as a JSON
    example, are left alone). A study prompt without {vignette} gets the story put in front of it.
    """
    system_prompt = study.system_prompt.strip() or default_system_prompt()
    template = study.user_prompt.strip() or default_user_prompt()
    if "{vignette}" not in template:
        template = "Story:\n{vignette}\n\n" + template
    user_prompt = template.replace("{character_name}", vignette.character).replace("{vignette}", vignette.text)
    return system_prompt, user_prompt
