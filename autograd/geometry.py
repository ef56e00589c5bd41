"""Window geometry of convolution and pooling, resolved once: kernel, stride, padding, dilation
and groups, and the output size they give.

Every spelling of padding that SINGA, ONNX and PyTorch use resolves here and nowhere else:
an int, one int per axis, SINGA's (top, bottom, left, right), PyTorch's ``"same"`` and
``"valid"``, and SINGA's / ONNX's ``pad_mode`` (``auto_pad``), which overrides ``padding``.
The layers use a :class:`ConvGeometry` for shape inference, the conv and pooling operations for
their checks and the backend for its loops, so all three agree by construction.

>>> g = ConvGeometry(3, stride=2, padding="same")
>>> g.pads((7, 8)), g.output_size((7, 8))
(((1, 1), (0, 1)), (4, 4))
>>> ConvGeometry((3, 3), padding=1).output_size((28, 28))
(28, 28)
"""
import numbers

__all__ = ["ConvGeometry", "PAD_MODES"]


def axis_slice(axis, start, stop, step=None):
    """An index that takes ``start:stop:step`` along ``axis`` and everything of the axes before
    it: ``x[axis_slice(1, 0, 2)]`` is ``x[:, 0:2]`` (the operations and the kernels share it)."""
    return (slice(None),) * axis + (slice(start, stop, step),)

PAD_MODES = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")    # SINGA's / ONNX's auto_pad
_PADDING_WORDS = {"same": "SAME_UPPER", "valid": "VALID"}      # PyTorch's strings


def _is_int(value):
    # a plain int first: the abstract-class check costs ~1 us, and a batch-1 convolution
    # checks about twenty arguments a call
    return type(value) is int or (isinstance(value, numbers.Integral)
                                  and not isinstance(value, bool))


def per_axis(value, dims, name, what):
    """``value`` (an int, or a sequence of ``dims`` ints) as a tuple of ``dims`` ints; a
    TypeError naming ``name`` and ``what`` otherwise.

    >>> per_axis(3, 2, "conv2d", "stride"), per_axis([1, 2], 2, "conv2d", "stride")
    ((3, 3), (1, 2))
    """
    if _is_int(value):
        return (int(value),) * dims
    try:
        values = tuple(value)
    except TypeError:
        values = None
    if values is None or len(values) != dims or not all(_is_int(v) for v in values):
        form = "an int" if dims == 1 else f"an int or {dims} ints"
        raise TypeError(f"{name}: {what} must be {form}, got {value!r}")
    return tuple(int(v) for v in values)


def pair(value, name, what):
    """``value`` (an int or a pair of ints) as a (height, width) tuple of ints."""
    return per_axis(value, 2, name, what)


def pad_mode_argument(pad_mode, name):
    """SINGA's ``pad_mode`` upper-cased, else a ValueError listing :data:`PAD_MODES`."""
    mode = pad_mode.upper() if isinstance(pad_mode, str) else pad_mode
    if mode not in PAD_MODES:
        raise ValueError(f"{name}: pad_mode must be one of {PAD_MODES}, got {pad_mode!r}")
    return mode


