"""{% rendered_once %}: the parts of a judging page that every judge of a study's snapshot sees alike, rendered once.

    {% rendered_once participant.study "answer" answer.pk label %}<article>…</article>{% endrendered_once %}
    {% rendered_once participant.study "questions" unless=form.is_bound %}…the unfilled radios…{% endrendered_once %}

A study shown from its snapshot (services/snapshots.py) shows every judge the same content, so a fragment
that depends only on that content, the active language and the tag's own arguments comes out the same for
every judge. Its HTML, escaped already by the template that rendered it, is kept in Django's "rendered"
cache (this process's memory: a round trip to Redis would cost more than the rendering it saves), keyed by
the snapshot's id, the active language, the template, the fragment's name and its arguments. A replaced
snapshot has a new id, so its fragments are rendered afresh in every process. A study without a snapshot
(a draft) and a fragment whose `unless` is true (a form sent back with the judge's choices and errors) are
rendered every time.
"""

import hashlib

from django import template
from django.core.cache import caches
from django.utils import translation

register = template.Library()


class RenderedOnceNode(template.Node):
    def __init__(self, nodelist, template_name: str, study, parts: list, unless) -> None:
        self.nodelist, self.template_name = nodelist, template_name
        self.study, self.parts, self.unless = study, parts, unless

    def render(self, context) -> str:
        study = self.study.resolve(context)
        snapshot_id = getattr(study, "snapshot_id", None)
        if snapshot_id is None or (self.unless is not None and self.unless.resolve(context)):
            return self.nodelist.render(context)
        parts = (translation.get_language(), self.template_name, *(part.resolve(context) for part in self.parts))
        key = f"fragment:{snapshot_id}:" + hashlib.sha256(repr(parts).encode()).hexdigest()
        cache = caches["rendered"]
        html = cache.get(key)
        if html is None:
            html = self.nodelist.render(context)
            cache.set(key, html, None)
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
