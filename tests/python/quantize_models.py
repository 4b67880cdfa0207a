"""Small models the quantization tests share."""

import torch


class MLP(torch.nn.Module):
    """Linear + ReLU (a functional relu: convert_fx keeps it in float between
    two quantized Linears; the SDK's own pipeline lowers the pair to
    LinearReLU), then a plain Linear."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(12, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))
