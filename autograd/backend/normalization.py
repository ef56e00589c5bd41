"""The batch normalization kernels: per-channel statistics and the normalising passes, on the
CPU split over the threads by channels, keeping the input's layout.

Everything runs on an (N, C, H*W) view, or (1, C, H*W*N) for batch-last images (layout.py):
per-channel sums are einsum passes with no temporary array, and per-channel factors are (1, C,
length) rows (see :func:`channel_rows`). Channels are independent, so the threads take a range
of channels each.

>>> import numpy as np
>>> x = np.array([[1.0, 10.0], [3.0, 30.0]])
>>> y, mean, var, saved = batch_norm_forward(x, np.ones(2), np.zeros(2), 0.0, None, None)
>>> y.round(3).tolist(), mean.tolist(), var.tolist()
([[-1.0, -1.0], [1.0, 1.0]], [2.0, 20.0], [1.0, 100.0])
"""
from ..device import get_array_module
from . import buffer_cache, native, threads
from .layout import is_batch_last, batch_last, from_batch_last
from .matmul import sum_rows

__all__ = []     # reached through the kernels of numpy_kernels.py / cupy_kernels.py

MAX_REPEATED_ROW = 1 << 14     # longer rows broadcast their one value (channel_rows)


def _pixels(x):
    """x's values per channel as (N, C, L), or (1, C, L * N) for batch-last images."""
    if is_batch_last(x):
        return batch_last(x).reshape(1, x.shape[1], -1), True
    return x.reshape(x.shape[0], x.shape[1], -1), False


def batch_norm_forward(x, scale, bias, eps, mean, var):
    """y = scale * (x - mean) / sqrt(var + eps) + bias per channel (axis 1) of x (N, C, ...).
    With ``mean`` and ``var`` None they are the batch's (var biased) and are returned; else
    the given (C,) statistics are used. Returns y, mean, var and what backward needs."""
    xp = get_array_module(x)
    channels = x.shape[1]
    count = x.size // channels
    pixels, batch_last_images = _pixels(x)
    length = pixels.shape[2]
    training = mean is None
    if training:
        mean, var = xp.empty(channels, x.dtype), xp.empty(channels, x.dtype)
    centered, y = buffer_cache.empty_like(pixels), buffer_cache.empty_like(pixels)
    invstd = xp.empty(channels, x.dtype)

    def normalise_channels(start, stop):
        part, centered_part = pixels[:, start:stop], centered[:, start:stop]
        if training:
            mean[start:stop] = xp.einsum("ncl->c", part) / count
        xp.subtract(part, channel_rows(mean[start:stop], length), out=centered_part)
        if training:
            # var from the centred values (a second pass): no cancellation in float32
            var[start:stop] = xp.einsum("ncl,ncl->c", centered_part, centered_part) / count
        invstd[start:stop] = 1.0 / xp.sqrt(var[start:stop] + eps)
        gain = channel_rows(scale[start:stop] * invstd[start:stop], length)
        xp.multiply(centered_part, gain, out=y[:, start:stop])
        y[:, start:stop] += channel_rows(bias[start:stop], length)

    threads.parallel_for(normalise_channels, channels, x)
    saved = (centered, invstd, batch_last_images)
    return _images(y, x.shape, batch_last_images), mean, var, saved


def batch_norm_backward(dy, scale, saved, training, needs):
    """(dx, dscale, dbias), None where ``needs`` says not wanted. With xhat the normalised x,
    M values per channel and g = dy * scale: dx = invstd * (g - mean(g) - xhat * mean(g *
    xhat)) in training, invstd * g with fixed statistics; dscale = sum(dy * xhat), dbias =
    sum(dy)."""
    centered, invstd, batch_last_images = saved
    xp = get_array_module(dy)
    channels, length = centered.shape[1:]
    count = dy.size // channels
    dy_pixels = (batch_last(dy) if batch_last_images else dy).reshape(centered.shape)
    dbias, dscale = xp.empty(channels, dy.dtype), xp.empty(channels, dy.dtype)
    dx = buffer_cache.empty(xp, centered.shape, dy.dtype) if needs[0] else None

    def channel_gradients(start, stop):
        dy_part, centered_part = dy_pixels[:, start:stop], centered[:, start:stop]
        invstd_part = invstd[start:stop]
        dbias[start:stop] = part_dbias = xp.einsum("ncl->c", dy_part)
        # xhat = centered * invstd is never formed: the constants fold into per-channel factors
        dscale[start:stop] = part_dscale = (
            xp.einsum("ncl,ncl->c", dy_part, centered_part) * invstd_part)
        if dx is None:
            return
        dx_part = dx[:, start:stop]
        gain = channel_rows(scale[start:stop] * invstd_part, length)
        if training:
            # dx = gain * (dy - dbias / M - centered * invstd * dscale / M), built in place
            # from the centred term: four passes and no temporary
            xp.multiply(centered_part,
                        channel_rows(-(invstd_part * part_dscale / count), length),
                        out=dx_part)
            dx_part += dy_part
            dx_part -= channel_rows(part_dbias / count, length)
            dx_part *= gain
        else:
            xp.multiply(dy_part, gain, out=dx_part)

    threads.parallel_for(channel_gradients, channels, dy)
    if dx is not None:
        dx = _images(dx, dy.shape, batch_last_images)
    return dx, (dscale if needs[1] else None), (dbias if needs[2] else None)


