// A TensorGroup's check in one C++ loop (guards/native/__init__.py builds and loads this file),
// and storages_apart: whether the tensors a graph writes share memory with no other input.
//
// The Python check reads six properties of every tensor through torch's Python getters,
// ~600 ns a tensor: GPT-2's 148 parameters cost ~90 us a call. Here each tensor is its
// Python type (one pointer compare) and then its TensorImpl's fields, ~15 ns a tensor.
// It tests what the Python group tests, property for property: type(t) is the type seen,
// sizes, strides (or is_contiguous() where that is exact), dtype, device, requires_grad,
// and the dispatch flags is_inference / is_neg / is_conj that the member's dtype can set.
#include <Python.h>
#include <torch/csrc/Device.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>

#include <algorithm>
#include <vector>

namespace {

enum Flags { kInference = 1, kNeg = 2, kConj = 4 };

struct Expected {
  PyTypeObject* type;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // empty: is_contiguous() tests them exactly
  bool contiguous;
  at::ScalarType dtype;
  c10::Device device;
  bool requires_grad;
  int flags;  // the flags to test, each expected False
};

struct Spec {
  std::vector<Expected> tensors;
  std::vector<PyObject*> types;  // owned references, kept alive as long as the spec
};

constexpr const char* kCapsule = "guards.native.tensor_group";

void destroy(PyObject* capsule) {
  auto spec = static_cast<Spec*>(PyCapsule_GetPointer(capsule, kCapsule));
  for (PyObject* type : spec->types) Py_DECREF(type);
  delete spec;
}

std::vector<int64_t> ints(PyObject* tuple) {
  std::vector<int64_t> out;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); ++i) out.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(tuple, i)));
  return out;
}

// make_spec(entries): one (type, sizes, strides or None, dtype, device, requires_grad, flags)
// tuple per tensor, built and validated by the Python side.
PyObject* make_spec(PyObject*, PyObject* entries) {
  auto spec = new Spec();
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(entries); ++i) {
    PyObject* e = PyTuple_GET_ITEM(entries, i);
    PyObject* type = PyTuple_GET_ITEM(e, 0);
    PyObject* strides = PyTuple_GET_ITEM(e, 2);
    Py_INCREF(type);
    spec->types.push_back(type);
    spec->tensors.push_back(Expected{
        reinterpret_cast<PyTypeObject*>(type), ints(PyTuple_GET_ITEM(e, 1)),
        strides == Py_None ? std::vector<int64_t>() : ints(strides), strides == Py_None,
        reinterpret_cast<THPDtype*>(PyTuple_GET_ITEM(e, 3))->scalar_type,
        reinterpret_cast<THPDevice*>(PyTuple_GET_ITEM(e, 4))->device, PyTuple_GET_ITEM(e, 5) == Py_True,
        static_cast<int>(PyLong_AsLong(PyTuple_GET_ITEM(e, 6)))});
  }
  if (PyErr_Occurred()) {
    delete spec;
    return nullptr;
  }
  return PyCapsule_New(spec, kCapsule, destroy);
}

bool matches(PyObject* object, const Expected& e) {
  if (Py_TYPE(object) != e.type) return false;  // a type seen at capture is a torch.Tensor kind
  const at::Tensor& t = THPVariable_Unpack(object);
  // sizes() and strides() throw for layouts without them (sparse, nested), as their Python
  // getters raise, which fails the Python guard too.
  try {
    if (t.sizes() != c10::IntArrayRef(e.sizes)) return false;
    if (e.contiguous ? !t.is_contiguous() : t.strides() != c10::IntArrayRef(e.strides)) return false;
  } catch (...) {
    return false;
  }
  return t.scalar_type() == e.dtype && t.device() == e.device && t.requires_grad() == e.requires_grad &&
         !((e.flags & kInference) && t.is_inference()) && !((e.flags & kNeg) && t.is_neg()) &&
         !((e.flags & kConj) && t.is_conj());
}

// check(spec, tensors): whether every tensor of the tuple matches its expectation.
PyObject* check(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "check(spec, tensors: tuple)");
    return nullptr;
  }
  auto spec = static_cast<Spec*>(PyCapsule_GetPointer(args[0], kCapsule));
  if (spec == nullptr) return nullptr;
  const Py_ssize_t n = PyTuple_GET_SIZE(args[1]);
  if (n != static_cast<Py_ssize_t>(spec->tensors.size())) Py_RETURN_FALSE;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!matches(PyTuple_GET_ITEM(args[1], i), spec->tensors[i])) Py_RETURN_FALSE;
  }
  Py_RETURN_TRUE;
}

// The memory a tensor's storage holds, or nullptr: an empty storage, or a tensor without one
// (a wrapper subclass), which holds nothing another tensor could share.
const void* storage_memory(PyObject* object) {
  const at::Tensor& t = THPVariable_Unpack(object);
  return t.has_storage() ? t.storage().data() : nullptr;
}

// storages_apart(written, others): whether no tensor of `written` shares its storage's memory
// with another tensor of either tuple. Non-tensors fail it (the guard expects tensors). A
// sorted vector, not a hash set: an optimizer step writes hundreds of tensors every call.
PyObject* storages_apart(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "storages_apart(written: tuple, others: tuple)");
    return nullptr;
  }
  std::vector<const void*> written;
  written.reserve(PyTuple_GET_SIZE(args[0]));
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[0]); ++i) {
    PyObject* object = PyTuple_GET_ITEM(args[0], i);
    if (!THPVariable_Check(object)) Py_RETURN_FALSE;
    if (const void* memory = storage_memory(object)) written.push_back(memory);
  }
  std::sort(written.begin(), written.end());
  if (std::adjacent_find(written.begin(), written.end()) != written.end()) Py_RETURN_FALSE;
  if (written.empty()) Py_RETURN_TRUE;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[1]); ++i) {
    PyObject* object = PyTuple_GET_ITEM(args[1], i);
    if (!THPVariable_Check(object)) Py_RETURN_FALSE;
    const void* memory = storage_memory(object);
    if (memory != nullptr && std::binary_search(written.begin(), written.end(), memory)) Py_RETURN_FALSE;
  }
  Py_RETURN_TRUE;
}

PyMethodDef methods[] = {
    {"make_spec", make_spec, METH_O, "make_spec(entries) -> the capsule check() takes"},
    {"check", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(check)), METH_FASTCALL,
     "check(spec, tensors) -> bool"},
    {"storages_apart", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(storages_apart)), METH_FASTCALL,
     "storages_apart(written, others) -> bool"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tensor_group", nullptr, -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit__tensor_group() { return PyModule_Create(&module); }
