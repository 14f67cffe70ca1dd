"""One class per provider wire format, chosen by the System's provider (surveys.models.System.Provider).

To add a provider: a module here with a class that follows base.WireFormat, a line in PROVIDERS, a
System.Provider choice (surveys/models/study_parts.py, with its migration), and a recorded reply in tests/fixtures/llm/.
"""

from __future__ import annotations

from surveys.models import System

from .anthropic_messages import AnthropicMessages
from .base import OutputSchema, Prompt, ReplyContent, WireFormat, WireRequest
from .gemini_generate import GeminiGenerate
from .openai_chat import OpenAIChat
from .openai_compatible import OpenAICompatible

PROVIDERS: dict[str, WireFormat] = {
    System.Provider.OPENAI: OpenAIChat(),
    System.Provider.ANTHROPIC: AnthropicMessages(),
    System.Provider.GEMINI: GeminiGenerate(),
    System.Provider.OPENAI_COMPATIBLE: OpenAICompatible(),
}


def wire_format(provider: str) -> WireFormat:
    """The provider's wire format; KeyError for a name no class serves."""
    return PROVIDERS[provider]


__all__ = ["PROVIDERS", "OutputSchema", "Prompt", "ReplyContent", "WireFormat", "WireRequest", "wire_format"]
