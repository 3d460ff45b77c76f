"""Variable trackers: what capture knows about each Python value while it interprets code.

`base.Value` is the interface; one module per kind: constants, tensors, symbolic sizes,
containers, functions, objects, modules, new objects (user instances, ModelOutputs), context
managers, cells, exceptions. `capture.wrap` turns real objects into values, with guards.
"""
