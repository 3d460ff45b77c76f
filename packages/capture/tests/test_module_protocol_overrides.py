"""A module class's own Python protocol methods (`__len__`, `__bool__`, and a container
subclass's `__iter__` or `__getitem__`) run as the program wrote them, traced and guarded as a
user object's are: answered from torch's container registries instead, `len(m)` and `if m:`
kept their first answer after the state they read changed, and a reversed ModuleList was
iterated in order. Each function is called, its state changed, and called again, beside eager."""

import pytest
import torch

import capture


class Bag(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.items = [1, 2]

    def __len__(self):
        return len(self.items)


class Switch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.on = True

    def __bool__(self):
        return self.on


class Reversed(torch.nn.ModuleList):
    def __iter__(self):
        return iter(list(self._modules.values())[::-1])


class FromTheEnd(torch.nn.Sequential):
    def __getitem__(self, i):
        return list(self._modules.values())[-1 - i]


def scale_by_length(x, m):
    return x * len(m)


def branch_on_truth(x, m):
    return x + 1 if m else x - 1


def apply_in_iteration_order(x, layers):
    for layer in layers:
        x = layer(x) * 2 - 0.5
    return x


def apply_first(x, layers):
    return layers[0](x - 0.5)


def _compare(fn, module, change):
    compiled = capture.optimize(fn, capture.backends.eager)
    for step in range(3):
        x = torch.randn(3, 4)
        torch.testing.assert_close(compiled(x, module), fn(x, module))
        if step == 1:
            change(module)


@pytest.mark.parametrize("fn", [scale_by_length, branch_on_truth], ids=["len", "truth"])
def test_a_modules_own_len_is_traced(fn):
    _compare(fn, Bag(), lambda m: m.items.clear())


def test_a_modules_own_bool_is_traced():
    _compare(branch_on_truth, Switch(), lambda m: setattr(m, "on", False))


def test_a_module_list_subclass_iterates_as_its_own_iter_says():
    layers = Reversed([torch.nn.Linear(4, 4), torch.nn.Tanh(), torch.nn.Sigmoid()])
    _compare(apply_in_iteration_order, layers, lambda m: m.append(torch.nn.ReLU()))


def test_a_sequential_subclass_indexes_as_its_own_getitem_says():
    layers = FromTheEnd(torch.nn.Linear(4, 4), torch.nn.Tanh())
    _compare(apply_first, layers, lambda m: m.append(torch.nn.Sigmoid()))


def test_torchs_own_containers_still_follow_their_members():
    layers = torch.nn.ModuleList([torch.nn.Linear(4, 4), torch.nn.Tanh()])
    _compare(apply_in_iteration_order, layers, lambda m: m.insert(0, torch.nn.Sigmoid()))
    _compare(scale_by_length, torch.nn.Sequential(torch.nn.ReLU()), lambda m: m.append(torch.nn.Tanh()))
