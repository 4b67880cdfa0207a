// The torch.fx Node (and Graph) attribute names the bulk converters
// (torch_fx_builder.cc, torch_fx_reader.cc) read and write through Python's C
// API, interned once per process, as Python interns the names in
// Node.__init__'s code.
#ifndef PYTHON_NODE_NAMES_H_
#define PYTHON_NODE_NAMES_H_

#include <Python.h>
#include <pybind11/pybind11.h>

namespace fx_sdk {

struct NodeNames {
  PyObject* graph = intern("graph");
  PyObject* name = intern("name");
  PyObject* op = intern("op");
  PyObject* target = intern("target");
  PyObject* input_nodes = intern("_input_nodes");
  PyObject* args = intern("_args");
  PyObject* kwargs = intern("_kwargs");
  PyObject* users = intern("users");
  PyObject* type = intern("type");
  PyObject* prev = intern("_prev");
  PyObject* next = intern("_next");
  PyObject* erased = intern("_erased");
  PyObject* repr_fn = intern("_repr_fn");
  PyObject* meta = intern("meta");
  PyObject* is_wrapped = intern("is_wrapped");
  PyObject* tensor_meta = intern("tensor_meta");
  PyObject* root = intern("_root");

  static PyObject* intern(const char* s) {
    PyObject* str = PyUnicode_InternFromString(s);
    if (str == nullptr) throw pybind11::error_already_set();
    return str;  // kept for the life of the process
  }
};

// The names, made on first use (with the GIL held).
inline const NodeNames& node_names() {
  static const NodeNames* const kNames = new NodeNames();
  return *kNames;
}

}  // namespace fx_sdk

#endif  // PYTHON_NODE_NAMES_H_
