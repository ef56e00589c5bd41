"""Stochastic gradient descent, optionally with momentum (heavy-ball or Nesterov)."""
from ..backend import kernels_for
from .base import Hyperparameter, Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """``SGD(lr=0.1, momentum=0, dampening=0, weight_decay=0, nesterov=False)`` (SINGA's
    signature and defaults). Each hyperparameter may be a number, a schedule or a function of
    the step.

    With ``g`` the gradient, ``p`` the parameter and ``buf`` the momentum buffer::

        g = g + weight_decay * p                      (L2 penalty; the gradient is not written)
        buf = g                      at the first step with momentum
        buf = momentum * buf + (1 - dampening) * g    afterwards
        g = g + momentum * buf  if nesterov  else  buf
        p = p - lr * g

    This is PyTorch's formula (and SINGA 2's). SINGA 3 starts ``buf`` from zeros, so its first
    step is damped too; the two agree for ``dampening=0``, the default. As in SINGA and
    PyTorch, ``lr`` multiplies the buffer (``buf = momentum*buf + g; p -= lr*buf``), unlike
    Sutskever et al.'s ``buf = momentum*buf + lr*g``. Nesterov needs a momentum and no
    dampening.

    >>> import autograd
    >>> w = autograd.Tensor(data=[1.0], stores_grad=True)
    >>> sgd = SGD(lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     sgd(autograd.sum(w * w))
    >>> w.to_numpy()      # 1 - 0.2 = 0.8; then buf = 0.9*2 + 1.6 = 3.4: 0.8 - 0.34
    array([0.46], dtype=float32)
    """

    momentum = Hyperparameter(low=0.0)
    dampening = Hyperparameter()
    weight_decay = Hyperparameter(low=0.0)
    state_slots = ("momentum_buffer",)

    def __init__(self, lr=0.1, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 dtype=None):
        super().__init__(lr, dtype)
        self.momentum = momentum
        self.dampening = dampening
        self.weight_decay = weight_decay
        self.nesterov = False
        self.check_options({"nesterov": nesterov})
        self.nesterov = bool(nesterov)

    def update_array(self, data, grad, state, values):
        # in place, one pass per term where BLAS allows (backend/update.py)
        kernels_for(data).sgd_update(data, grad, state, values["lr"], values["momentum"],
                                     values["dampening"], values["weight_decay"],
                                     self.nesterov)

    def options(self):
        return {"nesterov": self.nesterov}

    def check_options(self, options, schedules=None):
        super().check_options(options, schedules)
        schedules = schedules or self._schedules
        momentum = schedules["momentum"].init_value
        dampening = schedules["dampening"].init_value
        if options.get("nesterov") and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum needs momentum > 0 and dampening = 0, got "
                             f"momentum={momentum}, dampening={dampening}")

    def set_options(self, options):
        self.nesterov = bool(options.get("nesterov", self.nesterov))
