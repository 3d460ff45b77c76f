"""Walking an ATen call's arguments: nested tuples, lists and dicts of leaves.

torch.utils._pytree handles every registered container type and costs a type-registry
lookup per node; an op's arguments only ever nest these three, and the tracer walks them
for every op it records, so a plain recursion is used.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator


def map_arguments(value: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(value, tuple):
        return tuple(map_arguments(item, fn) for item in value)
    if isinstance(value, list):
        return [map_arguments(item, fn) for item in value]
    if isinstance(value, dict):
        return {key: map_arguments(item, fn) for key, item in value.items()}
    return fn(value)


def argument_leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from argument_leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from argument_leaves(item)
    else:
        yield value
