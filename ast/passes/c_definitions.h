// C definitions at the top of a script (struct, union, enum, typedef and
// #define), parsed into types that casts and field accesses use:
//
//   struct Foo { int a; char name[16]; struct Foo *next; }
//   uprobe:./app:f { $f = (struct Foo *)arg0; printf("%s\n", $f->name); }
#pragma once

#include "ast/context.h"

#include <string>

namespace ubtrace::ast {

bool run_c_definitions_pass(ASTContext &ctx);

// Parses C definitions from `text` (located at `loc`) into `types`.
// Returns false and reports on `diags` when the text is not understood.
bool parse_c_definitions(const std::string &text, const Location &loc,
                         CTypes &types, Diagnostics &diags);

// The type a C base type name denotes ("unsigned int", "uint32_t", "u8",
// "size_t", ...), or None.
Type c_base_type(const std::string &words);

} // namespace ubtrace::ast
