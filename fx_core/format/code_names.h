// The grammar of the names a graph file gives for what generated code names
// (issue 34, "nothing executable from data"): call_function targets, method
// names, attribute paths, classes, parameter names, type annotations.
//
// The fx-graph reader (graph_json.h) checks every such string from a file
// with these before anything is built, so no command that prints, generates
// or runs code (fx code, fx print, fx exec, fx run, the Python extension)
// ever sees text that could end a name (or the string literal that holds a
// module name) and start a statement: quotes, parentheses, semicolons, line
// breaks, backslashes. Beyond the characters:
//  - only ASCII letters: Python folds non-ASCII identifiers by NFKC, so a
//    look-alike (`ｅｖａｌ`) would be another name (`eval`) in the code;
//  - no dunder atoms (`__class__`, `__import__`, `__globals__`), the way from
//    an object to the interpreter's internals, except where torch.fx's own
//    names have them: a leading `__main__` (a script's functions and
//    classes) and a function's name before `<locals>` in a class's
//    qualified name (a class defined in `__init__`).
// Python's importer (tools/torchfx_import.py) applies the same grammar.
#ifndef FX_CORE_FORMAT_CODE_NAMES_H_
#define FX_CORE_FORMAT_CODE_NAMES_H_

#include <string_view>

namespace fx {

// `[A-Za-z_][A-Za-z0-9_]*`.
bool is_ascii_identifier(std::string_view text);

// `__name__`: an identifier that starts and ends with two underscores.
bool is_dunder_name(std::string_view text);

// A name code binds or calls: a call_method target (`clamp`), a keyword
// argument's, a NamedTuple field's, a pytree argument's, a class's: an
// ASCII identifier, not a dunder name.
bool is_plain_name(std::string_view text);

// A call_method target: a plain name, or one of the data model's operator
// methods (`__call__`, `__getitem__`, `__add__`, `__radd__`, `__iadd__`,
// `__neg__`, `__len__`, ...), which user code calls by name and torch.fx
// records; never the dunders that reach an object's internals
// (`__getattribute__`, `__class__`, `__init__`, `__reduce__`, ...).
bool is_method_name(std::string_view text);

// A placeholder's target: a plain name, maybe after `*` or `**`.
bool is_parameter_name(std::string_view text);

// A call_function target (`operator.add`, `torch.ops.aten.add.Tensor`,
// `__main__.fn`) or a class (a module's type, a NamedTuple's class): dotted
// atoms, each an ASCII identifier or, after the first, `<locals>` or
// `<lambda>` (names made inside a function, which no lookup finds); no
// dunder atom but those above. With `class_suffix`, `#` and hex digits may
// follow (the SDK's mark of a class only its process can tell apart).
bool is_qualified_name(std::string_view text, bool class_suffix = false);

// A get_attr or call_module target, a module's or weight's path
// (`layer1.0.conv1`, regnet's `trunk_output.block1.block1-0`): dotted
// atoms, each a name torch.nn takes for a module that generated code holds
// as a string literal where it is no identifier (`getattr(self.block1,
// "block1-0")`, torch 1.13 writing it unescaped): printable ASCII without
// quotes or backslashes, and no dunder name.
bool is_attribute_path(std::string_view text);

// A node's `type` as code writes it (`torch.Tensor`, `typing_Tuple[int,
// ...]`, `Literal[1]`): qualified names (no `<locals>`), `...` and integers,
// separated by `[`, `]`, `,` and spaces, brackets balanced.
bool is_type_expression(std::string_view text);

// Text that is shown but never run (a node's `type_text`, the graph text's
// `<class 'torch.Tensor'>`): printable ASCII, no line break or control
// character that could forge other lines.
bool is_printable_text(std::string_view text);

}  // namespace fx

#endif  // FX_CORE_FORMAT_CODE_NAMES_H_
