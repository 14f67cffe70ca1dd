"""OpenAI-compatible servers: DeepSeek, Together, vLLM, Ollama, hosted Llama.

The Chat Completions wire format at ``base_url + /chat/completions``, asked for ``{"type": "json_object"}``
(set ``"response_format": null`` in the System's parameters for a server that rejects it). OpenAI's rules for
its reasoning models' names do not apply. A System with its own ``base_url`` and no ``api_key_env`` is a
self-hosted server and is called without a key.
"""

from __future__ import annotations

from .base import Prompt
from .openai_chat import OpenAIChat


class OpenAICompatible(OpenAIChat):
    default_base_url = "https://api.deepseek.com"
    default_key_variable = "DEEPSEEK_API_KEY"
    keyless_with_own_base_url = True

    def shape(self, target, prompt: Prompt, params: dict) -> tuple[list[dict], dict | None]:
        messages = [{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.user}]
        return messages, {"type": "json_object"}
