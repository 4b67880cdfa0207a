import torch


class ConvBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 4, 3, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(4)
        for bn in (self.bn, self.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.2, 0.2)
        self.eval()

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.bn2(self.conv2(y)).flatten(1)