def output_size(size, kernel, stride, dilation, pads, ceil_mode=False):
    """Number of window positions along one axis of ``size`` padded by ``pads`` (before, after).

    With ``ceil_mode`` a last partial window is kept when it starts inside the input or the
    leading padding (PyTorch's rule), so no window lies entirely in the trailing overhang.

    >>> output_size(5, 3, 1, 1, (1, 1)), output_size(7, 3, 2, 1, (0, 0), ceil_mode=True)
    (5, 3)
    """
    span = dilation * (kernel - 1) + 1
    room = size + pads[0] + pads[1] - span
    if room < 0:
        return 0
    if not ceil_mode:
        return room // stride + 1
    count = -(-room // stride) + 1
    if (count - 1) * stride >= size + pads[0]:
        count -= 1
    return count


def same_pads(size, kernel, stride, dilation, lower=False):
    """(before, after) padding that gives ``ceil(size / stride)`` outputs, as ONNX's SAME_UPPER
    (the odd extra pixel after) or SAME_LOWER (before)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + dilation * (kernel - 1) + 1 - size, 0)
    small, large = total // 2, total - total // 2
    return (large, small) if lower else (small, large)


_RESOLVED = {}             # (class, arguments) -> the ConvGeometry they resolve to
_RESOLVED_LIMIT = 1024     # distinct argument tuples kept; later ones are resolved per call


def _plain(values):
    """True if ``values`` is a tuple of ints, strs or tuples of them (exactly those types)."""
    for item in values:                  # a loop, not all(...): this runs on every conv call
        kind = type(item)
        if kind is not int and kind is not str and not (kind is tuple and _plain(item)):
            return False
    return True


def _restore(cls, values):
    geometry = object.__new__(cls)
    for slot, value in zip(cls.__slots__, values):
        setattr(geometry, slot, value)
    return geometry


class ConvGeometry:
    """The window geometry of a convolution or pooling over ``dims`` spatial axes (1 or 2).

    ``kernel_size``, ``stride`` and ``dilation`` are ints or one int per axis. ``padding`` is
    an int, one int per axis (both sides), ``2 * dims`` ints (before and after per axis:
    SINGA's (top, bottom, left, right)), or ``"same"`` / ``"valid"``; ``pad_mode`` ("NOTSET",
    "SAME_UPPER", "SAME_LOWER", "VALID") overrides it where not "NOTSET". ``ceil_mode`` keeps a
    last partial window (pooling). ``name`` is what error messages call the caller.

    Attributes: ``kernel``, ``stride``, ``dilation`` (tuples), ``groups``, ``pad_mode`` (the
    resolved mode: NOTSET, SAME_UPPER, SAME_LOWER or VALID), ``ceil_mode``, ``dims``.

    >>> ConvGeometry(2, padding=(0, 1, 1, 0)).pads((4, 4))
    ((0, 1), (1, 0))
    >>> ConvGeometry(3, pad_mode="SAME_LOWER", stride=2).pads((6, 6))
    ((1, 0), (1, 0))
    """

    __slots__ = ("kernel", "stride", "dilation", "groups", "pad_mode", "ceil_mode", "dims",
                 "name", "_fixed_pads", "_hash")      # _hash last: not pickled

    def __new__(cls, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                pad_mode="NOTSET", ceil_mode=False, dims=2, name="conv2d"):
        # A functional conv2d or pool builds its geometry on every call with the same
        # arguments: resolved once and shared (a geometry is never changed once built), which
        # takes the argument checks out of a batch-1 CNN's per-call Python. Only arguments made
        # of plain ints and strings are keys (True == 1 must not find 1's geometry).
        key = (cls, kernel_size, stride, padding, dilation, groups, pad_mode, ceil_mode, dims,
               name)
        cacheable = type(ceil_mode) is bool and _plain(key[1:7]) and _plain(key[8:])
        if cacheable:
            geometry = _RESOLVED.get(key)
            if geometry is not None:
                return geometry
        geometry = object.__new__(cls)
        geometry._resolve(kernel_size, stride, padding, dilation, groups, pad_mode, ceil_mode,
                          dims, name)
        if cacheable and len(_RESOLVED) < _RESOLVED_LIMIT:
            _RESOLVED[key] = geometry
        return geometry

    def __init__(self, *arguments, **keywords):
        """Resolved by ``__new__`` (shared between calls with the same arguments)."""

    def __reduce__(self):                # pickle and copy without calling __new__'s checks
        # (not the hash: a str's hash differs between processes)
        return _restore, (type(self), tuple(getattr(self, slot) for slot in self.__slots__
                                            if slot != "_hash"))

    def _resolve(self, kernel_size, stride, padding, dilation, groups, pad_mode, ceil_mode,
                 dims, name):
        self.dims, self.name = dims, name
        self.kernel = self._positive(kernel_size, "kernel_size")
        self.stride = self._positive(stride, "stride")
        self.dilation = self._positive(dilation, "dilation")
        if not _is_int(groups) or groups < 1:
            raise ValueError(f"{name}: groups must be a positive int, got {groups!r}")
        self.groups = int(groups)
        self.ceil_mode = bool(ceil_mode)
        mode = pad_mode_argument(pad_mode, name)
        self._fixed_pads = None
        if isinstance(padding, str):
            word = _PADDING_WORDS.get(padding.lower())
            if word is None:
                raise ValueError(f"{name}: padding must be {self._forms()}, 'same' or "
                                 f"'valid', got {padding!r}")
            if mode == "NOTSET":
                mode = word
        elif mode == "NOTSET":
            self._fixed_pads = self._explicit_pads(padding)
        if mode == "VALID":
            self._fixed_pads = ((0, 0),) * dims
        self.pad_mode = mode

    def _forms(self):
        return "an int, a pair" if self.dims == 2 else "an int"

    def _positive(self, value, what):
        values = per_axis(value, self.dims, self.name, what)
        if min(values) < 1:
            raise ValueError(f"{self.name}: {what} must be positive, got {value!r}")
        return values

    def _explicit_pads(self, padding):
        if not _is_int(padding) and hasattr(padding, "__len__") and \
                len(padding) == 2 * self.dims and self.dims > 1:
            values = tuple(padding)
            if all(_is_int(v) for v in values):
                values = tuple(int(v) for v in values)
                pads = tuple((values[2 * a], values[2 * a + 1]) for a in range(self.dims))
                return self._non_negative(pads, padding)
        try:
            values = per_axis(padding, self.dims, self.name, "padding")
        except TypeError:
            pairs = f", {2 * self.dims} ints (before and after each axis)" if self.dims > 1 else ""
            raise TypeError(f"{self.name}: padding must be {self._forms()}{pairs}, 'same' or "
                            f"'valid', got {padding!r}") from None
        return self._non_negative(tuple((p, p) for p in values), padding)

    def _non_negative(self, pads, given):
        if min(min(p) for p in pads) < 0:
            raise ValueError(f"{self.name}: padding must be non-negative, got {given!r}")
        return pads

    def pads(self, input_size):
        """((before, after), ...) per spatial axis for an input of spatial ``input_size``
        (a size that is None, unknown yet, gets (0, 0) where the padding depends on it)."""
        if self._fixed_pads is not None:
            return self._fixed_pads
        lower = self.pad_mode == "SAME_LOWER"
        return tuple((0, 0) if size is None else same_pads(size, k, s, d, lower)
                     for size, k, s, d in zip(input_size, self.kernel, self.stride,
                                              self.dilation))

    def output_size(self, input_size, pads=None):
        """Window positions per spatial axis (0 where the kernel does not fit; None where the
        input size is None), padded by ``pads`` ((before, after) per axis; by default
        :meth:`pads`)."""
        pads = self.pads(input_size) if pads is None else pads
        return tuple(None if size is None else output_size(size, k, s, d, p, self.ceil_mode)
                     for size, k, s, d, p in
                     zip(input_size, self.kernel, self.stride, self.dilation, pads))

    def smallest_input(self, pads):
        """Per axis, the smallest input size that gives one output with ``pads``."""
        return tuple(span - before - after for span, (before, after) in
                     zip(self.spans(), pads))

    def spans(self):
        """Pixels one window covers along each axis: dilation * (kernel - 1) + 1."""
        return tuple(d * (k - 1) + 1 for k, d in zip(self.kernel, self.dilation))

    def __eq__(self, other):
        return isinstance(other, ConvGeometry) and self._key() == other._key()

    def __hash__(self):
        # computed once: a plan's key hashes its op's geometry on every no_grad call
        try:
            return self._hash
        except AttributeError:
            self._hash = hash(self._key())
            return self._hash

    def _key(self):
        return (self.kernel, self.stride, self.dilation, self.groups, self.pad_mode,
                self.ceil_mode, self._fixed_pads)

    def __repr__(self):
        padding = self.pad_mode if self._fixed_pads is None else self._fixed_pads
        return (f"ConvGeometry(kernel={self.kernel}, stride={self.stride}, padding={padding}, "
                f"dilation={self.dilation}, groups={self.groups})")
