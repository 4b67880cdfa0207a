


def forward(self, x):
    gt = x > 0
    mul = gt * x;  gt = x = None
    add = mul + 1;  mul = None
    gt_1 = add > 0
    mul_1 = gt_1 * add;  gt_1 = add = None
    return mul_1
    