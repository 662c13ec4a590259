#include "runtime/gpu/ptx_module.h"

#include "runtime/gpu/ptx_lexer.h"

#include <charconv>
#include <string>

namespace ubtrace::runtime::gpu {
namespace {

bool parse_u32(std::string_view text, uint32_t &out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool is_linkage(std::string_view word) {
  return word == ".visible" || word == ".extern" || word == ".weak" ||
         word == ".common";
}

PtxLinkage linkage_of(std::string_view word) {
  if (word == ".visible")
    return PtxLinkage::Visible;
  if (word == ".extern")
    return PtxLinkage::Extern;
  if (word == ".weak")
    return PtxLinkage::Weak;
  if (word == ".common")
    return PtxLinkage::Common;
  return PtxLinkage::Internal;
}

bool is_state_space(std::string_view word) {
  return word == ".param" || word == ".reg" || word == ".global" ||
         word == ".const" || word == ".shared" || word == ".local" ||
         word == ".tex" || word == ".ptr";
}

// Body directives that declare rather than compute: code starts after them.
bool is_body_declaration(std::string_view word) {
  return word == ".reg" || word == ".local" || word == ".shared" ||
         word == ".param" || word == ".pragma" || word == ".loc" ||
         word == ".const" || word == ".global";
}

class Parser {
public:
  explicit Parser(std::string_view text) : lex_(text) { module_.text = text; }

  Result<PtxModule> run() {
    for (;;) {
      PtxToken tok = lex_.next();
      if (tok.kind == PtxTokenKind::End)
        break;
      auto ok = top_level(tok);
      if (!ok)
        return std::move(ok).take_error();
    }
    return std::move(module_);
  }

private:
  Error error_at(size_t offset, const std::string &what) {
    return make_error("PTX line " +
                      std::to_string(ptx_line_of(module_.text, offset)) + ": " +
                      what);
  }

  // Consumes the rest of a line-based directive; returns its end offset.
  size_t rest_of_line(size_t end) {
    while (true) {
      PtxToken t = lex_.peek();
      if (t.kind == PtxTokenKind::End || t.starts_line)
        return end;
      end = lex_.next().end();
    }
  }

  Result<size_t> until_semicolon(const PtxToken &first) {
    int braces = 0;
    for (PtxToken t = first;; t = lex_.next()) {
      if (t.kind == PtxTokenKind::End)
        return error_at(first.offset, "statement has no closing ';'");
      if (t.is('{'))
        ++braces;
      else if (t.is('}'))
        --braces;
      else if (t.is(';') && braces == 0)
        return t.end();
    }
  }

  Result<void> top_level(const PtxToken &tok) {
    PtxItem item;
    item.begin = tok.offset;
    if (tok.is_word(".version")) {
      PtxToken v = lex_.next();
      size_t dot = v.text.find('.');
      if (v.kind != PtxTokenKind::Number || dot == std::string_view::npos ||
          !parse_u32(v.text.substr(0, dot), module_.version_major) ||
          !parse_u32(v.text.substr(dot + 1), module_.version_minor))
        return error_at(tok.offset, "bad .version");
      module_.version_begin = v.offset;
      module_.version_end = v.end();
      item.kind = PtxItemKind::Version;
      item.end = v.end();
      module_.header_end = item.end;
    } else if (tok.is_word(".target")) {
      PtxToken t = lex_.next();
      if (t.kind != PtxTokenKind::Word)
        return error_at(tok.offset, "bad .target");
      module_.target_begin = t.offset;
      module_.target.push_back(t.text);
      item.end = t.end();
      while (lex_.peek().is(',')) {
        lex_.next();
        PtxToken w = lex_.next();
        if (w.kind != PtxTokenKind::Word)
          return error_at(tok.offset, "bad .target");
        module_.target.push_back(w.text);
        item.end = w.end();
      }
      module_.target_end = item.end;
      item.kind = PtxItemKind::Target;
      module_.header_end = item.end;
    } else if (tok.is_word(".address_size")) {
      PtxToken n = lex_.next();
      if (n.kind != PtxTokenKind::Number ||
          !parse_u32(n.text, module_.address_size))
        return error_at(tok.offset, "bad .address_size");
      item.kind = PtxItemKind::AddressSize;
      item.end = n.end();
      module_.header_end = item.end;
    } else if (tok.is_word(".file")) {
      item.kind = PtxItemKind::File;
      item.end = rest_of_line(tok.end());
    } else if (tok.is_word(".section")) {
      auto end = section(tok);
      if (!end)
        return std::move(end).take_error();
      item.kind = PtxItemKind::Section;
      item.end = *end;
    } else if (tok.is('@')) {
      // "@@DWARF ..." lines of old debug PTX.
      item.kind = PtxItemKind::Other;
      item.end = rest_of_line(tok.end());
    } else {
      return declaration(tok, item);
    }
    module_.items.push_back(std::move(item));
    return {};
  }

  Result<size_t> section(const PtxToken &tok) {
    for (;;) {
      PtxToken t = lex_.next();
      if (t.kind == PtxTokenKind::End)
        return error_at(tok.offset, ".section without a body");
      if (t.is('{'))
        break;
    }
    int depth = 1;
    for (;;) {
      PtxToken t = lex_.next();
      if (t.kind == PtxTokenKind::End)
        return error_at(tok.offset, ".section body is not closed");
      if (t.is('{'))
        ++depth;
      else if (t.is('}') && --depth == 0)
        return t.end();
    }
  }

  // A module-scope statement: linkage directives, then a function or a
  // variable (or another directive, kept as it is).
  Result<void> declaration(const PtxToken &first, PtxItem &item) {
    PtxLinkage linkage = PtxLinkage::Internal;
    PtxToken tok = first;
    while (tok.kind == PtxTokenKind::Word && is_linkage(tok.text)) {
      linkage = linkage_of(tok.text);
      tok = lex_.next();
    }
    item.is_extern = linkage == PtxLinkage::Extern;
    if (tok.is_word(".entry") || tok.is_word(".func"))
      return function(tok, linkage, item);

    bool is_variable =
        tok.kind == PtxTokenKind::Word &&
        (tok.text == ".global" || tok.text == ".const" ||
         tok.text == ".shared" || tok.text == ".local" || tok.text == ".tex");
    item.kind = is_variable ? PtxItemKind::Variable : PtxItemKind::Other;
    // Declared names: the first identifier, and one after each top-level
    // comma, before any initializer.
    bool want_name = is_variable;
    bool in_initializer = false;
    int nesting = 0;
    for (PtxToken t = tok;; t = lex_.next()) {
      if (t.kind == PtxTokenKind::End)
        return error_at(first.offset, "declaration has no closing ';'");
      if (t.is('{') || t.is('(') || t.is('['))
        ++nesting;
      else if (t.is('}') || t.is(')') || t.is(']'))
        --nesting;
      else if (t.is(';') && nesting == 0) {
        item.end = t.end();
        break;
      } else if (t.is('=') && nesting == 0)
        in_initializer = true;
      else if (t.is(',') && nesting == 0 && !in_initializer)
        want_name = is_variable;
      else if (want_name && nesting == 0 && t.kind == PtxTokenKind::Word &&
               !t.is_directive()) {
        item.names.push_back(t.text);
        want_name = false;
      }
    }
    module_.items.push_back(std::move(item));
    return {};
  }

  Result<std::vector<PtxParam>> param_list(const PtxToken &open) {
    std::vector<PtxParam> params;
    PtxParam current;
    bool any = false;
    int brackets = 0;
    bool want_align = false, want_size = false;
    for (;;) {
      PtxToken t = lex_.next();
      if (t.kind == PtxTokenKind::End)
        return error_at(open.offset, "parameter list is not closed");
      if (t.is(')') || (t.is(',') && brackets == 0)) {
        if (any) {
          if (current.name.empty())
            return error_at(t.offset, "parameter without a name");
          params.push_back(current);
        }
        if (t.is(')'))
          return params;
        current = PtxParam();
        any = false;
        continue;
      }
      any = true;
      if (t.is('[')) {
        ++brackets;
        want_size = true;
      } else if (t.is(']')) {
        --brackets;
      } else if (t.kind == PtxTokenKind::Number) {
        uint32_t value = 0;
        parse_u32(t.text, value);
        if (want_align)
          current.align = value;
        else if (want_size)
          current.array_size = value;
        want_align = want_size = false;
      } else if (t.is_word(".align")) {
        want_align = true;
      } else if (t.is_directive()) {
        if (current.space.empty() && (t.text == ".param" || t.text == ".reg"))
          current.space = t.text;
        else if (current.type.empty() && !is_state_space(t.text))
          current.type = t.text;
      } else if (t.kind == PtxTokenKind::Word && current.name.empty()) {
        current.name = t.text;
      }
    }
  }

  Result<void> function(const PtxToken &kind, PtxLinkage linkage,
                        PtxItem &item) {
    PtxFunction fn;
    fn.is_entry = kind.text == ".entry";
    fn.linkage = linkage;
    fn.begin = item.begin;
    PtxToken tok = lex_.next();
    if (!fn.is_entry && tok.is('(')) {
      auto returns = param_list(tok);
      if (!returns)
        return std::move(returns).take_error();
      fn.returns = std::move(*returns);
      tok = lex_.next();
    }
    if (tok.kind != PtxTokenKind::Word || tok.is_directive())
      return error_at(kind.offset, "function without a name");
    fn.name = tok.text;
    if (lex_.peek().is('(')) {
      auto params = param_list(lex_.next());
      if (!params)
        return std::move(params).take_error();
      fn.params = std::move(*params);
    }
    // Performance directives (.maxntid 256, 1, 1 ...) up to `{` or `;`.
    for (;;) {
      PtxToken t = lex_.next();
      if (t.kind == PtxTokenKind::End)
        return error_at(kind.offset, "function " + std::string(fn.name) +
                                         " has neither a body nor a ';'");
      if (t.is(';')) {
        fn.end = t.end();
        break;
      }
      if (t.is('{')) {
        auto ok = body(t, fn);
        if (!ok)
          return std::move(ok).take_error();
        break;
      }
    }
    item.kind = PtxItemKind::Function;
    item.end = fn.end;
    item.names.push_back(fn.name);
    item.function = static_cast<int>(module_.functions.size());
    module_.functions.push_back(std::move(fn));
    module_.items.push_back(std::move(item));
    return {};
  }

  Result<void> body(const PtxToken &open, PtxFunction &fn) {
    fn.has_body = true;
    fn.body_open = open.offset;
    int depth = 1;
    bool code_seen = false;
    auto mark_code = [&](size_t offset) {
      if (!code_seen) {
        code_seen = true;
        fn.code_begin = offset;
      }
    };
    for (;;) {
      PtxToken t = lex_.next();
      if (t.kind == PtxTokenKind::End)
        return error_at(open.offset,
                        "body of " + std::string(fn.name) + " is not closed");
      if (t.is('{')) {
        mark_code(t.offset);
        ++depth;
        continue;
      }
      if (t.is('}')) {
        if (--depth == 0) {
          fn.body_close = t.offset;
          fn.end = t.end();
          if (!code_seen)
            fn.code_begin = t.offset;
          return {};
        }
        continue;
      }
      if (t.is_word(".loc") || t.is_word(".file")) {
        rest_of_line(t.end());
        continue;
      }
      if (t.is_directive()) {
        if (!is_body_declaration(t.text))
          mark_code(t.offset);
        auto end = until_semicolon(t);
        if (!end)
          return std::move(end).take_error();
        continue;
      }
      if (t.kind == PtxTokenKind::Word && lex_.peek().is(':')) {
        lex_.next(); // a label
        mark_code(t.offset);
        continue;
      }
      // An instruction, maybe guarded: [@[!]pred] opcode operands ;
      PtxExit site;
      site.offset = t.offset;
      site.depth = depth;
      PtxToken opcode = t;
      if (t.is('@')) {
        PtxToken p = lex_.next();
        if (p.is('!'))
          p = lex_.next();
        if (p.kind != PtxTokenKind::Word)
          return error_at(t.offset, "guard without a predicate");
        site.guard = module_.text.substr(t.offset, p.end() - t.offset);
        opcode = lex_.next();
      }
      if (opcode.kind != PtxTokenKind::Word)
        return error_at(opcode.offset, "expected an instruction, found '" +
                                           std::string(opcode.text) + "'");
      mark_code(t.offset);
      std::string_view base = opcode.text.substr(0, opcode.text.find('.'));
      if (base == "ret" || base == "exit") {
        site.opcode = opcode.text;
        fn.exits.push_back(site);
      }
      auto end = until_semicolon(opcode);
      if (!end)
        return std::move(end).take_error();
    }
  }

  PtxLexer lex_;
  PtxModule module_;
};

} // namespace

const PtxFunction *PtxModule::find_function(std::string_view name) const {
  for (const PtxFunction &fn : functions)
    if (fn.name == name && fn.has_body)
      return &fn;
  for (const PtxFunction &fn : functions)
    if (fn.name == name)
      return &fn;
  return nullptr;
}

uint32_t PtxModule::target_sm() const {
  for (std::string_view t : target) {
    if (t.rfind("sm_", 0) != 0)
      continue;
    uint32_t sm = 0;
    size_t digits = 3;
    while (digits < t.size() && t[digits] >= '0' && t[digits] <= '9')
      ++digits;
    if (parse_u32(t.substr(3, digits - 3), sm))
      return sm;
  }
  return 0;
}

Result<PtxModule> parse_ptx(std::string_view text) {
  return Parser(text).run();
}

size_t ptx_line_of(std::string_view text, size_t offset) {
  size_t line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i)
    line += text[i] == '\n';
  return line;
}

} // namespace ubtrace::runtime::gpu
