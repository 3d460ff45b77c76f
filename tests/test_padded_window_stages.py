"""Window attention's padding at every stage (DaViT, Swin): each stage's size nests the `%`
and `//` of the stages before it, and every view asks about the same terms again. Captured at
a new image size (symbolic), the results match eager; fake_tensor's
test_padded_window_stages_decide_each_size_question_once bounds the work that once took
davit_tiny's capture 165 s.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import compiler

WINDOW = 7


def _window_partition(x, window):
    b, h, w, c = x.shape
    x = x.view(b, h // window, window, w // window, window, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window, window, c)


def _window_reverse(windows, window, h, w):
    c = windows.shape[-1]
    x = windows.view(-1, h // window, w // window, window, window, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, h, w, c)


class _WindowBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.proj = nn.Linear(channels, channels)

    def forward(self, x):
        b, c, h, w = x.shape
        shortcut = x.flatten(2).transpose(1, 2)
        x = shortcut.view(b, h, w, c)
        x = F.pad(x, (0, 0, 0, (WINDOW - w % WINDOW) % WINDOW, 0, (WINDOW - h % WINDOW) % WINDOW))
        _, hp, wp, _ = x.shape
        windows = self.proj(_window_partition(x, WINDOW).view(-1, WINDOW * WINDOW, c))
        x = _window_reverse(windows.view(-1, WINDOW, WINDOW, c), WINDOW, hp, wp)
        x = shortcut + x[:, :h, :w, :].contiguous().view(b, h * w, c)
        return x.transpose(1, 2).view(b, c, h, w)


class _Stages(nn.Module):
    def __init__(self, stages=3, channels=8):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 7, 4, 3)
        self.downsamples = nn.ModuleList(nn.Conv2d(channels, channels, 3, 2, 1) for _ in range(stages - 1))
        self.blocks = nn.ModuleList(_WindowBlock(channels) for _ in range(stages))

    def forward(self, x):
        h, w = x.shape[-2:]
        x = self.blocks[0](self.stem(F.pad(x, (0, (4 - w % 4) % 4, 0, (4 - h % 4) % 4))))
        for downsample, block in zip(self.downsamples, self.blocks[1:]):
            x = block(downsample(x))
        return x


def test_padded_window_stages_match_eager_at_new_image_sizes():
    model = _Stages().eval()
    compiled = compiler.compile(model, backend="eager")
    with torch.no_grad():
        # static, then symbolic at a new size, then a new size the symbolic graph serves (larger
        # or other aspect ratios recompile: guards on the last stage's size and the views')
        for height, width in [(112, 112), (96, 80), (90, 70)]:
            x = torch.randn(2, 3, height, width)
            torch.testing.assert_close(compiled(x), model(x))
