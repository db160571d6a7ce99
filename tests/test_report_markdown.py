"""A study README becomes HTML in the report as CommonMark with tables says."""

from __future__ import annotations

from sctpsim.report import markdown_to_html


def test_readme_markdown_renders_code_tables_lists_and_nested_headings() -> None:
    text = """# Study

Text with `code`, **bold** and a [link](https://example.org).

    an indented code block
    <kept> as text

```toml
key = "value"
```

| a | b |
|---|---|
| 1 | 2 |

- one
  continued
- two
"""
    page = markdown_to_html(text, heading_offset=2)
    assert page.startswith("<h3>Study</h3>")
    assert "<pre><code>an indented code block\n&lt;kept&gt; as text\n</code></pre>" in page
    assert '<pre><code class="language-toml">key = &quot;value&quot;\n</code></pre>' in page
    assert "<td>1</td>" in page and "<th>b</th>" in page
    assert "<li>one\ncontinued</li>" in page
    assert '<a href="https://example.org">link</a>' in page


def test_raw_html_in_a_readme_is_escaped() -> None:
    assert "&lt;script&gt;" in markdown_to_html("<script>alert(1)</script>")
