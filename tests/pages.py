"""Checks of a self-contained HTML page as a reader meets it, shared by the run page
(``sctpsim show``) and study report (``sctpsim reproduce``) tests: every image decodes
and is not blank, every reference resolves offline, and a headless Chromium renders it.
"""

from __future__ import annotations

import base64
import io
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest


class Page(HTMLParser):
    """The images, links, element ids and tags of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.add(tag)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "img":
            self.images.append(str(a.get("src")))
        for key in ("href", "src"):
            if a.get(key) and tag != "img":
                self.links.append(str(a[key]))


def assert_not_blank(png: bytes) -> None:
    """A PNG that decodes and shows something: contrast and more than a few grey levels."""
    from PIL import Image

    img = Image.open(io.BytesIO(png))
    img.load()
    pixels = np.asarray(img.convert("L"))
    assert pixels.std() > 10 and len(np.unique(pixels)) > 20, "blank image"


def check_page(directory: Path, name: str = "report.html") -> Page:
    """Every image decodes and is not blank; every reference resolves offline."""
    page = Page()
    text = (directory / name).read_text(encoding="utf-8")
    page.feed(text)
    assert "script" not in page.tags and "http://" not in text and "https://" not in text
    assert page.images
    for src in page.images:
        assert src.startswith("data:image/png;base64,"), src[:40]
        assert_not_blank(base64.b64decode(src.split(",", 1)[1]))
    for link in page.links:
        if link.startswith("#"):
            assert link[1:] in page.ids, link
        else:
            assert (directory / link).is_file(), link
    for svg in directory.glob("figure-*.svg"):
        ET.parse(svg)
    return page


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    # .ci/run installs it; where it could not, say so rather than fail.
    pytest.skip("chromium not installed (Debian: apt-get install chromium): the page was not rendered")


def screenshot(page: Path, shot: Path, *, width: int = 1280, height: int = 4000) -> Path:
    """Render ``page`` in headless Chromium into the PNG ``shot`` (skips without Chromium)."""
    exe = chromium()
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [
                exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                f"--screenshot={shot}", f"--window-size={width},{height}", "--hide-scrollbars",
                page.resolve().as_uri(),
            ],
            capture_output=True, text=True, timeout=120, check=False,
        )
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    return shot
