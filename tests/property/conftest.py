"""Hypothesis profiles of the property suite (tests/property/).

``ci`` (the default, in ``make test``) keeps every property to a few examples so the whole folder
adds well under a minute; ``fuzz`` (``make fuzz``, or ``HYPOTHESIS_PROFILE=fuzz``) runs hundreds.
The model-backed properties scale their own counts down from the profile's (``model_examples``):
each example runs a forward pass.
"""
import os

from hypothesis import HealthCheck, settings

# Function-scoped fixtures (tmp_path, monkeypatch) are not reset between examples; the properties
# use only session/module fixtures and pure inputs. Huge strings and nested lists are slow to
# generate on purpose; data_too_large is expected for the "huge" strategies.
_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
               HealthCheck.function_scoped_fixture, HealthCheck.large_base_example]
# No example database: a run must not depend on (or write) what an earlier run found.
settings.register_profile("ci", max_examples=15, deadline=None, suppress_health_check=_SUPPRESSED,
                          database=None, derandomize=True, print_blob=True)
settings.register_profile("fuzz", max_examples=500, deadline=None, suppress_health_check=_SUPPRESSED,
                          database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
