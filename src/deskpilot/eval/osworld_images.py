"""OSWorld's GIMP metrics: the structure of two images compared by SSIM (numpy), and their
brightness, contrast and saturation (Pillow).

SSIM is the mean structural similarity of 7×7 windows (uniform weights, sample covariance,
constants 0.01 and 0.03 of the 0..255 range), averaged over colour channels — the measure
OSWorld takes from scikit-image, with the same thresholds (0.9; 0.65 after a contrast change).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageStat

WINDOW = 7


def _box(a: NDArray[np.float64], size: int) -> NDArray[np.float64]:
    """The mean of each size×size window that fits (a 'valid' uniform filter)."""
    s = np.cumsum(np.cumsum(np.pad(a, ((1, 0), (1, 0))), axis=0), axis=1)
    total = s[size:, size:] - s[:-size, size:] - s[size:, :-size] + s[:-size, :-size]
    return total / float(size * size)


def ssim(x: NDArray[Any], y: NDArray[Any]) -> float:
    """Mean SSIM of two equal-shaped images (H×W or H×W×C, 0..255)."""
    if x.ndim == 3:
        return float(np.mean([ssim(x[..., c], y[..., c]) for c in range(x.shape[2])]))
    size = min(WINDOW, *x.shape)
    size -= 0 if size % 2 else 1
    if size < 1:
        return 0.0
    a, b = x.astype(np.float64), y.astype(np.float64)
    n = size * size
    cov = n / (n - 1) if n > 1 else 1.0
    ma, mb = _box(a, size), _box(b, size)
    va = cov * (_box(a * a, size) - ma * ma)
    vb = cov * (_box(b * b, size) - mb * mb)
    vab = cov * (_box(a * b, size) - ma * mb)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    s = ((2 * ma * mb + c1) * (2 * vab + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2))
    pad = (size - 1) // 2  # scikit-image averages away from the borders
    inner = s[pad : s.shape[0] - pad or None, pad : s.shape[1] - pad or None]
    return float(np.mean(inner if inner.size else s))


def same_structure(a: Image.Image, b: Image.Image, threshold: float = 0.9) -> bool:
    if min(*a.size, *b.size) < WINDOW:
        return False
    if a.mode not in ("L", "RGB"):
        a = a.convert("RGB")
    if b.mode != a.mode:
        b = b.convert(a.mode)
    if a.size != b.size:
        return False
    return ssim(np.asarray(a), np.asarray(b)) >= threshold


def _open(value: Any) -> Image.Image:
    path = Path(str(value[0] if isinstance(value, list) else value))
    if not path.is_file():
        raise FileNotFoundError(2, "no such file", str(path))
    return Image.open(path)


def _brightness(img: Image.Image) -> float:
    return float(ImageStat.Stat(img.convert("L")).mean[0])


def _normalized(img: Image.Image, target: float = 128.0) -> Image.Image:
    factor = target / max(_brightness(img), 1e-6)
    return img.point(lambda v: min(255, max(0, int(v * factor))))


def check_structure_sim(result: Any, expected: Any) -> float:
    a, b = _open(result), _open(expected)
    return 1.0 if a.size == b.size and same_structure(a, b) else 0.0


def check_file_exists_and_structure_sim(result: Any, expected: Any) -> float:
    return check_structure_sim(result, expected)


def check_brightness_decrease_and_structure_sim(result: Any, expected: Any) -> float:
    a, b = _open(result), _open(expected)
    darker = _brightness(b) > _brightness(a)
    return 1.0 if darker and same_structure(_normalized(a), _normalized(b)) else 0.0


def check_contrast_increase_and_structure_sim(result: Any, expected: Any) -> float:
    a, b = _open(result), _open(expected)
    higher = float(np.std(np.asarray(b, dtype=np.float32))) < float(
        np.std(np.asarray(a, dtype=np.float32))
    )
    return 1.0 if higher and same_structure(a, b, threshold=0.65) else 0.0


def check_saturation_increase_and_structure_sim(result: Any, expected: Any) -> float:
    a, b = _open(result).convert("HSV"), _open(expected).convert("HSV")
    ha, sa, va = a.split()
    hb, sb, vb = b.split()
    more = float(np.mean(np.asarray(sb))) < float(np.mean(np.asarray(sa)))
    return 1.0 if more and same_structure(ha, hb) and same_structure(va, vb) else 0.0


METRICS = {
    f.__name__: f
    for f in (
        check_structure_sim,
        check_file_exists_and_structure_sim,
        check_brightness_decrease_and_structure_sim,
        check_contrast_increase_and_structure_sim,
        check_saturation_increase_and_structure_sim,
    )
}
