// Lowering of the functions that format their arguments: printf,
// debugf, errorf, warnf, system and cat.
#include "ast/builtins.h"
#include "codegen/irgen.h"

namespace ubtrace::codegen {

using namespace ast;

Val IRGen::gen_printf(Call &c) {
  gen_format_event(abi::EventType::Printf, bundle_.printf_formats, c);
  return {i64(0), false};
}

Val IRGen::gen_errorf(Call &c) {
  gen_format_event(c.fn == BuiltinFn::Errorf ? abi::EventType::Errorf
                                             : abi::EventType::Warnf,
                   bundle_.printf_formats, c);
  return {i64(0), false};
}

Val IRGen::gen_system(Call &c) {
  gen_format_event(abi::EventType::System, bundle_.system_formats, c);
  return {i64(0), false};
}

Val IRGen::gen_cat(Call &c) {
  gen_format_event(abi::EventType::Cat, bundle_.cat_formats, c);
  return {i64(0), false};
}

} // namespace ubtrace::codegen
