"""{% rendered_once %}: the parts of a judging page that every judge of a live study sees alike, rendered once.

    {% rendered_once participant.study "answer" answer.pk label %}<article>…</article>{% endrendered_once %}
    {% rendered_once participant.study "questions" unless=form.is_bound %}…the unfilled radios…{% endrendered_once %}

Going live freezes what judges see (services/freezing.py), so a fragment that depends only on the live
study's frozen content, the active language and the tag's own arguments comes out the same for every
judge. Its HTML, escaped already by the template that rendered it, is kept in this process, keyed by the
study and the moment it went live, the study's and the active language, the template, the fragment's name
and its arguments. A draft's fragments (its content may still change) and a fragment whose `unless` is
true (a form sent back with the judge's choices and errors) are rendered every time. Per process and
bounded, not Redis: a round trip would cost more than the rendering it saves.
"""

import threading

from django import template
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.utils import translation

from ..models import Study
from ..services.freezing import is_frozen

register = template.Library()

MAX_FRAGMENTS = 2000  # ~3 KB an answer card: a few MB per process at most; more evict the oldest

_lock = threading.Lock()
_fragments: dict[tuple, str] = {}


@receiver([post_save, post_delete], sender=Study, dispatch_uid="rendered-once-forget")
def forget(sender, instance: Study, **kwargs) -> None:
    """A study saved or deleted in this process is rendered afresh (a reused primary key never matches)."""
    with _lock:
        for key in [key for key in _fragments if key[0] == instance.pk]:
            _fragments.pop(key, None)


class RenderedOnceNode(template.Node):
    def __init__(self, nodelist, template_name: str, study, parts: list, unless) -> None:
        self.nodelist, self.template_name = nodelist, template_name
        self.study, self.parts, self.unless = study, parts, unless

    def render(self, context) -> str:
        study = self.study.resolve(context)
        if not is_frozen(study) or (self.unless is not None and self.unless.resolve(context)):
            return self.nodelist.render(context)
        key = (
            study.pk,
            study.went_live_at,
            study.language,
            translation.get_language(),
            self.template_name,
            *(part.resolve(context) for part in self.parts),  # the fragment's name, then its arguments
        )
        html = _fragments.get(key)
        if html is None:
            html = self.nodelist.render(context)
            with _lock:
                if len(_fragments) >= MAX_FRAGMENTS:
                    _fragments.pop(next(iter(_fragments)), None)
                _fragments[key] = html
        return html


@register.tag
def rendered_once(parser, token):
    """{% rendered_once study "name" key… [unless=condition] %}…{% endrendered_once %} (see the module's note)."""
    bits = token.split_contents()
    unless = None
    if bits[-1].startswith("unless="):
        unless = parser.compile_filter(bits.pop()[len("unless=") :])
    if len(bits) < 3:
        raise template.TemplateSyntaxError(f"{bits[0]} needs a study and a fragment name")
    nodelist = parser.parse(("endrendered_once",))
    parser.delete_first_token()
    study, *parts = (parser.compile_filter(bit) for bit in bits[1:])
    return RenderedOnceNode(nodelist, parser.origin.template_name or "", study, parts, unless)
