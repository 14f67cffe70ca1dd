"""The one call mechanism, used by answer collection (Generation) and LLM judging (llm_judging's JudgeCall).

Every paid LLM call works on an ``LLMCall`` row (llm_collect/models.py) and goes through these modules; each
app keeps only what is its own: what it asks (the prompt and the reply's shape) and how it reads and stores the
reply. In order of a call:

- queueing.py: the broker check before a run, messages sent on commit, the sweep, and the task's retry loop;
- calling.py: claim the row, hold its lease and the provider's limits, call, settle errors and the provider's
  outcomes (refused, cut by length, blocked), or hand the reply to the app;
- states.py: the claim and every change of state (conditional UPDATEs, one history entry each);
- config.py: the LLM_CALLS setting, retry delays, prices, a System or JudgeModel as a client Target.

See docs/architecture.md and docs/llm-calls.md (the path of a call, file by file).
"""

from .calling import Called, Request, call_claimed, claim, give_up, record_unusable, reply_fields, store_result
from .config import TryAgain, call_settings, estimate_cost, target_for
from .queueing import TASK_OPTIONS, BrokerUnavailable, check_broker, run_step, send_on_commit, sweep
from .runs import missing_keys, ready_to_start
from .states import move

__all__ = [
    "TASK_OPTIONS",
    "BrokerUnavailable",
    "Called",
    "Request",
    "TryAgain",
    "call_claimed",
    "call_settings",
    "check_broker",
    "claim",
    "estimate_cost",
    "give_up",
    "missing_keys",
    "move",
    "ready_to_start",
    "record_unusable",
    "reply_fields",
    "run_step",
    "send_on_commit",
    "store_result",
    "sweep",
    "target_for",
]
