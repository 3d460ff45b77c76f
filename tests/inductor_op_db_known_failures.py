"""Where a function compiled with inductor raises and eager does not, on torch's op database
(see test_inductor_op_db.py): the one list to update.

Keys are OpInfo names (`name` or `name.variant_test_name`); each value says what fails and why.
Only errors may be listed: a wrong result (a silent mismatch with eager) is never known, it is
fixed. Refusals (a graph break, or an Unsupported error naming what the compiler declines) are
not failures and are not listed. An entry that starts passing fails its test: remove it.
"""

KNOWN_ERRORS: dict[str, str] = {
    "quantile": (
        "a 0-d input: the traced C++ composite writes a (1,)-shaped lerp result into a 0-d gather "
        "through copy_, which fakes reject with eager's own broadcast error (eager's CPU run keeps "
        "both (1,)); found by op_db, not analyzed further"
    ),
    "nanquantile": "as quantile (the same composite)",
}

# Where the gradients of a compiled op raise and eager's do not (test_inductor_op_db_grad.py).
KNOWN_GRAD_ERRORS: dict[str, str] = {
    "index_fill": (
        "the backward for a 0-d `value` that requires grad calls aten._unique on the index: a "
        "data-dependent output size, which aot_autograd's joint trace on fake tensors cannot "
        "follow (TracingError from DataDependentError); the forward alone compiles"
    ),
    "index_put": (
        "a boolean-mask sample: the backward indexes with the mask (aten.index.Tensor selects a "
        "data-dependent number of elements), which the joint trace cannot follow"
    ),
}
