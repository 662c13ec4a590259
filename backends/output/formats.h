// The output formats `-f` chooses, as one table: each format's name, the
// line `--help` shows, how `-o FILE` treats it, and how its Output is
// made. The CLI validates -f against it and the session builds from it.
#pragma once

#include "backends/output/context.h"
#include "backends/output/output.h"

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace ubtrace::output {

struct OutputSetup {
  std::string whole_file; // -o FILE of a format that rewrites it whole
  std::ostream &out;      // results (standard output or the -o file)
  std::ostream &err;      // everything else
  const FormatContext &ctx;
};

struct OutputFormat {
  std::string_view name;
  std::string_view help; // what it writes, for --help
  // -o FILE holds one document rewritten whole at each print (the
  // format's Output writes it); otherwise the CLI opens FILE as a stream.
  bool whole_file = false;
  // The document is binary: it needs -o FILE (standard output carries the
  // traced program's output and printf's).
  bool needs_file = false;
  std::unique_ptr<Output> (*make)(const OutputSetup &setup) = nullptr;
};

const std::vector<OutputFormat> &output_formats();
// The format named `name`, or null.
const OutputFormat *find_output_format(std::string_view name);

} // namespace ubtrace::output
