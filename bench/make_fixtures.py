"""Generate the benchmark's input documents into bench/fixtures/ (deterministic).

* ``mousepad-200.txt`` — a 200-line plain-text file for mousepad;
* ``page.html`` — a local web page of about 1,500 DOM elements (10 forms, 5 tables of 20 rows,
  330 links), the size of a busy real page;
* ``calc-sheet.fods`` — a flat ODF spreadsheet of 200 rows × 5 columns for LibreOffice Calc
  (opened as is: a fresh copy per run);
* ``writer-5-pages.fodt`` — a flat ODF text document of five pages for LibreOffice Writer; the
  benchmark converts it to ``.odt`` with ``soffice --headless --convert-to odt`` into its own run
  directory (a fresh copy per run: no lock files, no "Document in Use" dialog).

Run ``python -m bench.make_fixtures`` to rewrite them; the benchmark writes missing ones itself.
"""

from __future__ import annotations

import html
import random
from html.parser import HTMLParser
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
TEXT_FILE = FIXTURES / "mousepad-200.txt"
PAGE_FILE = FIXTURES / "page.html"
WRITER_FILE = FIXTURES / "writer-5-pages.fodt"
CALC_FILE = FIXTURES / "calc-sheet.fods"

_VOCABULARY = (
    "accessibility agent answer application button calculator cell column command context "
    "desktop dialog document element entry field focus form frame header input interface "
    "keyboard label layout link list menu model mouse node page panel pointer reader render "
    "report result row screen scroll section selection session shortcut snapshot state status "
    "table target text toolbar tree value view widget window workflow"
)
WORDS = _VOCABULARY.split()


def _sentence(rng: random.Random, low: int = 8, high: int = 16) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def text_200_lines() -> str:
    rng = random.Random(200)
    return "".join(f"{i:03d}  {_sentence(rng, 6, 11)}\n" for i in range(1, 201))


