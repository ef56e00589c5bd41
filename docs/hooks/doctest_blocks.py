"""Griffe extension for the API reference: a docstring's doctest examples (``>>>`` lines and
the output after them, up to a blank line) become fenced ``pycon`` code blocks, as they are in
reST, instead of Markdown in which ``[1.0, 0.5]`` reads as a link."""
import griffe


class DoctestBlocks(griffe.Extension):
    def on_object(self, *, obj, **kwargs):
        docstring = getattr(obj, "docstring", None)
        if docstring is not None and ">>>" in docstring.value:
            docstring.value = fence_doctests(docstring.value)


def fence_doctests(text):
    """Wrap each run of doctest lines in a fenced block, keeping its indentation."""
    out, block, indent = [], False, ""
    for line in text.splitlines():
        stripped = line.lstrip()
        if not block and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            block = True
        elif block and not stripped:
            out.append(f"{indent}```")
            block = False
        out.append(line)
    if block:
        out.append(f"{indent}```")
    return "\n".join(out)
