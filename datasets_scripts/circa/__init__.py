from dialeval.datasets_scripts.circa.circa import Circa, CircaConfig, read_circa

__all__ = ["Circa", "CircaConfig", "read_circa"]
