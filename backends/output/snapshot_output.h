// Outputs that write every map's last printed state as one document (a
// Prometheus textfile, a pprof profile): maps are kept by name as they
// print (print(), interval probes, exit). With a file, the file is
// rewritten whole at each print, atomically (a temporary file in the same
// directory, then rename), so a reader never sees half of it; without
// one, the document goes to the output stream at the end. What a format
// does not take prints as text output prints it.
#pragma once

#include "backends/output/text_output.h"

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace ubtrace::output {

class SnapshotOutput : public MapsOwnOutput {
public:
  void map(const PrintedMap &map) override;
  void end() override;

protected:
  // With `file`, what is not a map goes to `out`; without, to `err`
  // (the output stream carries the document only).
  SnapshotOutput(std::string file, std::ostream &out, std::ostream &err)
      : MapsOwnOutput(file.empty() ? err : out, err), file_(std::move(file)),
        out_(out) {}

  // Whether `map` belongs in the document.
  virtual bool takes(const PrintedMap &map) const { return true; }
  // The document of `maps` (by name).
  virtual std::string render(const std::vector<const PrintedMap *> &maps) = 0;

  bool to_file() const { return !file_.empty(); }
  std::ostream &out() { return out_; }

private:
  // Rewrites file_ with every map's last state; reports a failure once.
  void write_file();
  std::vector<const PrintedMap *> kept() const;

  std::string file_;
  std::ostream &out_;
  std::map<std::string, PrintedMap> last_; // by map name
  bool write_failed_ = false;
};

} // namespace ubtrace::output
