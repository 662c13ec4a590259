// The C headers a script includes (`#include <errno.h>`, --include FILE),
// read with the system's C preprocessor: `cpp -dM` lists the object-like
// macros they define, for constants in scripts (EPERM, O_CREAT, AF_INET).
// Its own predefined macros (linux, __x86_64__) are left out. Structures
// and functions of headers are not read: types come from the script's own
// definitions and from the traced binaries' DWARF.
#pragma once

#include "ast/context.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ubtrace::cli {

class SystemHeaders : public ast::CHeaders {
public:
  // -I directories, and --include files (each a header name or path).
  SystemHeaders(std::vector<std::string> dirs, std::vector<std::string> files)
      : dirs_(std::move(dirs)), files_(std::move(files)) {}

  bool macros(const std::vector<std::string> &headers,
              std::map<std::string, std::string> &out,
              std::string &error) override;
  std::vector<std::string> forced() const override;

private:
  // Runs cpp -dM over `source`; its macros, or nullopt with `error`.
  std::optional<std::map<std::string, std::string>>
  run_cpp(const std::string &source, const std::vector<std::string> &forced,
          std::string &error) const;

  std::vector<std::string> dirs_, files_;
};

} // namespace ubtrace::cli
