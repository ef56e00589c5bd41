"""Optimizers with per-element step sizes: Adam, AdamW, RMSProp, AdaGrad.

Every update is in place on the parameter's array, with state arrays of its dtype on its
device; hyperparameters reach the arithmetic as Python floats, so float32 stays float32.
"""
from ..backend import kernels_for
from ..device import get_array_module
from ..backend.update import with_weight_decay
from .base import Hyperparameter, Optimizer

__all__ = ["Adam", "AdamW", "RMSProp", "AdaGrad"]


def _zeros_slot(state, slot, data):
    array = state.get(slot)
    if array is None:
        array = state[slot] = get_array_module(data).zeros_like(data)
    return array


class Adam(Optimizer):
    """``Adam(lr=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-8, weight_decay=0)``, SINGA's
    names; PyTorch's ``betas=(beta_1, beta_2)`` and ``eps=`` are accepted too.

    With ``t`` the number of updates this parameter has had (1 at its first)::

        g = g + weight_decay * p                  (L2 penalty, coupled, as SINGA and PyTorch)
        m = beta_1 * m + (1 - beta_1) * g
        v = beta_2 * v + (1 - beta_2) * g * g
        p = p - lr * (m / (1 - beta_1**t)) / (sqrt(v / (1 - beta_2**t)) + epsilon)

    SINGA's default ``lr`` is 0.1; ours is 1e-3 (Kingma & Ba's and PyTorch's), as 0.1 makes
    Adam diverge on most problems. SINGA takes ``t`` from ``step_counter + 1``; counting per
    parameter (as PyTorch) gives the same ``t`` when every parameter is updated once per step,
    and the right bias correction for a parameter that joins training later.

    >>> import autograd
    >>> w = autograd.Tensor(data=[1.0, -3.0], stores_grad=True)
    >>> adam = Adam(lr=0.1)
    >>> adam(autograd.sum(w * w))        # the first step moves each element by about lr
    >>> w.to_numpy()
    array([ 0.9, -2.9], dtype=float32)
    """

    beta_1 = Hyperparameter(low=0.0, high=1.0, high_inclusive=False)
    beta_2 = Hyperparameter(low=0.0, high=1.0, high_inclusive=False)
    epsilon = Hyperparameter(low=0.0)
    weight_decay = Hyperparameter(low=0.0)
    state_slots = ("m", "v", "step")
    decoupled_weight_decay = False

    def __init__(self, lr=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-8, weight_decay=0,
                 dtype=None, *, betas=None, eps=None):
        super().__init__(lr, dtype)
        if betas is not None:
            if (beta_1, beta_2) != (0.9, 0.999):
                raise ValueError(f"{type(self).__name__}: give betas or beta_1/beta_2, not both")
            if not isinstance(betas, (tuple, list)) or len(betas) != 2:
                raise ValueError(f"{type(self).__name__}: betas must be a pair (beta_1, "
                                 f"beta_2), got {betas!r}")
            beta_1, beta_2 = betas
        if eps is not None:
            if epsilon != 1e-8:
                raise ValueError(f"{type(self).__name__}: give eps or epsilon, not both")
            epsilon = eps
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.weight_decay = weight_decay

    @property
    def betas(self):
        """PyTorch's spelling: ``(beta_1, beta_2)`` at the current step."""
        values = self.values()
        return values["beta_1"], values["beta_2"]

    def update_array(self, data, grad, state, values):
        # in place with one temporary (backend/update.py)
        kernels_for(data).adam_update(data, grad, state, values["lr"], values["beta_1"],
                                      values["beta_2"], values["epsilon"],
                                      values["weight_decay"], self.decoupled_weight_decay)


class AdamW(Adam):
    """``AdamW(lr=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-8, weight_decay=0.01)``: Adam
    with decoupled weight decay (Loshchilov & Hutter; PyTorch's AdamW). The decay shrinks the
    parameter directly instead of entering the moments::

        p = p * (1 - lr * weight_decay)
        p = p - lr * m_hat / (sqrt(v_hat) + epsilon)      (m, v from the raw gradient)

    >>> import autograd
    >>> w = autograd.Tensor(data=[2.0], stores_grad=True)
    >>> AdamW(lr=0.1, weight_decay=0.5)(autograd.sum(w * w))
    >>> w.to_numpy()       # 2 * (1 - 0.05) - 0.1
    array([1.8], dtype=float32)
    """

    decoupled_weight_decay = True

    def __init__(self, lr=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-8, weight_decay=0.01, *,
                 betas=None, eps=None):
        super().__init__(lr, beta_1, beta_2, epsilon, weight_decay, betas=betas, eps=eps)


class RMSProp(Optimizer):
    """``RMSProp(lr=0.1, rho=0.9, epsilon=1e-8, weight_decay=0)`` (SINGA's signature, defaults
    and formula; epsilon sits inside the square root)::

        g = g + weight_decay * p
        running_average = rho * running_average + (1 - rho) * g * g
        p = p - lr * g / sqrt(running_average + epsilon)

    PyTorch's RMSprop instead adds eps outside the root, with ``alpha`` for ``rho``.

    >>> import autograd
    >>> w = autograd.Tensor(data=[1.0], stores_grad=True)
    >>> RMSProp(lr=0.01)(autograd.sum(w * w))     # g=2, avg=0.4: 1 - 0.01*2/sqrt(0.4)
    >>> w.to_numpy().round(5)
    array([0.96838], dtype=float32)
    """

    rho = Hyperparameter(low=0.0, high=1.0)
    epsilon = Hyperparameter(low=0.0)
    weight_decay = Hyperparameter(low=0.0)
    state_slots = ("running_average",)

    def __init__(self, lr=0.1, rho=0.9, epsilon=1e-8, weight_decay=0, dtype=None):
        super().__init__(lr, dtype)
        self.rho = rho
        self.epsilon = epsilon
        self.weight_decay = weight_decay

    def update_array(self, data, grad, state, values):
        rho = values["rho"]
        xp = get_array_module(data)
        grad = with_weight_decay(grad, data, values["weight_decay"])
        average = _zeros_slot(state, "running_average", data)
        average *= rho
        average += (1.0 - rho) * (grad * grad)
        denominator = average + values["epsilon"]
        xp.sqrt(denominator, out=denominator)
        step = grad * values["lr"]
        step /= denominator
        data -= step


class AdaGrad(Optimizer):
    """``AdaGrad(lr=0.1, epsilon=1e-8, weight_decay=0)`` (SINGA's signature, defaults and
    formula; epsilon inside the square root)::

        g = g + weight_decay * p
        history = history + g * g
        p = p - lr * g / sqrt(history + epsilon)

    >>> import autograd
    >>> w = autograd.Tensor(data=[1.0], stores_grad=True)
    >>> AdaGrad(lr=0.1)(autograd.sum(w * w))      # the first step is lr * sign(g)
    >>> w.to_numpy()
    array([0.9], dtype=float32)
    """

    epsilon = Hyperparameter(low=0.0)
    weight_decay = Hyperparameter(low=0.0)
    state_slots = ("history",)

    def __init__(self, lr=0.1, epsilon=1e-8, weight_decay=0, dtype=None):
        super().__init__(lr, dtype)
        self.epsilon = epsilon
        self.weight_decay = weight_decay

    def update_array(self, data, grad, state, values):
        xp = get_array_module(data)
        grad = with_weight_decay(grad, data, values["weight_decay"])
        history = _zeros_slot(state, "history", data)
        history += grad * grad
        denominator = history + values["epsilon"]
        xp.sqrt(denominator, out=denominator)
        step = grad * values["lr"]
        step /= denominator
        data -= step
