"""The embedded text corpus: "tiny shakespeare" (1.1 MB of plays, 65 characters), shipped
xz-compressed inside the package, for character-level language models.

See SHAKESPEARE_LICENSE.txt beside this file for the source and licences. The split is
nanoGPT's: the first 90% of the characters train, the last 10% validate.

>>> text = load_shakespeare_text()
>>> len(text), text[:14]
(1115394, 'First Citizen:')
>>> ids, vocabulary = load_shakespeare("val")
>>> len(ids), ids.dtype, len(vocabulary), vocabulary.decode(ids[:15])
(111540, dtype('int64'), 65, '?\\n\\nGREMIO:\\nGood')
"""
import lzma
import os

import numpy as np

__all__ = ["load_shakespeare", "load_shakespeare_text", "CharVocabulary", "random_windows",
           "SHAKESPEARE_PATH"]

SHAKESPEARE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "tinyshakespeare.txt.xz")
"""Where the embedded corpus lives (xz-compressed UTF-8 text)."""

_SPLITS = ("train", "val", "all")


def load_shakespeare_text():
    """The whole corpus as one string (1,115,394 characters)."""
    with lzma.open(SHAKESPEARE_PATH, "rt", encoding="utf-8") as f:
        return f.read()


class CharVocabulary:
    """The characters of a text, sorted: ``encode(str)`` gives int64 ids, ``decode(ids)`` the
    string back.

    >>> vocabulary = CharVocabulary("hello")
    >>> len(vocabulary), vocabulary.encode("hole").tolist(), vocabulary.decode([3, 1])
    (4, [1, 3, 2, 0], 'oh')
    """

    def __init__(self, text):
        self.chars = "".join(sorted(set(text)))
        self._index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def __repr__(self):
        return f"CharVocabulary({len(self)} characters)"

    def encode(self, text):
        unknown = sorted(set(text) - self._index.keys())
        if unknown:
            raise ValueError(f"CharVocabulary.encode: characters {unknown} are not in the "
                             "vocabulary")
        return np.array([self._index[c] for c in text], np.int64)

    def decode(self, ids):
        return "".join(self.chars[int(i)] for i in np.asarray(ids).reshape(-1))


def load_shakespeare(split="train", val_fraction=0.1):
    """``(ids, vocabulary)``: the corpus as int64 character ids for ``split`` "train" (the
    first 1 - val_fraction of the text), "val" (the rest) or "all", and the
    :class:`CharVocabulary` of the whole corpus (65 characters, the same for every split)."""
    if split not in _SPLITS:
        raise ValueError(f"load_shakespeare: split must be one of {_SPLITS}, got {split!r}")
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"load_shakespeare: val_fraction must be in (0, 1), got "
                         f"{val_fraction!r}")
    text = load_shakespeare_text()
    vocabulary = CharVocabulary(text)
    ids = np.frombuffer(text.encode("ascii"), np.uint8)         # the corpus is plain ASCII
    table = np.zeros(128, np.int64)
    table[np.frombuffer(vocabulary.chars.encode("ascii"), np.uint8)] = np.arange(len(vocabulary))
    ids = table[ids]
    boundary = int(len(ids) * (1.0 - val_fraction))
    if split == "train":
        ids = ids[:boundary]
    elif split == "val":
        ids = ids[boundary:]
    return ids.copy(), vocabulary


def random_windows(ids, batch_size, context, rng):
    """A batch of ``batch_size`` random windows of ``context`` ids and the windows shifted by
    one: ``(x, y)``, both int64 (batch_size, context), y[:, t] the id after x[:, t] (nanoGPT's
    ``get_batch``). ``rng`` is a NumPy Generator.

    >>> x, y = random_windows(np.arange(100), 2, 5, np.random.default_rng(0))
    >>> x.shape, bool((y == x + 1).all())
    ((2, 5), True)
    """
    if len(ids) <= context:
        raise ValueError(f"random_windows: need more than context={context} ids, got "
                         f"{len(ids)}")
    starts = rng.integers(0, len(ids) - context, batch_size)
    offsets = np.arange(context)
    x = ids[starts[:, None] + offsets]
    y = ids[starts[:, None] + offsets + 1]
    return x, y
