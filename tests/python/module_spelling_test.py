"""Modules keep their constructor arguments as they were spelled (issue 36,
param_fetch): a module that goes through the SDK (from_torch_fx, a
pipeline, to_torch_fx) comes back with torch's attributes and repr, not
LibTorch's expanded options (MaxPool2d(3) holds kernel_size=3, not (3, 3)).
Run by fx_sdk_test.sh."""

import pytest
import torch

import fx_sdk


class Spellings(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pool_int = torch.nn.MaxPool2d(3, stride=2, padding=1)
        self.pool_list = torch.nn.MaxPool2d([3, 3], stride=[1, 1])
        self.pool_tuple = torch.nn.MaxPool2d((2, 2))
        self.avg = torch.nn.AvgPool2d(2, stride=1, padding=(0, 1))
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.pool1d = torch.nn.MaxPool1d(2)

    def forward(self, x):
        y = self.pool_int(self.conv(x))
        z = self.pool_list(self.pool_tuple(y))
        return self.avg(y), z, self.pool1d(x.flatten(2))


ATTRIBUTES = ["kernel_size", "stride", "padding", "dilation", "ceil_mode"]


@pytest.mark.parametrize("pipeline", [None, "dce"])
def test_modules_come_back_as_spelled(pipeline):
    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(Spellings().eval())
    if pipeline is None:
        back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm))
    else:
        back, report = fx_sdk.run_pipeline(gm, pipeline)
        assert report[0]["outcome"] in ("ran", "unchanged"), report
    for name, module in gm.named_children():
        ours = getattr(back, name)
        assert repr(ours) == repr(module), name
        for attr in ATTRIBUTES:
            if hasattr(module, attr):
                assert getattr(ours, attr) == getattr(module, attr), (name, attr)
                assert type(getattr(ours, attr)) is type(
                    getattr(module, attr)), (name, attr)
    x = torch.randn(1, 3, 12, 12)
    torch.testing.assert_close(back(x), gm(x), rtol=0, atol=0)


def test_resnet18_modules_print_as_torch():
    """resnet18 through a pipeline: every child prints as torch's (the
    maxpool's kernel_size=3, stride=2, padding=1 too)."""
    import torchvision
    gm = torch.fx.symbolic_trace(torchvision.models.resnet18().eval())
    back, _ = fx_sdk.run_pipeline(gm, "dce")
    assert repr(back.maxpool) == repr(gm.maxpool)
    for name, module in gm.named_children():
        assert repr(getattr(back, name)) == repr(module), name


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (2, 3, 4, 5)])
def test_softmax_without_dim_picks_torchs_dimension(shape):
    # nn.Softmax() leaves the dimension to F.softmax, which picks it from the
    # input's rank (0 for ranks 1 and 3, else 1): LibTorch's class has no
    # such mode, so the SDK builds its own; it comes back as Softmax(dim=None).
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Softmax(), torch.nn.Softmax(dim=-1))
    gm = torch.fx.symbolic_trace(model)
    sdk = fx_sdk.from_torch_fx(gm)
    x = torch.randn(*shape)
    with pytest.warns(UserWarning, match="Implicit dimension"):
        want = model(x)
    assert torch.equal(sdk(x), want)
    back = fx_sdk.to_torch_fx(sdk)
    assert [repr(m) for m in back.children()] == [
        "Softmax(dim=None)", "Softmax(dim=-1)"]
    assert back.get_submodule("0").dim is None
    assert back.get_submodule("1").dim == -1
