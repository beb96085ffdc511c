"""The PDF export with a Unicode font: the text is embedded as written, a fallback font
draws what the main one lacks, and only what no font draws is replaced and counted;
without a usable font (none found, or RESEARCH_PDF_FONT naming something that is not a
font) it keeps to Latin-1 core fonts and says so."""

from __future__ import annotations

import io
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pypdf
import pytest

from services.gateway import export_pdf, pdf_fonts
from services.gateway.exports import ReportFormat, export

DEJAVU_DIR = Path("/usr/share/fonts/truetype/dejavu")  # Debian's fonts-dejavu-core
DEJAVU = DEJAVU_DIR / "DejaVuSans.ttf"
needs_dejavu = pytest.mark.skipif(not DEJAVU.is_file(), reason=f"no DejaVu Sans at {DEJAVU} (install fonts-dejavu-core)")

LINE = "Dvořák — ≥ 3 × 10⁻³ μm, Łódź"
REPORT = f"# Über {LINE}\n\nThe finding: **{LINE}** and *{LINE}* too.\n\n`code {LINE}` [1]\n\n## Sources\n\n[1] {LINE} — https://example.org/a\n"
NOTE = "shown as '?'"


@pytest.fixture(autouse=True)
def _fresh_font_lookup(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test looks fonts up anew (the lookup is cached per process) with no font
    remembered as broken."""
    monkeypatch.setattr(export_pdf, "_broken", set())
    pdf_fonts.find_fonts.cache_clear()
    yield
    pdf_fonts.find_fonts.cache_clear()


def _no_system_fonts(monkeypatch: pytest.MonkeyPatch, *, fallbacks: bool = True) -> None:
    monkeypatch.setattr(pdf_fonts, "_fc_match", lambda: None)
    if fallbacks:
        monkeypatch.setattr(pdf_fonts, "_SYSTEM_FONTS", ())
    monkeypatch.setattr(pdf_fonts, "_FALLBACK_FONTS", ())


def _pdf(report: str, font: str = "") -> tuple[str, set[str]]:
    """The PDF's extracted text and the names of the fonts its pages use."""
    reader = pypdf.PdfReader(io.BytesIO(export(report, ReportFormat.PDF, "r", pdf_font=font).content))
    text = "\n".join(page.extract_text() for page in reader.pages)
    fonts = {str(f.get_object()["/BaseFont"]) for page in reader.pages for f in page["/Resources"]["/Font"].values()}
    return text, fonts


@needs_dejavu
def test_a_unicode_font_keeps_every_character_and_needs_no_note(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_system_fonts(monkeypatch, fallbacks=False)  # the lookup finds Debian's DejaVu Sans by itself
    text, fonts = _pdf(REPORT)
    assert text.count(LINE) == 5, text  # heading, bold, italic, code and the Sources entry
    assert NOTE not in text
    assert {"/MPDFAA+DejaVuSansBook", "/MPDFAA+DejaVuSansBold", "/MPDFAA+DejaVuSansMonoBook"} <= fonts, fonts
    assert not any("Helvetica" in f or "Courier" in f for f in fonts), fonts


@needs_dejavu
def test_what_no_font_draws_is_replaced_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_system_fonts(monkeypatch)  # no CJK fallback font, whatever this machine has
    text, _ = _pdf(f"# {LINE}\n\nIn 東京 🚢.\n", str(DEJAVU))
    assert LINE in text and "In ?? ?." in text
    assert f"3 characters that no font of this PDF can draw are {NOTE}" in text


@needs_dejavu
def test_a_fallback_font_draws_what_the_configured_font_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    serif = DEJAVU_DIR / "DejaVuSerif.ttf"  # no Cyrillic omega or Coptic; DejaVu Sans, found on the system, has them
    if not serif.is_file():
        pytest.skip(f"no {serif}")
    monkeypatch.setattr(pdf_fonts, "_SYSTEM_FONTS", (str(DEJAVU),))
    monkeypatch.setattr(pdf_fonts, "_FALLBACK_FONTS", ())
    assert ord("Ѡ") not in (pdf_fonts.readable_font(serif) or ())
    text, fonts = _pdf(f"# Title\n\n{LINE} Ѡѡ Ϣϣ.\n", str(serif))
    assert LINE in text and "Ѡѡ Ϣϣ" in text and NOTE not in text
    assert {"/MPDFAA+DejaVuSerifBook", "/MPDFAA+DejaVuSansBook"} <= fonts, fonts


def test_a_setting_that_names_no_font_warns_once_and_keeps_to_latin1(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    bogus = tmp_path / "font.ttf"
    bogus.write_text("not a font\n")
    caplog.set_level(logging.WARNING, logger=pdf_fonts.__name__)
    for _ in range(2):
        text, fonts = _pdf(f"# {LINE}\n\nIn 東京.\n", str(bogus))
        assert "Dvorák - >= 3 × 10?³ ?m, Lódz" in text  # look-alikes, as without a font
        assert f"4 characters outside this PDF's Latin-1 font are {NOTE}" in text
        assert fonts == {"/Helvetica-Bold", "/Helvetica", "/Helvetica-Oblique"}
    warnings = [r for r in caplog.records if "RESEARCH_PDF_FONT" in r.getMessage()]
    assert len(warnings) == 1 and str(bogus) in warnings[0].getMessage()


def test_a_setting_naming_a_missing_file_warns_too(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=pdf_fonts.__name__)
    text, _ = _pdf(f"# {LINE}\n", str(tmp_path / "absent.ttf"))
    assert "Dvorák -" in text and "RESEARCH_PDF_FONT" in caplog.text


def test_without_any_font_the_export_is_todays_latin1_one(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_system_fonts(monkeypatch)
    assert pdf_fonts.find_fonts("") is None
    text, fonts = _pdf(REPORT)
    assert text.count("Dvorák - >= 3 × 10?³ ?m, Lódz") == 5
    assert f"10 characters outside this PDF's Latin-1 font are {NOTE}" in text  # ⁻ and μ in each copy
    assert fonts <= {"/Helvetica", "/Helvetica-Bold", "/Helvetica-Oblique", "/Helvetica-BoldOblique", "/Courier"}


@needs_dejavu
def test_a_font_fpdf2_cannot_embed_falls_back_to_latin1_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise ValueError("unsupported font table")

    monkeypatch.setattr(export_pdf.FPDF, "add_font", refuse)
    caplog.set_level(logging.WARNING, logger=export_pdf.__name__)
    text, _ = _pdf(f"# {LINE}\n", str(DEJAVU))
    assert "Dvorák -" in text and "unsupported font table" in caplog.text and str(DEJAVU) in caplog.text


@needs_dejavu
def test_fontconfig_is_asked_when_no_well_known_place_has_a_font(monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("fc-match") is None:
        pytest.skip("no fc-match (fontconfig) on this machine")
    monkeypatch.setattr(pdf_fonts, "_SYSTEM_FONTS", ())
    monkeypatch.setattr(pdf_fonts, "_FALLBACK_FONTS", ())
    fonts = pdf_fonts.find_fonts("")
    assert fonts is not None and pdf_fonts.readable_font(fonts.regular) is not None
    assert fonts.faces["B"].is_file() and fonts.faces["BI"].is_file()
