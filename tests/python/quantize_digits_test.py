"""A trained model through the SDK's int8 pipeline (issue 33's accuracy
goal): a small CNN (convolutions with BatchNorm and ReLU, max pooling, two
Linear layers) trained here on scikit-learn's digits (8x8 images, 10
classes; Debian's python3-sklearn ships the data), then fold_bn,
quantize_prepare{outputs=true}, calibration on training batches,
quantize_convert, quantize_lower: its test accuracy stays within one point
of float's, and PyTorch's convert_fx of the same model calibrated on the
same batches is the anchor.
"""

import copy

import pytest
import torch
import torch.fx
from torch.ao.quantization import get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

import fx_sdk

datasets = pytest.importorskip("sklearn.datasets",
                               reason="python3-sklearn is not installed "
                                      "(tools/setup.sh installs it)")


class DigitsNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.BatchNorm2d(16),
            torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32),
            torch.nn.ReLU(), torch.nn.MaxPool2d(2))
        self.fc1 = torch.nn.Linear(32 * 4 * 4, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        x = torch.flatten(self.features(x), 1)
        return self.fc2(torch.relu(self.fc1(x)))


@pytest.fixture(scope="module")
def trained():
    digits = datasets.load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1)
    images = images / 16.0  # pixel values 0..16
    labels = torch.tensor(digits.target)
    generator = torch.Generator().manual_seed(0)
    order = torch.randperm(len(labels), generator=generator)
    train, test = order[:1400], order[1400:]
    torch.manual_seed(0)
    model = DigitsNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(15):
        for batch in torch.randperm(len(train), generator=generator).split(64):
            index = train[batch]
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(images[index]),
                                                     labels[index])
            loss.backward()
            optimizer.step()
    model.eval()
    calibration = [images[train[i:i + 64]] for i in range(0, 512, 64)]
    return model, images[test], labels[test], calibration


def accuracy(logits, labels):
    return float((logits.argmax(1) == labels).float().mean()) * 100


def test_int8_accuracy_is_within_a_point_of_float(trained):
    model, images, labels, calibration = trained
    gm = fx_sdk.from_torch_fx(torch.fx.symbolic_trace(model))

    def run(pipeline):
        fx_sdk._C._run_pipeline(gm, pipeline, [], [fx_sdk.PLUGIN_DIR], True,
                                [calibration[0]])
    run("shape_prop,fold_bn,quantize_prepare{outputs=true}")
    with torch.no_grad():
        for batch in calibration:
            gm(batch)
    run("quantize_convert,quantize_lower")
    torch.backends.quantized.engine = "onednn"
    prepared = prepare_fx(copy.deepcopy(model),
                          get_default_qconfig_mapping("onednn"),
                          (calibration[0],))
    with torch.no_grad():
        for batch in calibration:
            prepared(batch)
        theirs = convert_fx(prepared)
        want = model(images)
        ours = fx_sdk.compile(gm, [images])(images)
        float_accuracy = accuracy(want, labels)
        int8_accuracy = accuracy(ours, labels)
        agreement = float((ours.argmax(1) == want.argmax(1)).float().mean())
        pytorch_accuracy = accuracy(theirs(images), labels)
    back = fx_sdk.to_torch_fx(gm)
    assert sum("quantize_per_tensor" in str(n.target)
               for n in back.graph.nodes) == 1  # int8 throughout
    print(f"figures: digits CNN, {len(labels)} test images: float "
          f"{float_accuracy:.2f}%, SDK int8 {int8_accuracy:.2f}%, PyTorch "
          f"convert_fx int8 {pytorch_accuracy:.2f}%; top-1 agreement with "
          f"float {agreement * 100:.2f}%")
    assert float_accuracy > 95  # the model learned the task
    assert int8_accuracy >= float_accuracy - 1.0
    assert agreement >= 0.99
