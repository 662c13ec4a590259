// The front end's view of the traced binaries' DWARF (ast/debug_types.h),
// read with runtime/symbols' DwarfTypes: `args` and typed `retval` of
// uprobes, struct/union/enum/typedef types a script uses without defining
// them, source-line attach points, and the arguments `-lv` lists.
//
// Arguments are read where the x86-64 System V calling convention puts
// them at the function's first instruction: integers, pointers, enums and
// bools of up to 8 bytes take the next integer slot (rdi, rsi, rdx, rcx,
// r8, r9, then the stack: what argN reads). What does not sit whole in one
// slot (floating point in SSE registers, structs and unions passed by
// value, 128-bit integers) is left out of `args` and named when a script
// asks for it; a parameter whose slot can no longer be known after such
// an argument is left out too.
#pragma once

#include "ast/context.h"
#include "ast/debug_types.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::symbols {
class DwarfTypes;
struct DwarfFunction;
class SymbolTable;
} // namespace ubtrace::runtime::symbols

namespace ubtrace::cli {

class DwarfDebugTypes : public ast::DebugTypes {
public:
  // `pid`: the process -p names (0: none), whose maps and root resolve
  // library names and paths as the attach does.
  explicit DwarfDebugTypes(pid_t pid = 0);
  ~DwarfDebugTypes() override;

  std::optional<ast::FunctionArgs> function_args(const ast::AttachPoint &ap,
                                                 ast::CTypes &types,
                                                 std::string &error) override;
  bool import_type(const std::string &name,
                   const std::vector<const ast::AttachPoint *> &from,
                   ast::CTypes &types) override;
  std::optional<uint64_t> line_address(const ast::AttachPoint &ap,
                                       std::string &error) override;

  // -lv: how each parameter of FUNC (a name as the listing prints it) in
  // the binary at `path` is declared ("int argc"); empty without DWARF.
  std::vector<std::string> declared_params(const std::string &path,
                                           const std::string &func);

private:
  // The DWARF of what `target` names (a path, library or program), read
  // once; null with `error` set when there is none.
  const runtime::symbols::DwarfTypes *open(const std::string &target,
                                           std::string &error,
                                           std::string *path = nullptr);
  const runtime::symbols::DwarfTypes *open_path(const std::string &path,
                                                std::string &error);
  ast::Type convert(const runtime::symbols::DwarfTypes &dw, int index,
                    ast::CTypes &types);
  std::vector<runtime::symbols::DwarfFunction>
  named(const runtime::symbols::DwarfTypes &dw, const std::string &path,
        const std::string &name);
  ast::FunctionArgs describe(const runtime::symbols::DwarfTypes &dw,
                             const runtime::symbols::DwarfFunction &fn,
                             ast::CTypes &types);
  ast::FunctionArgs describe_nocall(const runtime::symbols::DwarfTypes &dw,
                                    const runtime::symbols::DwarfFunction &fn,
                                    ast::CTypes &types);
  // The function's return type when rax holds it whole; None otherwise.
  ast::Type return_type(const runtime::symbols::DwarfTypes &dw,
                        const runtime::symbols::DwarfFunction &fn,
                        ast::CTypes &types);

  pid_t pid_ = 0;
  std::map<std::string, std::unique_ptr<runtime::symbols::DwarfTypes>> by_path_;
  std::map<std::string, std::string> failed_; // path -> why
  std::set<std::string> in_progress_;         // records being converted
  std::map<std::string, std::unique_ptr<runtime::symbols::SymbolTable>>
      symbols_; // by path, for functions the DWARF names otherwise
};

} // namespace ubtrace::cli
