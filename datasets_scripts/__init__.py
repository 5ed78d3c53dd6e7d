"""dialeval.datasets_scripts: datasets builders for the papers' test sets."""
