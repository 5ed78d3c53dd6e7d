"""This metric's Hugging Face Space: evaluate's gradio widget (run `python app.py` to try it
locally)."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# The module script beside this file, so the same app runs here, in a `dialeval push-metrics --to`
# copy and in the Space.
module = evaluate.load(str(Path(__file__).with_name("expectation_adjusted_distinct.py")))
launch_gradio_widget(module)
