"""The one place dialeval's root layer and engines read accelerate's and transformers' private
state, for two questions neither library answers publicly:

- ``PartialState._shared_state`` (accelerate): whether this process already holds Accelerate's
  process state. ``PartialState`` keeps it in that class-level dict; the public
  ``PartialState().initialized`` creates the state it asks about, and
  ``accelerate.state.is_initialized()`` asks about ``AcceleratorState`` instead.
  :func:`dialeval.distributed.process_state` needs the answer to reuse the state a launcher,
  a ``Trainer`` or the user has already set up, whatever its options.
- ``PretrainedConfig._attn_implementation`` (transformers): the attention implementation a loaded
  model runs ("eager", "sdpa", "flash_attention_2", ...). transformers sets it through the public
  ``from_pretrained(attn_implementation=...)`` and ``set_attn_implementation`` but has no public
  getter; the LM scorer packs a context with all its candidates in one row only under the
  implementations that honour its 4D attention mask (eager, sdpa).

setup.py caps accelerate below 2 and transformers below 6; a release that renames either fails
tests/root/test_host_adapters.py, which checks that both still exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PretrainedConfig


def process_state_exists() -> bool:
    """Whether Accelerate's ``PartialState`` has been created in this process."""
    # Deferred: accelerate imports torch, which the command line's start-up does not need.
    from accelerate import PartialState

    return bool(PartialState._shared_state)


def attention_implementation(config: PretrainedConfig) -> str | None:
    """The attention implementation a model loaded with ``config`` runs; None when the config
    does not say (a config built in code, before any model)."""
    return getattr(config, "_attn_implementation", None)
