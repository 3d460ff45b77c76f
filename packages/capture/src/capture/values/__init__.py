"""Variable trackers: what capture knows about each Python value while it interprets code.

`base.Value` is the interface; one module per kind: constants, tensors, symbolic sizes,
containers, functions, objects, classes and `super()`, Python modules (py_modules), nn modules,
new objects (user instances, ModelOutputs), context managers, cells, exceptions, the `id()` of
tracked objects (object_ids). `capture.wrap` turns real objects into values, with guards.
Values import nothing above them: what they need of the interpreter, calls and operators they
ask of the frame (`base.TracingFrame`); each kind rebuilds itself for the compiled entry
(`Value.reconstruct`).
"""
