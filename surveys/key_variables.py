"""Which environment variables a System (or an LLM judge model) may name as the holder of its key.

Left open, ``api_key_env`` would let anyone who may edit a System read any secret of the deployment: name
``SECRET_KEY`` and a ``base_url`` of one's own, and the next call carries it. So the variable must be allowed by
``settings.LLM_KEY_VARIABLES`` (names or fnmatch patterns; default: the providers' usual names and
``*_API_KEY``), and a name that is one of the project's own settings (``SECRET_KEY``, ``PROLIFIC_API_TOKEN``,
``DATABASES`` …) is refused whatever the list says. Checked by the model field (admin forms), the study file,
and again by llm_collect when a run starts and at every call (with the host the key may go to:
llm_collect/keys.py).
"""

from fnmatch import fnmatchcase

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.deconstruct import deconstructible


def key_variable_allowed(name: str) -> bool:
    if not name or hasattr(settings, name):
        return False
    patterns = getattr(settings, "LLM_KEY_VARIABLES", ["*_API_KEY"])
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def key_variable_problem(name: str) -> str | None:
    """Why `name` may not hold a key (a sentence naming the setting), or None."""
    if key_variable_allowed(name):
        return None
    allowed = ", ".join(getattr(settings, "LLM_KEY_VARIABLES", [])) or "none"
    return (
        f"{name!r} is not an allowed LLM key variable: the deployment's setting LLM_KEY_VARIABLES allows "
        f"{allowed}, and never a variable that is one of the project's own settings."
    )


@deconstructible
class AllowedKeyVariable:
    """The model field's validator: an empty value (the provider's usual variable) or an allowed name."""

    def __call__(self, value: str) -> None:
        problem = key_variable_problem(value) if value else None
        if problem:
            raise ValidationError(problem, code="key_variable")

    def __eq__(self, other) -> bool:
        return isinstance(other, AllowedKeyVariable)

    def __hash__(self) -> int:
        return hash(AllowedKeyVariable)