def page_html() -> str:
    rng = random.Random(1500)
    out: list[str] = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><title>Benchmark page</title>',
        "<style>body{font:15px sans-serif;margin:12px} nav a{margin-right:6px}"
        " table{border-collapse:collapse;margin:8px 0} td,th{border:1px solid #999;padding:2px 6px}"
        " form{border:1px solid #ccc;margin:8px 0;padding:6px} .links li{display:inline;"
        "margin-right:6px}</style></head>",
        "<body>",
        "<h1>Benchmark page</h1>",
        "<nav>",
    ]
    links = 0
    for i in range(30):
        out.append(f'<a href="#s{i}">Section {i + 1}</a>')
        links += 1
    out.append("</nav>")
    out.append(f"<p>{html.escape(_sentence(rng, 20, 30))}</p>")
    for f in range(10):
        out.append(f'<h2 id="s{f}">Form {f + 1}</h2>')
        out.append(f"<p><strong>Step {f + 1}.</strong> <em>{rng.choice(WORDS)}</em> first.</p>")
        out.append(f'<form action="#" id="form{f}"><fieldset><legend>Contact {f + 1}</legend>')
        for n, label in enumerate(("First name", "Last name", "Email", "Phone", "City")):
            fid = f"f{f}_{n}"
            out.append(
                f'<div><label for="{fid}">{label}</label> <input id="{fid}" name="{fid}" '
                f'type="{"email" if label == "Email" else "text"}"></div>'
            )
        out.append(f'<label for="f{f}_c">Country</label> <select id="f{f}_c">')
        out += [f"<option>{c}</option>" for c in ("France", "Germany", "Italy", "Spain")]
        out.append("</select>")
        out.append(f'<label for="f{f}_m">Message</label> <textarea id="f{f}_m"></textarea>')
        out.append(f'<label><input type="checkbox" id="f{f}_n"> Newsletter {f + 1}</label>')
        for choice in ("Mail", "Phone"):
            out.append(f'<label><input type="radio" name="f{f}_r"> {choice}</label>')
        out.append(f'<button type="submit">Send {f + 1}</button></fieldset></form>')
        if f % 2 == 1:
            t = f // 2
            out.append(f"<table><caption>Table {t + 1}</caption>")
            out.append("<thead><tr><th>Item</th><th>Owner</th><th>Status</th><th>Count</th>")
            out.append("</tr></thead><tbody>")
            for r in range(20):
                out.append(
                    f'<tr><td><a href="#t{t}r{r}">Item {t + 1}.{r + 1}</a></td>'
                    f"<td>{rng.choice(WORDS)}</td><td>{rng.choice(('open', 'done', 'late'))}</td>"
                    f"<td>{rng.randint(1, 999)}</td></tr>"
                )
                links += 1
            out.append('</tbody><tfoot><tr><td colspan="4">20 rows</td></tr></tfoot></table>')
    out.append("<h2>More links</h2>")
    out.append('<ul class="links">')
    while links < 330:
        out.append(f'<li><a href="#l{links}">{rng.choice(WORDS)} {links}</a></li>')
        links += 1
    out.append("</ul>")
    out.append("<dl>")
    for i in range(14):
        out.append(f"<dt>Term {i + 1}</dt><dd>{html.escape(_sentence(rng, 4, 8))}</dd>")
    out.append("</dl>")
    out.append(f"<p>{html.escape(_sentence(rng, 20, 30))}</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


class _Counter(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.elements = 0
        self.links = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements += 1
        self.links += tag == "a"


def count_elements(markup: str) -> tuple[int, int]:
    """(DOM elements, links) of an HTML document."""
    counter = _Counter()
    counter.feed(markup)
    return counter.elements, counter.links


_FODT_HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
 office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
<office:styles>
 <style:style style:name="Standard" style:family="paragraph">
  <style:paragraph-properties fo:margin-bottom="0.25cm"/>
  <style:text-properties fo:font-size="12pt"/>
 </style:style>
 <style:style style:name="Heading_20_1" style:display-name="Heading 1" style:family="paragraph"
  style:parent-style-name="Standard">
  <style:paragraph-properties fo:margin-top="0.4cm" fo:margin-bottom="0.2cm"/>
  <style:text-properties fo:font-size="16pt" fo:font-weight="bold"/>
 </style:style>
</office:styles>
<office:body><office:text>
"""


def writer_fodt(sections: int = 10, paragraphs: int = 3) -> str:
    rng = random.Random(5)
    parts = [_FODT_HEAD]
    parts.append('<text:h text:style-name="Heading_20_1" text:outline-level="1">')
    parts.append("Benchmark report</text:h>\n")
    for s in range(sections):
        parts.append(
            f'<text:h text:style-name="Heading_20_1" text:outline-level="1">'
            f"Section {s + 1}: {rng.choice(WORDS)} {rng.choice(WORDS)}</text:h>\n"
        )
        for _ in range(paragraphs):
            body = " ".join(_sentence(rng) for _ in range(5))
            parts.append(f'<text:p text:style-name="Standard">{html.escape(body)}</text:p>\n')
    parts.append("</office:text></office:body></office:document>\n")
    return "".join(parts)


def calc_fods(rows: int = 200) -> str:
    """A flat ODF spreadsheet: a header and ``rows`` rows of a name, two numbers, a date, a
    note (A1:E201: more than a screen shows)."""
    rng = random.Random(rows)

    def cell(value: str | float) -> str:
        if isinstance(value, float):
            return (
                f'<table:table-cell office:value-type="float" office:value="{value}">'
                f"<text:p>{value}</text:p></table:table-cell>"
            )
        return (
            f'<table:table-cell office:value-type="string"><text:p>{html.escape(value)}'
            "</text:p></table:table-cell>"
        )

    body = [
        "<table:table-row>"
        + "".join(cell(h) for h in ("Item", "Quantity", "Price", "Ordered", "Note"))
        + "</table:table-row>"
    ]
    for i in range(1, rows + 1):
        values: list[str | float] = [
            f"{rng.choice(WORDS).capitalize()} {i}",
            float(rng.randint(1, 50)),
            round(rng.uniform(1, 100), 2),
            f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            rng.choice(WORDS),
        ]
        body.append("<table:table-row>" + "".join(cell(v) for v in values) + "</table:table-row>")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3" '
        'office:mimetype="application/vnd.oasis.opendocument.spreadsheet"><office:body>'
        '<office:spreadsheet><table:table table:name="Orders">'
        + "".join(body)
        + "</table:table></office:spreadsheet></office:body></office:document>\n"
    )


def write_all(force: bool = False) -> list[Path]:
    """Write the fixtures that are missing (all of them with ``force``); return their paths."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    made = {
        TEXT_FILE: text_200_lines,
        PAGE_FILE: page_html,
        WRITER_FILE: writer_fodt,
        CALC_FILE: calc_fods,
    }
    for path, make in made.items():
        if force or not path.exists():
            path.write_text(make())
    return list(made)


if __name__ == "__main__":
    for written in write_all(force=True):
        print(written)
    elements, links = count_elements(PAGE_FILE.read_text())
    print(f"page.html: {elements} elements, {links} links")