def channel_rows(values, length):
    """Per-channel ``values`` (C,) as a (1, C, length) block, each repeated along its channel.
    NumPy broadcasts a (1, C, 1) operand through a buffered copy of every chunk; with whole rows
    the inner loop is plain contiguous arithmetic: measured 0.45 -> 0.29 ms for one subtract on
    (64, 32, 28, 28), for an extra C * H * W values (small next to x). Rows longer than
    ``MAX_REPEATED_ROW`` (batch-last rows hold a whole channel) meet a single value, broadcast."""
    if length > MAX_REPEATED_ROW:
        return values.reshape(1, -1, 1)
    return get_array_module(values).repeat(values, length).reshape(1, -1, length)


def _images(pixels, shape, batch_last_layout):
    """(N, C, H, W) (or x's own shape) from the rows the passes ran on."""
    if batch_last_layout:
        return from_batch_last(pixels.reshape(shape[1:] + shape[:1]))
    return pixels.reshape(shape)


# ---------------------------------------------------------------- layer normalization

# Rows per cache block: about 8K values (32 KiB of float32), so the passes a block needs run on
# arrays that stay in cache, and the whole normalisation reads x from memory once.
LAYER_NORM_BLOCK = 1 << 15


def layer_norm_forward(x, scale, bias, eps):
    """y = scale * xhat + bias, xhat = (x - mean) * invstd, invstd = 1 / sqrt(var + eps), mean
    and (biased) var over each row of x (M, D); scale and bias (D,) or None. Returns y, xhat,
    invstd (M, 1). The compiled kernel (float32 NumPy) splits the rows over its thread pool;
    the portable code runs every pass on a block of rows while it is in cache (the row sums as
    BLAS matrix-vector products), the blocks split over the threads."""
    xp = get_array_module(x)
    rows, width = x.shape
    y, xhat = buffer_cache.empty_like(x), buffer_cache.empty_like(x)
    invstd = xp.empty((rows, 1), x.dtype)
    if native.layer_norm_forward(x, scale, bias, eps, y, xhat, invstd[:, 0]):
        return y, xhat, invstd            # the compiled kernel, split over its own threads
    ones = xp.ones(width, x.dtype)
    mean_factor = x.dtype.type(1.0 / width)

    def normalise(start, stop):
        for begin, end in _row_blocks(start, stop, width, xp):
            x_part, h, y_part = x[begin:end], xhat[begin:end], y[begin:end]
            mean = x_part @ ones
            mean *= mean_factor
            xp.subtract(x_part, mean[:, None], out=h)
            xp.multiply(h, h, out=y_part)                     # y's block as scratch
            inverse = invstd[begin:end]
            xp.matmul(y_part, ones, out=inverse[:, 0])
            inverse *= mean_factor
            inverse += eps
            xp.sqrt(inverse, out=inverse)
            xp.reciprocal(inverse, out=inverse)
            h *= inverse
            _affine(h, scale, bias, y_part, xp)

    threads.parallel_for(normalise, rows, x)
    return y, xhat, invstd


def layer_norm_backward(dy, xhat, invstd, scale, needs):
    """(dx, dscale, dbias) of :func:`layer_norm_forward`, None where ``needs`` (three flags)
    says not wanted. With g = dy * scale (dy without scale): dx = invstd * (g - mean(g) -
    xhat * mean(g * xhat)) over each row, dscale = sum(dy * xhat) and dbias = sum(dy) over the
    rows. One pass over dy and xhat a block of rows at a time; each thread sums its own
    dscale / dbias, added up at the end."""
    xp = get_array_module(dy)
    rows, width = dy.shape
    dx = buffer_cache.empty_like(dy) if needs[0] else None
    dscale = xp.zeros(width, dy.dtype) if needs[1] else None
    dbias = xp.zeros(width, dy.dtype) if needs[2] else None
    if native.layer_norm_backward(dy, xhat, invstd[:, 0], scale, dx, dscale, dbias):
        return dx, dscale, dbias          # the compiled kernel, split over its own threads
    ones = xp.ones(width, dy.dtype)
    mean_factor = dy.dtype.type(1.0 / width)
    partials = []

    def gradients(start, stop):
        dscale = xp.zeros(width, dy.dtype) if needs[1] else None
        dbias = xp.zeros(width, dy.dtype) if needs[2] else None
        for begin, end in _row_blocks(start, stop, width, xp):
            dy_part, h = dy[begin:end], xhat[begin:end]
            scratch = dy_part * h
            if dscale is not None:
                dscale += sum_rows(scratch)
            if dbias is not None:
                dbias += sum_rows(dy_part)
            if dx is None:
                continue
            g = dx[begin:end]
            if scale is None:
                g[...] = dy_part
            else:
                xp.multiply(dy_part, scale, out=g)
                xp.multiply(g, h, out=scratch)
            mean_g = g @ ones
            mean_g *= mean_factor
            mean_gh = scratch @ ones
            mean_gh *= mean_factor
            xp.multiply(h, mean_gh[:, None], out=scratch)
            g -= scratch
            g -= mean_g[:, None]
            g *= invstd[begin:end]
        partials.append((dscale, dbias))

    threads.parallel_for(gradients, rows, dy)
    dscale, dbias = partials[0]
    for more_dscale, more_dbias in partials[1:]:
        if dscale is not None:
            dscale += more_dscale
        if dbias is not None:
            dbias += more_dbias
    return dx, dscale, dbias


def _block_rows(width):
    return max(1, LAYER_NORM_BLOCK // width)


def _row_blocks(start, stop, width, xp):
    """(begin, end) blocks of rows in [start, stop): cache-sized on the CPU, one block on a GPU
    (its kernels are parallel over the whole array already)."""
    step = _block_rows(width) if xp.__name__ == "numpy" else max(stop - start, 1)
    return [(begin, min(begin + step, stop)) for begin in range(start, stop, step)]


def _affine(xhat, scale, bias, out, xp):
    if scale is None:
        out[...] = xhat
    else:
        xp.multiply(xhat, scale, out=out)
    if bias is not None:
        out += bias
