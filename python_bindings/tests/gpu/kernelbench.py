"""KernelBench's level-2 GEMM problems (ScalingIntelligence/KernelBench,
folder KernelBench/level2: every problem whose name holds "Gemm" or
"Matmul"), our own copies: each problem's Model (the same modules and ops
in the same order, the same constructor arguments and attribute names),
its get_init_inputs() by KernelBench's names and its get_inputs() size
(each takes one torch.rand(batch_size, in_features) input). Random
weights, nothing downloaded.

The 36 problems: 9, 12, 14, 18, 22, 29, 30, 33, 37, 39, 40, 41, 45, 51,
53, 55, 56, 59, 62, 63, 64, 66, 68, 70, 75, 76, 80, 81, 84, 86, 88, 94,
95, 97, 98, 99. None is skipped: each begins with its GEMM (nn.Linear, or
torch.matmul by a weight's transpose in 14) on a [batch, features] input,
with no convolution.

The mode: KernelBench's harness (src/kernelbench/eval.py) builds the
model and calls it under torch.no_grad() without .eval(), so the modules
run in training mode: the batch norms of 33, 39, 41, 84 and 97 normalize
by the batch's statistics (and update their running ones), and 66's
dropout drops. The benchmark times them so. A dropped element has no
float64 reference, so the correctness checks run the models with dropout
(66) in eval mode (`check_mode`); prepare() compiles both modes for them.

Precisions, as KernelBench's (model and inputs in the dtype) and as
scripts/bench's: fp32 (PyTorch's f32 GEMMs without tf32, fusion's
fp32-accurate ones), tf32 (PyTorch's with tf32, fusion's "tf32"), bf16 (the
model .to(torch.bfloat16)). Fusion's precision is passed explicitly, so
that the cache key does not depend on PyTorch's matmul setting, which
`precision_setup` sets for eager and inductor alike.

prepare() (build machine: compiler, no GPU) fills the library cache for
sm_90 with what the GPU check (test_kernelbench.py) and the bench's
`kernelbench` suite load: each problem at its real sizes, compiled from a
model on the meta device (no memory, no arithmetic: a 32768 x 32768
weight costs nothing), under torch.no_grad() as they run. The libraries
take any batch (the partitions' batch dimension is dynamic: the cache key
holds the programs, whose [batch, features] arguments have no batch
size), so a run at another batch finds them too.

    scripts/gpu-check.sh build DIR --groups kernelbench   (prepare.py)
    scripts/gpu-check.sh run DIR -k kernelbench           (the check)
    scripts/bench/run.py --artifacts DIR --suite kernelbench
        [--models 12,33] [--precisions fp32,tf32,bf16] [--timer both]
"""
import copy
import dataclasses
import functools
import inspect

import torch
import torch.nn as nn
import torch.nn.functional as F

from gpu.helpers import PRECISIONS as BOUNDED_PRECISIONS
from gpu.helpers import TARGET, precision_setup, relative_error, state_error

# name -> (model dtype, fusion's precision option).
PRECISIONS = {"fp32": (torch.float32, "fp32"),
              "tf32": (torch.float32, "tf32"),
              "bf16": (torch.bfloat16, "fp32")}
# ||out - ref|| / ||ref|| against float64, before the eager-error margin.
BOUNDS = {name: bound for name, (_, _, bound) in BOUNDED_PRECISIONS.items()}
# A model that magnifies its GEMM's rounding (a softmax, a sum that
# cancels) is allowed this many times eager's own error on top of the
# bound (the model fuzzer's and test_transformers' rule).
EAGER_ERROR_FACTOR = 4.0


