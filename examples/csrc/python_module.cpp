// Makes the library importable as `<package>._C`. Importing it runs the static initializers of the
// TORCH_LIBRARY_* blocks in csrc/<op>/, which register every op with the dispatcher; the ops are
// then called through torch.ops, so no pybind11 bindings are needed.
#include <Python.h>

extern "C" PyObject* PyInit__C(void) {
  static PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", "Registers the operators under csrc/.", -1, nullptr};
  return PyModule_Create(&module);
}
