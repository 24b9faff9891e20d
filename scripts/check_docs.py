#!/usr/bin/env python3
"""The documentation's links, checked on the source tree: every relative Markdown link in README.md,
docs/*.md and paramserver/README.md points to a file that exists, and a link to `page.md#anchor` to
a heading of that page (GitHub's anchors: the heading's text in lower case, punctuation other than
'-' and '_' dropped, spaces as '-', a repeated heading suffixed -1, -2, ...); every page of docs/ is
linked from README.md; README.md, the front page, is at most 250 lines. Links in code (indented or
fenced blocks, `spans`) are not links. Prints what it checked and every breach; exits 1 on a breach.
Run by CTest as docs_links; `scripts/check_docs.py [ROOT]` by hand."""
import re
import sys
from pathlib import Path

README_MAX_LINES = 250
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text):
    """(line number, line, line with its inline code spans blanked out) of the lines outside code
    blocks."""
    fence = None
    indented_code = False
    previous_blank = True
    for number, line in enumerate(text.split("\n"), 1):
        fence_match = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if fence is not None:
            if fence_match and fence_match.group(1)[0] == fence[0] and len(fence_match.group(1)) >= len(fence):
                fence = None
            continue
        if fence_match:
            fence = fence_match.group(1)
            continue
        blank = not line.strip()
        if indented_code and (blank or line.startswith(("    ", "\t"))):
            continue
        indented_code = previous_blank and line.startswith(("    ", "\t")) and not blank
        previous_blank = blank
        if indented_code:
            continue
        yield number, line, re.sub(r"(`+)(?:(?!\1).)+?\1", lambda m: " " * len(m.group(0)), line)


def anchors(text):
    """The anchors GitHub gives the headings of a Markdown page."""
    seen = {}
    result = set()
    for _, line, _ in prose_lines(text):
        match = HEADING.match(line)
        if not match:
            continue
        title = LINK.sub(lambda m: m.group(1), match.group(2))
        title = title.replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    if (root / "paramserver" / "README.md").exists():
        pages.append(root / "paramserver" / "README.md")
    texts = {page: page.read_text(encoding="utf-8") for page in pages}
    anchor_cache = {}
    breaches = []
    links_checked = 0
    linked_from_readme = set()

    for page, text in texts.items():
        name = page.relative_to(root)
        for number, _, line in prose_lines(text):
            for match in LINK.finditer(line):
                target = match.group(2)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:
                    continue
                links_checked += 1
                path_part, _, anchor = target.partition("#")
                resolved = (page.parent / path_part).resolve() if path_part else page
                where = f"{name}:{number}: [{match.group(1)}]({target})"
                if not resolved.exists():
                    shown = resolved.relative_to(root) if resolved.is_relative_to(root) else resolved
                    breaches.append(f"{where}: no such file {shown}")
                    continue
                if page.name == "README.md" and page.parent == root:
                    linked_from_readme.add(resolved)
                if anchor:
                    if resolved.suffix != ".md" or not resolved.is_file():
                        breaches.append(f"{where}: an anchor into a file that is not a Markdown page")
                        continue
                    if resolved not in anchor_cache:
                        anchor_cache[resolved] = anchors(resolved.read_text(encoding="utf-8"))
                    if anchor not in anchor_cache[resolved]:
                        shown = resolved.relative_to(root)
                        breaches.append(f"{where}: no heading of {shown} has the anchor #{anchor}")

    for page in pages:
        if page.parent == root / "docs" and page not in linked_from_readme:
            breaches.append(f"{page.relative_to(root)}: not linked from README.md")

    readme_lines = texts[root / "README.md"].count("\n")
    if readme_lines > README_MAX_LINES:
        breaches.append(f"README.md: {readme_lines} lines, more than {README_MAX_LINES}: move the detail into docs/")

    docs_pages = [page for page in pages if page.parent == root / "docs"]
    print(f"{links_checked} relative links in {len(pages)} pages checked; README.md {readme_lines} lines "
          f"(at most {README_MAX_LINES}); {sum(page in linked_from_readme for page in docs_pages)} of "
          f"{len(docs_pages)} pages of docs/ linked from README.md")
    for breach in breaches:
        print("BREACH " + breach)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
