"""dialeval.generation: diversity-aware decoding for any GenerationMixin model (DTG, n-best helpers)."""
