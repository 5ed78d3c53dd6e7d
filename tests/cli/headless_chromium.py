"""Debian's chromium, headless, driven by selenium: the browser the HTML report is tested in.

Also the docs' screenshot of a report (``docs/images/html_report.png``)::

    .venv/bin/python tests/cli/headless_chromium.py report.html docs/images/html_report.png
"""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMEDRIVER = Path("/usr/bin/chromedriver")
HOW_TO_GET_IT = (
    'apt-get install chromium chromium-driver; pip install selenium (or pip install -e ".[test]")'
)


def missing() -> str | None:
    """Why the browser cannot run here (with how to get it), or None when it can."""
    try:
        import selenium.webdriver  # noqa: F401  (only whether it is installed)
    except ImportError:
        return f"no selenium: {HOW_TO_GET_IT}"
    if chromium() is None or chromedriver() is None:
        return f"no chromium or no chromedriver: {HOW_TO_GET_IT}"
    return None


def chromium() -> str | None:
    """Debian's chromium, else Ubuntu's, else Chrome (GitHub's runners come with it)."""
    names = ("chromium", "chromium-browser", "google-chrome")
    return next((found for name in names if (found := shutil.which(name))), None)


def chromedriver() -> str | None:
    """Debian's chromium-driver, else one on the PATH or where GitHub's runners keep theirs."""
    if CHROMEDRIVER.is_file():
        return str(CHROMEDRIVER)
    runner = Path(os.environ.get("CHROMEWEBDRIVER", "/nonexistent")) / "chromedriver"
    return shutil.which("chromedriver") or (str(runner) if runner.is_file() else None)


@contextmanager
def headless_chromium(width: int = 1400, height: int = 1000) -> Iterator:
    """A selenium driver of headless chromium with a ``width`` x ``height`` window, logging
    every console entry (``driver.get_log("browser")``)."""
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = chromium()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu"):
        options.add_argument(argument)
    options.add_argument(f"--window-size={width},{height}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(
        service=webdriver.ChromeService(executable_path=chromedriver()), options=options
    )
    try:
        yield driver
    finally:
        driver.quit()


def main() -> int:
    parser = argparse.ArgumentParser(description="A screenshot of an HTML page's first screen.")
    parser.add_argument("page", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1100)
    arguments = parser.parse_args()
    reason = missing()
    if reason:
        parser.error(reason)
    with headless_chromium(arguments.width, arguments.height) as driver:
        driver.get(arguments.page.resolve().as_uri())
        driver.save_screenshot(str(arguments.png))
    print(f"wrote {arguments.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
