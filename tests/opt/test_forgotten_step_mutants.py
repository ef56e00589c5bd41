"""The forgotten-step warning word for word, with two moving schedules (their names joined),
shown once (test_forgotten_step.py also checks where it points, which mutmut's trampoline
cannot keep, so tools/mutate.py deselects that one: docs/testing.md)."""
import re
import warnings

from autograd import opt
from tests.opt.test_forgotten_step import _loop


def test_the_warning_names_the_optimizer_its_moving_schedules_and_the_fix_once():
    adam = opt.Adam(lr=opt.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5),
                    beta_1=opt.ExponentialDecay(0.9, decay_steps=10, decay_rate=0.9))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _loop(adam, 300, call_step=False)
    stuck = [w for w in record if "step_counter" in str(w.message)]
    assert len(stuck) == 1 and stuck[0].category is UserWarning
    message = ("Adam: 200 updates since step_counter last advanced (it is 0), so the schedule "
               "of lr, beta_1 has not moved; call adam.step() once after each batch's updates "
               "(opt(loss) does both). This warning is shown once.")
    assert re.fullmatch(re.escape(message), str(stuck[0].message))
