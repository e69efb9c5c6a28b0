"""PyTorch reference data for Stax Verify.

`python -m stax_torch torch-sum-golden --out DIR` writes the goldens of the
`torch-sum` transform (tests/golden/torch_sum/): torch.sum of deterministic
float32/float64 inputs. The inputs come from an integer hash that the C++
tests compute too (tests/transforms/torch_sum_test.cpp), mapped exactly to
floats, so no input data is stored.
"""

import numpy as np

SEED = 0x5354_4158_5453_4D31  # "STAXTSM1"
GOLDEN = 0x9E37_79B9_7F4A_7C15
MASK64 = (1 << 64) - 1


def mix64(z):
    """splitmix64's finaliser on a uint64 array (wrap-around arithmetic)."""
    z = z.astype(np.uint64)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58_476D_1CE4_E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D0_49BB_1331_11EB)
    return z ^ (z >> np.uint64(31))


def hashes(n, seed=SEED):
    """h[i] = mix64(seed + (i + 1) * GOLDEN mod 2^64) for i < n."""
    i = np.arange(1, n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return mix64(np.uint64(seed) + i * np.uint64(GOLDEN))


def exponents(h):
    """An exponent in [-8, 8] from bits 32..63 of each hash."""
    return ((h >> np.uint64(32)) % np.uint64(17)).astype(np.int64) - 8


def f32_inputs(n, seed=SEED):
    """Exact float32s: sign from bit 63, exponent in [-8, 8], 23 mantissa bits
    from bits 0..22, so magnitudes span 2^17 and summation orders show."""
    h = hashes(n, seed)
    sign = (h >> np.uint64(63)).astype(np.uint32) << np.uint32(31)
    exp = (exponents(h) + 127).astype(np.uint32) << np.uint32(23)
    mant = (h & np.uint64(0x7F_FFFF)).astype(np.uint32)
    return (sign | exp | mant).view(np.float32)


def f64_inputs(n, seed=SEED):
    """Exact float64s: as f32_inputs, with 52 mantissa bits from bits 0..51."""
    h = hashes(n, seed)
    sign = (h >> np.uint64(63)) << np.uint64(63)
    exp = (exponents(h) + 1023).astype(np.uint64) << np.uint64(52)
    mant = h & np.uint64((1 << 52) - 1)
    return (sign | exp | mant).view(np.float64)