@dataclasses.dataclass(frozen=True)
class Problem:
    name: str        # KernelBench's file name, e.g. 12_Gemm_Multiply_LeakyReLU
    model: type      # its Model
    batch_size: int
    init: dict       # get_init_inputs(), by KernelBench's names, in order

    @property
    def number(self):
        return int(self.name.split("_", 1)[0])

    @property
    def in_features(self):
        # Every problem's first constructor argument (in_features or
        # input_size) is the width of its one input.
        return next(iter(self.init.values()))

    def get_init_inputs(self):
        return list(self.init.values())

    def get_inputs(self, batch=None, device="cpu", dtype=torch.float32):
        return [torch.rand(batch or self.batch_size, self.in_features,
                           device=device, dtype=dtype)]

    def make(self):
        return self.model(*self.get_init_inputs())

    def scaled(self, divisor, batch_size=16):
        """The problem with its feature counts, group counts and shapes
        divided by `divisor` (features at least 8, groups per norm as
        many features each as at full size where they divide): small
        enough for CPU tests."""
        def scale(name, value):
            if name in FEATURE_ARGUMENTS:
                return max(8, value // divisor)
            if name == "num_groups":
                return max(1, value // divisor)
            if name.endswith("_shape"):
                return tuple(d if d == 1 else max(8, d // divisor)
                             for d in value)
            return value
        return dataclasses.replace(
            self, batch_size=batch_size,
            init={k: scale(k, v) for k, v in self.init.items()})


FEATURE_ARGUMENTS = {"in_features", "out_features", "input_size",
                     "hidden_size", "output_size"}
PROBLEMS = {}


def problem(name, batch_size, **init):
    """Registers the decorated Model as KernelBench problem `name`, built
    from `init` (get_init_inputs()'s values, named as the constructor's
    arguments)."""
    def register(model):
        arguments = list(inspect.signature(model).parameters)
        assert arguments[:len(init)] == list(init), (name, arguments)
        PROBLEMS[name] = Problem(name, model, batch_size, init)
        return model
    return register


# ------------------------------------------------------------ the problems
# In KernelBench's order; KernelBench's sizes (batch_size and
# get_init_inputs()).

@problem("9_Matmul_Subtract_Multiply_ReLU", 1024, in_features=8192,
         out_features=8192, subtract_value=2.0, multiply_value=1.5)
class MatmulSubtractMultiplyReLU(nn.Module):
    def __init__(self, in_features, out_features, subtract_value,
                 multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        x = self.linear(x)
        return torch.relu((x - self.subtract_value) * self.multiply_value)


@problem("12_Gemm_Multiply_LeakyReLU", 1024, in_features=8192,
         out_features=8192, multiplier=2.0, negative_slope=0.1)
class GemmMultiplyLeakyReLU(nn.Module):
    def __init__(self, in_features, out_features, multiplier,
                 negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.leaky_relu = nn.LeakyReLU(negative_slope)

    def forward(self, x):
        return self.leaky_relu(self.gemm(x) * self.multiplier)


@problem("14_Gemm_Divide_Sum_Scaling", 1024, input_size=8192,
         hidden_size=8192, scaling_factor=1.5)
class GemmDivideSumScaling(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = torch.matmul(x, self.weight.T) / 2
        return torch.sum(x, dim=1, keepdim=True) * self.scaling_factor


@problem("18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp", 1024,
         in_features=8192, out_features=8192)
class MatmulSumMaxAvgPoolLogSumExpLogSumExp(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = torch.sum(self.linear(x), dim=1, keepdim=True)
        x = torch.max(x, dim=1, keepdim=True)[0]
        x = torch.mean(x, dim=1, keepdim=True)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return torch.logsumexp(x, dim=1, keepdim=True)


@problem("22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish", 1024,
         input_size=8192, hidden_size=8192, scale_factor=2.0,
         clamp_min=-10.0, clamp_max=10.0)
class MatmulScaleResidualAddClampLogSumExpMish(nn.Module):
    def __init__(self, input_size, hidden_size, scale_factor, clamp_min,
                 clamp_max):
        super().__init__()
        self.matmul = nn.Linear(input_size, hidden_size)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.matmul(x) * self.scale_factor
        x = x + x
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x * F.mish(x)


@problem("29_Matmul_Mish_Mish", 1024, in_features=8192, out_features=8192)
class MatmulMishMish(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.mish(F.mish(self.linear(x)))


@problem("30_Gemm_GroupNorm_Hardtanh", 1024, in_features=8192,
         out_features=8192, num_groups=16, hardtanh_min=-2.0,
         hardtanh_max=2.0)
class GemmGroupNormHardtanh(nn.Module):
    def __init__(self, in_features, out_features, num_groups, hardtanh_min,
                 hardtanh_max):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min,
                                    max_val=hardtanh_max)

    def forward(self, x):
        return self.hardtanh(self.group_norm(self.gemm(x)))


@problem("33_Gemm_Scale_BatchNorm", 1024, in_features=8192,
         out_features=8192, scale_shape=(8192,))
@problem("39_Gemm_Scale_BatchNorm", 16384, in_features=4096,
         out_features=4096, scale_shape=(4096,))
class GemmScaleBatchNorm(nn.Module):
    def __init__(self, in_features, out_features, scale_shape, eps=1e-5,
                 momentum=0.1):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.randn(scale_shape))
        self.bn = nn.BatchNorm1d(out_features, eps=eps, momentum=momentum)

    def forward(self, x):
        return self.bn(self.gemm(x) * self.scale)


@problem("37_Matmul_Swish_Sum_GroupNorm", 32768, in_features=1024,
         out_features=4096, num_groups=64, bias_shape=(4096,))
class MatmulSwishSumGroupNorm(nn.Module):
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.group_norm = nn.GroupNorm(num_groups, out_features)

    def forward(self, x):
        x = self.matmul(x)
        x = torch.sigmoid(x) * x
        return self.group_norm(x + self.bias)


@problem("40_Matmul_Scaling_ResidualAdd", 16384, in_features=4096,
         out_features=4096, scaling_factor=0.5)
class MatmulScalingResidualAdd(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.matmul(x)
        original_x = x.clone().detach()
        return x * self.scaling_factor + original_x


@problem("41_Gemm_BatchNorm_GELU_ReLU", 16384, in_features=4096,
         out_features=4096)
class GemmBatchNormGELUReLU(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.batch_norm = nn.BatchNorm1d(out_features)

    def forward(self, x):
        return torch.relu(F.gelu(self.batch_norm(self.gemm(x))))


@problem("45_Gemm_Sigmoid_LogSumExp", 16384, input_size=2048,
         hidden_size=4096, output_size=1024)
class GemmSigmoidLogSumExp(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        x = self.linear2(torch.sigmoid(self.linear1(x)))
        return torch.logsumexp(x, dim=1)


@problem("51_Gemm_Subtract_GlobalAvgPool_LogSumExp_GELU_ResidualAdd", 2048,
         in_features=8192, out_features=8192)
class GemmSubtractGlobalAvgPoolLogSumExpGELUResidualAdd(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)
        self.subtract = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        original_x = x.clone().detach()
        x = self.gemm(x) - self.subtract
        x = torch.mean(x, dim=1, keepdim=True)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return F.gelu(x) + original_x


@problem("53_Gemm_Scaling_Hardtanh_GELU", 2048, in_features=8192,
         out_features=8192, scaling_factor=0.5, hardtanh_min=-2,
         hardtanh_max=2)
class GemmScalingHardtanhGELU(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor,
                 hardtanh_min, hardtanh_max):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min,
                                    max_val=hardtanh_max)
        self.gelu = nn.GELU()

    def forward(self, x):
        return self.gelu(self.hardtanh(self.gemm(x) * self.scaling_factor))


@problem("55_Matmul_MaxPool_Sum_Scale", 128, in_features=32768,
         out_features=32768, kernel_size=2, scale_factor=0.5)
class MatmulMaxPoolSumScale(nn.Module):
    def __init__(self, in_features, out_features, kernel_size,
                 scale_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.max_pool = nn.MaxPool1d(kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.max_pool(self.matmul(x).unsqueeze(1)).squeeze(1)
        return torch.sum(x, dim=1) * self.scale_factor


@problem("56_Matmul_Sigmoid_Sum", 128, input_size=32768, hidden_size=32768)
class MatmulSigmoidSum(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.linear = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        return torch.sum(torch.sigmoid(self.linear(x)), dim=1, keepdim=True)


@problem("59_Matmul_Swish_Scaling", 128, in_features=32768,
         out_features=32768, scaling_factor=2.0)
class MatmulSwishScaling(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.matmul(x)
        return x * torch.sigmoid(x) * self.scaling_factor


@problem("62_Matmul_GroupNorm_LeakyReLU_Sum", 1024, input_size=8192,
         hidden_size=8192, num_groups=512)
class MatmulGroupNormLeakyReLUSum(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups, eps=1e-5,
                 negative_slope=0.01):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups=num_groups,
                               num_channels=hidden_size, eps=eps)
        self.leaky_relu = nn.LeakyReLU(negative_slope=negative_slope)

    def forward(self, x):
        x = self.leaky_relu(self.gn(self.fc(x)))
        return x + x


@problem("63_Gemm_ReLU_Divide", 1024, in_features=8192, out_features=8192,
         divisor=2.0)
class GemmReLUDivide(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        return torch.relu(self.linear(x)) / self.divisor


@problem("64_Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU", 1024,
         in_features=8192, out_features=8192)
class GemmLogSumExpLeakyReLULeakyReLUGELUGELU(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        x = torch.logsumexp(self.linear(x), dim=1, keepdim=True)
        x = F.leaky_relu(x, negative_slope=0.01)
        x = F.leaky_relu(x, negative_slope=0.01)
        return F.gelu(F.gelu(x))


@problem("66_Matmul_Dropout_Softmax", 128, in_features=16384,
         out_features=16384, dropout_p=0.2)
class MatmulDropoutSoftmax(nn.Module):
    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x):
        return torch.softmax(self.dropout(self.matmul(x)), dim=1)


@problem("68_Matmul_Min_Subtract", 128, in_features=16384,
         out_features=16384, constant=2.0)
class MatmulMinSubtract(nn.Module):
    def __init__(self, in_features, out_features, constant):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.constant = nn.Parameter(torch.tensor(constant))

    def forward(self, x):
        x = torch.min(self.linear(x), self.constant)
        return x - self.constant


@problem("70_Gemm_Sigmoid_Scaling_ResidualAdd", 1024, input_size=8192,
         hidden_size=8192, scaling_factor=2.0)
class GemmSigmoidScalingResidualAdd(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        original_x = x = self.gemm(x)
        return torch.sigmoid(x) * self.scaling_factor + original_x


@problem("75_Gemm_GroupNorm_Min_BiasAdd", 1024, in_features=8192,
         out_features=8192, num_groups=512, bias_shape=(1, 8192, 1, 1))
class GemmGroupNormMinBiasAdd(nn.Module):
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.group_norm(self.gemm(x))
        # [batch, 1] + [1, out, 1, 1] broadcasts to [1, out, batch, 1], as
        # KernelBench's does.
        return torch.min(x, dim=1, keepdim=True)[0] + self.bias


@problem("76_Gemm_Add_ReLU", 1024, in_features=8192, out_features=8192,
         bias_shape=(8192,))
class GemmAddReLU(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.relu(self.gemm(x) + self.bias)


@problem("80_Gemm_Max_Subtract_GELU", 1024, in_features=8192,
         out_features=8192, max_dim=1)
class GemmMaxSubtractGELU(nn.Module):
    def __init__(self, in_features, out_features, max_dim):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        x = torch.max(self.gemm(x), dim=self.max_dim, keepdim=True).values
        # The mean of one value per row: the result is gelu(0) = 0, as
        # KernelBench's is.
        return F.gelu(x - x.mean(dim=1, keepdim=True))


@problem("81_Gemm_Swish_Divide_Clamp_Tanh_Clamp", 1024, in_features=8192,
         out_features=8192)
class GemmSwishDivideClampTanhClamp(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        x = self.gemm(x)
        x = x * torch.sigmoid(x) / 2.0
        x = torch.tanh(torch.clamp(x, min=-1.0, max=1.0))
        return torch.clamp(x, min=-1.0, max=1.0)


@problem("84_Gemm_BatchNorm_Scaling_Softmax", 1024, in_features=8192,
         out_features=8192, bn_eps=1e-5, bn_momentum=0.1, scale_shape=(1,))
class GemmBatchNormScalingSoftmax(nn.Module):
    def __init__(self, in_features, out_features, bn_eps=1e-5,
                 bn_momentum=0.1, scale_shape=(1,)):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=bn_eps,
                                 momentum=bn_momentum)
        self.scale = nn.Parameter(torch.ones(scale_shape))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        return self.softmax(self.scale * self.bn(self.gemm(x)))


@problem("86_Matmul_Divide_GELU", 1024, input_size=8192, output_size=8192,
         divisor=10.0)
class MatmulDivideGELU(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        return F.gelu(self.linear(x) / self.divisor)


@problem("88_Gemm_GroupNorm_Swish_Multiply_Swish", 1024, in_features=8192,
         out_features=8192, num_groups=256, multiply_weight_shape=(8192,))
class GemmGroupNormSwishMultiplySwish(nn.Module):
    def __init__(self, in_features, out_features, num_groups,
                 multiply_weight_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.multiply_weight = nn.Parameter(
            torch.randn(multiply_weight_shape))

    def forward(self, x):
        x = self.group_norm(self.gemm(x))
        x = x * torch.sigmoid(x) * self.multiply_weight
        return x * torch.sigmoid(x)


@problem("94_Gemm_BiasAdd_Hardtanh_Mish_GroupNorm", 1024, in_features=8192,
         out_features=8192, bias_shape=(8192,), num_groups=256)
class GemmBiasAddHardtanhMishGroupNorm(nn.Module):
    def __init__(self, in_features, out_features, bias_shape, num_groups):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.hardtanh = nn.Hardtanh()
        self.mish = nn.Mish()
        self.groupnorm = nn.GroupNorm(num_groups=num_groups,
                                      num_channels=out_features)

    def forward(self, x):
        x = self.hardtanh(self.gemm(x) + self.bias)
        return self.groupnorm(self.mish(x))


@problem("95_Matmul_Add_Swish_Tanh_GELU_Hardtanh", 1024, in_features=8192,
         out_features=8192, add_value_shape=(8192,))
class MatmulAddSwishTanhGELUHardtanh(nn.Module):
    def __init__(self, in_features, out_features, add_value_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.add_value = nn.Parameter(torch.randn(add_value_shape))

    def forward(self, x):
        x = self.matmul(x) + self.add_value
        x = torch.tanh(torch.sigmoid(x) * x)
        return F.hardtanh(F.gelu(x), min_val=-1, max_val=1)


@problem("97_Matmul_BatchNorm_BiasAdd_Divide_Swish", 1024, in_features=8192,
         out_features=8192, bn_eps=1e-5, bn_momentum=0.1, bias_shape=(1,),
         divide_value=1.0)
class MatmulBatchNormBiasAddDivideSwish(nn.Module):
    def __init__(self, in_features, out_features, bn_eps=1e-5,
                 bn_momentum=0.1, bias_shape=(1,), divide_value=1.0):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=bn_eps,
                                 momentum=bn_momentum)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.divide_value = divide_value

    def forward(self, x):
        x = (self.bn(self.matmul(x)) + self.bias) / self.divide_value
        return x * torch.sigmoid(x)


@problem("98_Matmul_AvgPool_GELU_Scale_Max", 1024, in_features=8192,
         out_features=8192, pool_kernel_size=16, scale_factor=2.0)
class MatmulAvgPoolGELUScaleMax(nn.Module):
    def __init__(self, in_features, out_features, pool_kernel_size,
                 scale_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.avg_pool = nn.AvgPool1d(kernel_size=pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.avg_pool(self.matmul(x).unsqueeze(1)).squeeze(1)
        x = F.gelu(x) * self.scale_factor
        return torch.max(x, dim=1).values


@problem("99_Matmul_GELU_Softmax", 1024, in_features=8192,
         out_features=8192)
class MatmulGELUSoftmax(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.softmax(F.gelu(self.linear(x)), dim=1)


PROBLEMS = dict(sorted(PROBLEMS.items(), key=lambda kv: kv[1].number))


# ------------------------------------------------- running and checking

def selected(names=None):
    """The problems named in `names` (numbers or names), or all."""
    if not names:
        return list(PROBLEMS.values())
    by_number = {str(p.number): p for p in PROBLEMS.values()}
    unknown = [n for n in names if n not in PROBLEMS and n not in by_number]
    if unknown:
        raise ValueError(f"no KernelBench problems {unknown}")
    return [PROBLEMS.get(n) or by_number[n] for n in names]


# The problem with a dropout (training mode: it drops).
DROPOUT = "66_Matmul_Dropout_Softmax"


def has_dropout(model):
    return any(isinstance(m, nn.Dropout) for m in model.modules())


def problem_has_dropout(problem):
    with torch.device("meta"):
        return has_dropout(problem.make())


def check_mode(problem):
    """Whether the correctness checks run `problem` in training mode, as
    KernelBench does: yes, but where a dropout's random mask would leave
    no float64 reference."""
    return not problem_has_dropout(problem)


def modes(problem):
    """The training modes `problem` runs in: KernelBench's (training), and
    the checks' where that is another."""
    return sorted({True, check_mode(problem)}, reverse=True)


def strategy_label(strategy):
    """What names a strategy variant's libraries and timings beside the
    default's: nothing for "auto", else " STRATEGY"."""
    return "" if strategy == "auto" else f" {strategy}"


def fusion_options(precision, strategy="auto", **extra):
    """The backend's options for `precision` and `strategy`: a strategy
    ("auto", the default, left out), then any backend options as
    +NAME=VALUE (e.g. "auto+cluster=2")."""
    options = {"target": TARGET, "precision": PRECISIONS[precision][1]}
    name, *settings = strategy.split("+")
    if name != "auto":
        options["strategy"] = name
    options.update(setting.split("=", 1) for setting in settings)
    return dict(options, **extra)


def model_and_inputs(problem, precision, training, device, batch=None):
    """`problem`'s model in `precision`'s dtype, in training mode or not,
    and its inputs, on `device` (parameters from the current seed)."""
    dtype = PRECISIONS[precision][0]
    with torch.device(device):
        model = problem.make()
    model = model.train(training).to(dtype)
    return model, problem.get_inputs(batch, device, dtype)


def compile_for_cache(problem, precision, training, batch=None,
                      strategy="auto", **extra):
    """Compiles `problem`'s libraries for sm_90 into the cache, from a model
    on the meta device, as the GPU run's first call compiles them (`extra`:
    more backend options)."""
    precision_setup(precision)
    model, inputs = model_and_inputs(problem, precision, training, "meta",
                                     batch)
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend="fusion", options=fusion_options(
            precision, strategy, compile_only=True, **extra))(*inputs)
    precision_setup("fp32")


# The precisions of issue 67's targets for the family's training steps.
TRAINING_PRECISIONS = ("tf32", "bf16")


def compile_training_step_for_cache(problem, precision):
    """Compiles the libraries of `problem`'s training step (its forward in
    training mode and the backward) for sm_90 into the cache, from a model
    on the meta device."""
    precision_setup(precision)
    model, inputs = model_and_inputs(problem, precision, True, "meta")
    torch._dynamo.reset()
    out = torch.compile(model, backend="fusion", options=fusion_options(
        precision, compile_only=True))(*inputs)
    out.float().sum().backward()
    precision_setup("fp32")


def prepare_training():
    """(label, compile) pairs: each problem's training step in each of
    TRAINING_PRECISIONS (scripts/bench's kernelbench-train suite)."""
    for problem in PROBLEMS.values():
        for precision in TRAINING_PRECISIONS:
            yield (f"kernelbench {problem.name} {precision} training step",
                   functools.partial(compile_training_step_for_cache,
                                     problem, precision))


def prepare(strategy="auto"):
    """(label, compile) pairs: each problem's libraries in each precision
    and mode it runs in, under `strategy` (scripts/bench's kernelbench
    suite, --strategies)."""
    for problem in PROBLEMS.values():
        for precision in PRECISIONS:
            for training in modes(problem):
                label = (f"kernelbench {problem.name} {precision} "
                         f"{'train' if training else 'eval'}"
                         f"{strategy_label(strategy)}")
                yield label, functools.partial(
                    compile_for_cache, problem, precision, training,
                    strategy=strategy)
            # Dropping with PyTorch's own draw (the eager fallback's), which
            # the GPU check reproduces for its float64 reference.
            if problem_has_dropout(problem):
                yield (f"kernelbench {problem.name} {precision} train "
                       f"eager-fallback{strategy_label(strategy)}"), \
                    functools.partial(compile_for_cache, problem, precision,
                                      True, strategy=strategy,
                                      fallback="eager")


def call_error(call, model, inputs, reference):
    """The relative error against float64 of `call(*inputs)`'s output and
    of `model`'s running statistics it updates, `reference` (a float64
    copy) given the model's state before the call."""
    reference.load_state_dict(
        {name: b.double() if b.is_floating_point() else b
         for name, b in model.state_dict().items()})
    expected = reference(*[x.double() for x in inputs])
    out = call(*inputs)
    # A reference that is exactly zero (80's gelu(x - mean(x)) of one
    # value per row) passes where the output is exactly zero too.
    return max(relative_error(out, expected, 1e-30),
               state_error(model, reference))


def bound(precision, eager_error):
    return BOUNDS[precision] + EAGER_ERROR_FACTOR * eager_error


def float64_copy(model):
    return copy.deepcopy(model).double()
