#include "runtime/gpu/ptx_merge.h"

#include "runtime/gpu/ptx_lexer.h"

#include <set>
#include <string>

namespace ubtrace::runtime::gpu {
namespace {

// The module-scope names a module declares or defines (with_externs), or
// defines only.
std::set<std::string_view> module_names(const PtxModule &module,
                                        bool with_externs = true) {
  std::set<std::string_view> names;
  for (const PtxItem &item : module.items)
    if (with_externs || !item.is_extern)
      for (std::string_view name : item.names)
        names.insert(name);
  return names;
}

// Copies one probe item, renaming symbols, dropping debug line directives
// (their file numbers mean nothing in the module) and, for a function
// definition, its .visible/.weak linkage: the probe is private to each
// module it is merged into, so JIT-linking several instrumented modules
// does not see duplicate definitions.
std::string
copy_item(const PtxModule &probe, const PtxItem &item,
          const std::vector<std::pair<std::string, std::string>> &renamed) {
  std::string_view text = probe.text.substr(0, item.end);
  bool drop_linkage = item.kind == PtxItemKind::Function &&
                      probe.functions[item.function].has_body;
  std::string out;
  size_t copied = item.begin;
  PtxLexer lex(text, item.begin);
  bool leading = true;
  for (PtxToken t = lex.next(); t.kind != PtxTokenKind::End; t = lex.next()) {
    if (leading && drop_linkage &&
        (t.is_word(".visible") || t.is_word(".weak"))) {
      out.append(text.substr(copied, t.offset - copied));
      copied = t.end();
      while (copied < text.size() &&
             (text[copied] == ' ' || text[copied] == '\t'))
        ++copied;
      continue;
    }
    leading = false;
    if (t.is_word(".loc")) {
      size_t end = t.end();
      while (!lex.peek().starts_line && lex.peek().kind != PtxTokenKind::End)
        end = lex.next().end();
      out.append(text.substr(copied, t.offset - copied));
      copied = end;
      continue;
    }
    if (t.kind != PtxTokenKind::Word)
      continue;
    for (const auto &[from, to] : renamed) {
      if (t.text == from) {
        out.append(text.substr(copied, t.offset - copied));
        out.append(to);
        copied = t.end();
        break;
      }
    }
  }
  out.append(text.substr(copied));
  return out;
}

bool version_less(uint32_t a_major, uint32_t a_minor, uint32_t b_major,
                  uint32_t b_minor) {
  return a_major != b_major ? a_major < b_major : a_minor < b_minor;
}

} // namespace

std::string ProbeMerge::name_in_module(std::string_view probe_name) const {
  for (const auto &[from, to] : renamed)
    if (from == probe_name)
      return to;
  return std::string(probe_name);
}

Result<ProbeMerge> plan_probe_merge(const PtxModule &module,
                                    const PtxModule &probe) {
  if (probe.address_size != 0 && module.address_size != 0 &&
      probe.address_size != module.address_size)
    return make_error("probe PTX has .address_size " +
                      std::to_string(probe.address_size) + ", module has " +
                      std::to_string(module.address_size));
  uint32_t probe_sm = probe.target_sm(), module_sm = module.target_sm();
  if (probe_sm != 0 && module_sm != 0 && probe_sm > module_sm)
    return make_error("probe PTX targets sm_" + std::to_string(probe_sm) +
                      ", newer than the module's sm_" +
                      std::to_string(module_sm));

  ProbeMerge merge;
  merge.version_major = module.version_major;
  merge.version_minor = module.version_minor;
  if (version_less(module.version_major, module.version_minor,
                   probe.version_major, probe.version_minor)) {
    merge.version_major = probe.version_major;
    merge.version_minor = probe.version_minor;
  }

  std::set<std::string_view> taken = module_names(module);
  std::set<std::string_view> defined = module_names(module, false);
  std::set<std::string_view> probe_taken = module_names(probe);
  std::set<std::string> fresh;
  std::set<std::string_view> dropped_externs;
  for (const PtxItem &item : probe.items) {
    for (std::string_view name : item.names) {
      if (!taken.count(name))
        continue;
      if (item.is_extern) {
        // A module definition must not follow an extern declaration of
        // the same name (ptxas refuses it): the probe uses the module's.
        // Another extern declaration of it is harmless and kept, so the
        // probe's code never precedes the declaration it calls through.
        if (defined.count(name))
          dropped_externs.insert(name);
        continue;
      }
      bool already = false;
      for (const auto &[from, to] : merge.renamed)
        already |= from == name;
      if (already)
        continue;
      for (int n = 0;; ++n) {
        std::string candidate = std::string(name) + "_ubt" + std::to_string(n);
        if (!taken.count(candidate) && !probe_taken.count(candidate) &&
            !fresh.count(candidate)) {
          fresh.insert(candidate);
          merge.renamed.emplace_back(std::string(name), candidate);
          break;
        }
      }
    }
  }

  merge.text = "\n\n// ubtrace: probe functions and globals\n";
  for (const PtxItem &item : probe.items) {
    switch (item.kind) {
    case PtxItemKind::Version:
    case PtxItemKind::Target:
    case PtxItemKind::AddressSize:
    case PtxItemKind::File:
    case PtxItemKind::Section:
      continue; // header and debug info stay the module's
    case PtxItemKind::Function:
    case PtxItemKind::Variable:
    case PtxItemKind::Other:
      break;
    }
    bool drop = item.is_extern && !item.names.empty();
    for (std::string_view name : item.names)
      drop &= dropped_externs.count(name) != 0;
    if (drop)
      continue;
    merge.text += copy_item(probe, item, merge.renamed);
    merge.text += "\n";
  }
  merge.text += "// ubtrace: end of probes\n";
  return merge;
}

} // namespace ubtrace::runtime::gpu
