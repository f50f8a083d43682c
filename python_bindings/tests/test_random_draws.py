"""fusion.random_uniform, the counter-based draw that dropout in training
mode reads (fusion/random.py), and fusion.compile's training-mode dropout
(run on the CPU target; the GPU check runs the GPU targets'): the library's draw is the definition's, bit for bit
(Philox4x32-10, checked against Random123's known answers), each call
draws anew from PyTorch's generator, and the dropped results match a
float64 reference of the same draw."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fusion
import fusion.module
from fusion.dtypes import rounded
from fusion.random import draw_seed, philox4x32, uniform

pytestmark = pytest.mark.usefixtures("no_grad")

# Random123's known answers for Philox4x32-10: (counter, key, output).
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0),
     (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff,) * 4, (0xffffffff,) * 2,
     (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
     (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


@pytest.mark.parametrize("counter, key, expected", KNOWN_ANSWERS)
def test_philox_matches_random123_known_answers(counter, key, expected):
    words = philox4x32([torch.tensor(c) for c in counter],
                       [torch.tensor(k) for k in key])
    assert [int(w) for w in words] == list(expected)


def test_draw_of_the_zero_seed_starts_with_the_known_answer():
    """Elements 0-3 are the four words of block 0 (Random123's first known
    answer); element 4 starts block 1, across the row."""
    draw = uniform(torch.zeros(2), 3, 5, 0, torch.float32)
    words = KNOWN_ANSWERS[0][2]
    assert draw[0, :4].tolist() == [(w >> 8) * 2.0**-24 for w in words]
    block1 = philox4x32([torch.tensor(1)] + [torch.tensor(0)] * 3,
                        [torch.tensor(0)] * 2)
    assert draw[0, 4].item() == (int(block1[0]) >> 8) * 2.0**-24
    assert draw[1, 0].item() == (int(block1[1]) >> 8) * 2.0**-24


def test_draws_are_uniform_in_the_unit_interval_and_apart():
    seed = draw_seed("cpu")
    draw = uniform(seed, 256, 256, 0, torch.float32)
    assert draw.min() >= 0 and draw.max() < 1
    assert torch.equal(draw * 2**24, (draw * 2**24).round())
    # 65536 values: the mean of U(0, 1) within 4.5 standard deviations.
    assert abs(draw.double().mean().item() - 0.5) < 4.5 * (1 / 12 / 65536)**.5
    assert not torch.equal(draw, uniform(seed, 256, 256, 1, torch.float32))
    assert not torch.equal(draw, uniform(draw_seed("cpu"), 256, 256, 0,
                                         torch.float32))


class LinearDropoutRelu(nn.Module):
    def __init__(self, p, features=48):
        super().__init__()
        self.linear = nn.Linear(32, features)
        self.dropout = nn.Dropout(p)

    def forward(self, x):
        return F.relu(self.dropout(self.linear(x)))


class PostNormBlock(nn.Module):
    """BERT's output block: `norm(dropout(dense(h)) + x)`, and a second
    dropout of the same width (its own stream)."""

    def __init__(self, p):
        super().__init__()
        self.dense = nn.Linear(32, 32)
        self.dropout = nn.Dropout(p)
        self.norm = nn.LayerNorm(32)
        self.out = nn.Linear(32, 32)
        self.out_dropout = nn.Dropout(p)

    def forward(self, x):
        h = self.norm(self.dropout(self.dense(x)) + x)
        return self.out_dropout(self.out(h))


def seed_of_call(compiled, x, seed):
    """The call's output after torch.manual_seed(seed), and the seed the
    library drew for it (the call's one draw from PyTorch's generator)."""
    torch.manual_seed(seed)
    out = compiled(x)
    torch.manual_seed(seed)
    return out, draw_seed(x.device)


def keep_mask(seed, rows, columns, stream, p, dtype):
    return uniform(seed, rows, columns, stream, dtype) > rounded(p, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("rows", [1, 7, 130])
def test_compiled_dropout_is_the_draws(dtype, rows):
    p = 0.3
    model = LinearDropoutRelu(p).to(dtype).train()
    compiled = fusion.compile(model, (torch.randn(4, 32, dtype=dtype),),
                              target="cpu")
    x = torch.randn(rows, 32, dtype=dtype)
    out, seed = seed_of_call(compiled, x, 11)
    keep = keep_mask(seed, rows, 48, 0, p, dtype)
    linear = copy.deepcopy(model.linear).double()(x.double())
    reference = F.relu(keep * linear / (1 - p))
    bound = 1e-5 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(out.double(), reference, rtol=bound,
                               atol=bound)
    # Where the linear output is clearly positive, the mask shows exactly.
    positive = linear > 1e-2
    assert torch.equal(out[positive] != 0, keep[positive])


def test_rank_3_post_norm_block_with_two_dropouts():
    p = 0.25
    model = PostNormBlock(p).train()
    compiled = fusion.compile(model, (torch.randn(2, 5, 32),), target="cpu")
    x = torch.randn(3, 9, 32)
    out, seed = seed_of_call(compiled, x, 5)
    reference = PostNormBlock(p).double()
    reference.load_state_dict(model.state_dict())
    flat = x.double().reshape(-1, 32)
    first = keep_mask(seed, 27, 32, 0, p, torch.float32)
    second = keep_mask(seed, 27, 32, 1, p, torch.float32)
    h = reference.norm(first * reference.dense(flat) / (1 - p) + flat)
    expected = second * reference.out(h) / (1 - p)
    torch.testing.assert_close(out.double().reshape(-1, 32), expected,
                               rtol=1e-5, atol=1e-5)
    assert not torch.equal(first, second)


def test_calls_draw_anew_and_manual_seed_repeats_them():
    model = LinearDropoutRelu(0.5).train()
    compiled = fusion.compile(model, (torch.randn(4, 32),), target="cpu")
    x = torch.randn(64, 32)
    first, second = compiled(x), compiled(x)
    assert not torch.equal(first, second)
    torch.manual_seed(3)
    again = compiled(x)
    torch.manual_seed(3)
    assert torch.equal(again, compiled(x))
    positive = model.linear(x) > 0
    kept = (first[positive] != 0).double().mean().item()
    assert 0.4 < kept < 0.6


def test_eval_mode_of_the_same_module_drops_nothing():
    model = LinearDropoutRelu(0.5).train()
    compiled = fusion.compile(model, (torch.randn(4, 32),), target="cpu")
    model.eval()
    x = torch.randn(16, 32)
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)


def test_backward_through_a_drawing_forward_is_refused():
    model = LinearDropoutRelu(0.5).train()
    compiled = fusion.compile(model, (torch.randn(4, 32),), target="cpu")
    with torch.enable_grad(), pytest.raises(
            fusion.FusionRuntimeError, match="draws dropout masks"):
        compiled(torch.randn(4, 32, requires_grad=True))


@pytest.mark.parametrize("strategy", ["tiled", "wgmma"])
def test_gpu_targets_compile_training_mode_dropout(strategy):
    """The GPU libraries draw where their kernels read the draw (lit tests
    check where: FusionToGPU/random-uniform.mlir); the train() entry takes
    the seed last, as the CPU library's, and the GPU check runs it."""
    compiled = fusion.compile(LinearDropoutRelu(0.5).train(),
                              (torch.randn(4, 32),), target="sm_90",
                              strategy=strategy)
    train, eval_ = (compiled._manifest["entries"][m] for m in ("train",
                                                                "eval"))
    assert train["seed"] == len(train["arguments"])
    assert eval_["seed"] is None
    program = compiled._manifest["programs"][train["name"]]
    assert "random_uniform" in [op["op"] for op in program["ops"]]


def test_dropout_of_every_element_is_refused_by_name():
    with pytest.raises(fusion.UnsupportedOperationError,
                       match="native_dropout.*p = 1"):
        fusion.compile(LinearDropoutRelu(1.0).train(), (torch.randn(4, 32),),
                       target="cpu")


def test_saved_module_draws_after_loading(tmp_path):
    model = LinearDropoutRelu(0.5).train()
    x = torch.randn(32, 32)
    compiled = fusion.compile(model, (x,), target="cpu")
    compiled.save(tmp_path / "m")
    loaded = fusion.load(tmp_path / "m", model)
    torch.manual_seed(9)
    expected = compiled(x)
    torch.manual_seed(9)
    assert torch.equal(loaded(x), expected)
