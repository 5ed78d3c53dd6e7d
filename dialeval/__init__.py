"""dialeval: measure and improve the diversity of multi-response dialogue generation.

Subpackages (mapped from the repository's top-level folders by setup.py):

* :mod:`dialeval.metrics` — pure metric functions and ``evaluate`` modules;
* :mod:`dialeval.generation` — diversity-aware decoding (DTG) and n-best helpers;
* :mod:`dialeval.trainers` — DRESS and unlikelihood ``Trainer`` subclasses;
* :mod:`dialeval.datasets_scripts` — ``datasets`` builders for the papers' test sets.
"""

__version__ = "0.1.0"
