"""The zoo (zoo.py) through both front ends on the CPU target against
PyTorch in float64: outputs, and running statistics in training mode."""
import pytest
import torch

import fusion
import fusion.dynamo

from zoo import ZOO


def relative_error(out, reference):
    return ((out.double() - reference).norm() / reference.norm()).item()


def twins(name):
    make, shape, training = ZOO[name]
    torch.manual_seed(0)
    model = make().train(training)
    reference = make().train(training)
    reference.load_state_dict(model.state_dict())
    return model, reference.double(), torch.randn(*shape)


def check_state(model, reference):
    for name, buffer in reference.named_buffers():
        torch.testing.assert_close(model.get_buffer(name).double(),
                                   buffer.double(), rtol=1e-5, atol=1e-6,
                                   msg=name)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_fusion_compile(name):
    model, reference, x = twins(name)
    compiled = fusion.compile(model, (x,), target="cpu")
    with torch.no_grad():
        assert relative_error(compiled(x), reference(x.double())) <= 1e-5
    check_state(model, reference)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_torch_compile(name):
    torch._dynamo.reset()
    model, reference, x = twins(name)
    with torch.no_grad():
        out = torch.compile(model, backend="fusion")(x)
        assert relative_error(out, reference(x.double())) <= 1e-5
    assert fusion.dynamo.last_fused, "nothing was fused"
    check_state(model, reference)
