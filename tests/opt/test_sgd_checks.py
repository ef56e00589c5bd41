"""SGD's Nesterov check gives the whole message: what it needs and what it got (mutation testing
found only its start checked; docs/testing.md)."""
import pytest

from autograd import opt


@pytest.mark.parametrize("momentum,dampening", [(0.0, 0.0), (0.9, 0.1)])
def test_nesterov_without_momentum_or_with_dampening_names_both(momentum, dampening):
    with pytest.raises(ValueError, match=r"^SGD: Nesterov momentum needs momentum > 0 and "
                                         r"dampening = 0, got "
                                         f"momentum={momentum}, dampening={dampening}$"):
        opt.SGD(lr=0.1, momentum=momentum, dampening=dampening, nesterov=True)


def test_nesterov_option_round_trips_through_state_dict():
    source = opt.SGD(lr=0.1, momentum=0.9, nesterov=True)
    target = opt.SGD(lr=0.1, momentum=0.9)
    assert target.options() == {"nesterov": False}
    target.load_state_dict(source.state_dict())
    assert target.nesterov is True and target.options() == {"nesterov": True}


def test_a_state_without_options_keeps_the_optimizers_own_nesterov():
    saved = opt.SGD(lr=0.1, momentum=0.9).state_dict()
    del saved["options"]                          # a state written before options existed
    target = opt.SGD(lr=0.1, momentum=0.9, nesterov=True)
    target.load_state_dict(saved)
    assert target.nesterov is True
