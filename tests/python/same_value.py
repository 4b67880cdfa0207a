"""assert_same_value: two run results hold equal values in the same
containers, compared recursively with a path in every message. Shared by
the pytest files that compare the SDK's outputs with torch.fx's."""

import torch


def plain_type(value):
    """A value's type, torch.fx's immutable containers (what its Interpreter
    returns for an output literal) as the dict and list they stand for."""
    immutable = torch.fx.immutable_collections
    return {immutable.immutable_dict: dict,
            immutable.immutable_list: list}.get(type(value), type(value))


def assert_same_value(got, want, where="output", close=False, plain=False):
    """Equal values in containers of the same types. `close`: tensors
    allclose rather than equal; `plain`: torch.fx's immutable containers
    count as the dict and list they stand for."""
    type_of = plain_type if plain else type
    assert type_of(got) is type_of(want), \
        f"{where}: {type(got)} != {type(want)}"
    if isinstance(want, torch.Tensor):
        same = torch.allclose(got, want) if close else torch.equal(got, want)
        assert same, where
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same_value(g, w, f"{where}[{i}]", close, plain)
    elif isinstance(want, dict):
        assert list(got) == list(want), where
        for k in want:
            assert_same_value(got[k], want[k], f"{where}[{k!r}]", close, plain)
    else:
        assert got == want, where
