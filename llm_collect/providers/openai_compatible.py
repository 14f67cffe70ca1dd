"""OpenAI-compatible servers: DeepSeek, Together, vLLM, Ollama, hosted Llama.

The Chat Completions wire format at ``base_url + /chat/completions``, asked for ``{"type": "json_object"}``
(set ``"response_format": null`` in the System's parameters for a server that rejects it). OpenAI's model
families (surveys/llm_capabilities.py) do not apply: such a server takes what its System's own ``capabilities``
say. A System with its own ``base_url`` and no ``api_key_env`` is a self-hosted server and is called without a
key.
"""

from __future__ import annotations

from typing import ClassVar

from surveys.llm_capabilities import Capabilities

from .base import Prompt
from .openai_chat import OpenAIChat


class OpenAICompatible(OpenAIChat):
    default_base_url: ClassVar[str] = "https://api.deepseek.com"
    default_key_variable: ClassVar[str] = "DEEPSEEK_API_KEY"
    keyless_with_own_base_url: ClassVar[bool] = True

    def response_format(self, prompt: Prompt, caps: Capabilities) -> dict | None:
        return {"type": "json_object"}
