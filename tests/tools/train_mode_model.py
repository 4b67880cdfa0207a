"""A model exported in training mode for fx exec's test: BatchNorm in
training mode normalizes by the batch's statistics (its running statistics,
set far from them here, are what eval mode would use), and one submodule
keeps eval mode whatever the model's mode, so each module's own flag counts.
"""
import torch
from torch import nn


class TrainModeBatchNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.frozen = nn.BatchNorm1d(4)
        for norm in (self.bn, self.frozen):
            norm.running_mean.fill_(3.0)
            norm.running_var.fill_(0.25)

    def train(self, mode=True):
        super().train(mode)
        self.frozen.eval()  # always in eval mode
        return self

    def forward(self, x):
        y = self.bn(self.conv(x)).mean(dim=(2, 3))
        return self.frozen(y) + torch.relu(y)
