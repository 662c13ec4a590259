#include "runtime/symbols/rust_demangle.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ubtrace::runtime::symbols {

namespace {

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// ---- legacy: _ZN <len ident>... E, idents with $..$ escapes ------------

std::optional<std::string> legacy(std::string_view s) {
  if (!s.starts_with("_ZN") || !s.ends_with("E"))
    return std::nullopt;
  s = s.substr(3, s.size() - 4);
  std::vector<std::string_view> parts;
  while (!s.empty()) {
    size_t len = 0, i = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      len = len * 10 + static_cast<size_t>(s[i] - '0');
      if (len > 4096)
        return std::nullopt;
      i++;
    }
    if (i == 0 || len > s.size() - i)
      return std::nullopt;
    parts.push_back(s.substr(i, len));
    s = s.substr(i + len);
  }
  // The last part is the hash: h and 16 hex digits.
  if (parts.size() < 2)
    return std::nullopt;
  std::string_view hash = parts.back();
  if (hash.size() != 17 || hash[0] != 'h')
    return std::nullopt;
  for (char c : hash.substr(1))
    if (!is_hex(c))
      return std::nullopt;
  parts.pop_back();
  std::string out;
  for (size_t p = 0; p < parts.size(); p++) {
    if (p)
      out += "::";
    std::string_view id = parts[p];
    if (id.starts_with("_$"))
      id.remove_prefix(1);
    for (size_t i = 0; i < id.size();) {
      if (id.substr(i, 2) == "..") {
        out += "::";
        i += 2;
        continue;
      }
      if (id[i] != '$') {
        out += id[i++];
        continue;
      }
      size_t end = id.find('$', i + 1);
      if (end == std::string_view::npos)
        return std::nullopt;
      std::string_view esc = id.substr(i + 1, end - i - 1);
      static const struct {
        const char *code, *text;
      } kEscapes[] = {{"SP", "@"}, {"BP", "*"}, {"RF", "&"}, {"LT", "<"},
                      {"GT", ">"}, {"LP", "("}, {"RP", ")"}, {"C", ","}};
      bool known = false;
      for (const auto &e : kEscapes)
        if (esc == e.code) {
          out += e.text;
          known = true;
        }
      if (!known && esc.size() > 1 && esc[0] == 'u') {
        uint32_t cp = 0;
        for (char c : esc.substr(1)) {
          if (!is_hex(c))
            return std::nullopt;
          cp = cp * 16 +
               static_cast<uint32_t>(c <= '9' ? c - '0' : c - 'a' + 10);
        }
        if (cp < 0x80) {
          out += static_cast<char>(cp);
          known = true;
        }
      }
      if (!known)
        return std::nullopt;
      i = end + 1;
    }
  }
  return out;
}

// ---- v0: _R ... (RFC 2603) -------------------------------------------

class V0 {
public:
  explicit V0(std::string_view s) : s_(s) {}

  std::optional<std::string> run() {
    // An optional encoding version, then the path.
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9')
      pos_++;
    path(true);
    // An instantiating crate may follow; it is not printed.
    if (!ok_)
      return std::nullopt;
    return out_;
  }

private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  char next() {
    if (pos_ >= s_.size()) {
      ok_ = false;
      return '\0';
    }
    return s_[pos_++];
  }
  bool eat(char c) {
    if (peek() != c)
      return false;
    pos_++;
    return true;
  }

  uint64_t base62() {
    if (eat('_'))
      return 0;
    uint64_t v = 0;
    while (ok_) {
      char c = next();
      if (c == '_')
        return v + 1;
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'z' ? c - 'a' + 10
              : c >= 'A' && c <= 'Z' ? c - 'A' + 36
                                     : -1;
      if (d < 0 || v > (UINT64_MAX - 62) / 62) {
        ok_ = false;
        return 0;
      }
      v = v * 62 + static_cast<uint64_t>(d);
    }
    return 0;
  }
  uint64_t opt_base62(char tag) { return eat(tag) ? base62() + 1 : 0; }

  uint64_t decimal() {
    uint64_t v = 0;
    if (!(peek() >= '0' && peek() <= '9')) {
      ok_ = false;
      return 0;
    }
    if (eat('0'))
      return 0;
    while (peek() >= '0' && peek() <= '9') {
      v = v * 10 + static_cast<uint64_t>(next() - '0');
      if (v > 4096) {
        ok_ = false;
        return 0;
      }
    }
    return v;
  }

  // undisambiguated-identifier; punycode names decoded to UTF-8.
  std::string ident() {
    bool puny = eat('u');
    uint64_t len = decimal();
    eat('_');
    if (!ok_ || len > s_.size() - pos_) {
      ok_ = false;
      return {};
    }
    std::string id(s_.substr(pos_, len));
    pos_ += len;
    if (puny) {
      auto decoded = punycode(id);
      id = decoded ? *decoded : "punycode{" + id + "}";
    }
    return id;
  }

  // RFC 3492 punycode as v0 writes it ('_' where the RFC has '-' between
  // the ASCII characters and the deltas), to UTF-8; nullopt when invalid.
  static std::optional<std::string> punycode(std::string_view in) {
    std::u32string out;
    size_t split = in.rfind('_');
    if (split != std::string_view::npos) {
      for (char c : in.substr(0, split))
        out.push_back(static_cast<unsigned char>(c));
      in.remove_prefix(split + 1);
    }
    constexpr uint64_t kBase = 36, kTmin = 1, kTmax = 26, kSkew = 38,
                       kDamp = 700;
    uint64_t n = 128, i = 0, bias = 72;
    size_t p = 0;
    while (p < in.size()) {
      uint64_t old_i = i, w = 1;
      for (uint64_t k = kBase;; k += kBase) {
        if (p >= in.size())
          return std::nullopt;
        char c = in[p++];
        uint64_t digit;
        if (c >= 'a' && c <= 'z')
          digit = static_cast<uint64_t>(c - 'a');
        else if (c >= '0' && c <= '9')
          digit = static_cast<uint64_t>(c - '0') + 26;
        else
          return std::nullopt;
        i += digit * w;
        uint64_t t = k <= bias ? kTmin : k >= bias + kTmax ? kTmax : k - bias;
        if (digit < t)
          break;
        w *= kBase - t;
        if (i > 0x10FFFF * 64 || w > 0x10FFFF * 64)
          return std::nullopt;
      }
      // Adapt the bias.
      uint64_t delta = old_i == 0 ? (i - old_i) / kDamp : (i - old_i) / 2;
      delta += delta / (out.size() + 1);
      uint64_t k = 0;
      while (delta > ((kBase - kTmin) * kTmax) / 2) {
        delta /= kBase - kTmin;
        k += kBase;
      }
      bias = k + (kBase - kTmin + 1) * delta / (delta + kSkew);
      n += i / (out.size() + 1);
      i %= out.size() + 1;
      if (n > 0x10FFFF || (n >= 0xD800 && n <= 0xDFFF) || out.size() > 4096)
        return std::nullopt;
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(i),
                 static_cast<char32_t>(n));
      i++;
    }
    std::string utf8;
    for (char32_t c : out) {
      if (c < 0x80) {
        utf8 += static_cast<char>(c);
      } else if (c < 0x800) {
        utf8 += static_cast<char>(0xC0 | (c >> 6));
        utf8 += static_cast<char>(0x80 | (c & 0x3F));
      } else if (c < 0x10000) {
        utf8 += static_cast<char>(0xE0 | (c >> 12));
        utf8 += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        utf8 += static_cast<char>(0x80 | (c & 0x3F));
      } else {
        utf8 += static_cast<char>(0xF0 | (c >> 18));
        utf8 += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        utf8 += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        utf8 += static_cast<char>(0x80 | (c & 0x3F));
      }
    }
    return utf8;
  }

  // Runs `f` at the backref's position, then comes back.
  template <class F> void backref(F &&f) {
    size_t at = pos_ - 1;
    uint64_t target = base62();
    if (!ok_ || target >= at || ++depth_ > 64) {
      ok_ = false;
      return;
    }
    size_t saved = pos_;
    pos_ = static_cast<size_t>(target);
    f();
    pos_ = saved;
    depth_--;
  }

  void path(bool in_value) {
    if (!ok_ || ++depth_ > 128) {
      ok_ = false;
      return;
    }
    char tag = next();
    switch (tag) {
    case 'C': // crate root
      opt_base62('s');
      out_ += ident();
      break;
    case 'M': // <T>
      opt_base62('s');
      skip_path();
      out_ += '<';
      type();
      out_ += '>';
      break;
    case 'X': // <T as Trait>
      opt_base62('s');
      skip_path();
      [[fallthrough]];
    case 'Y':
      out_ += '<';
      type();
      out_ += " as ";
      path(false);
      out_ += '>';
      break;
    case 'N': {
      char ns = next();
      path(in_value);
      uint64_t dis = opt_base62('s');
      std::string name = ident();
      if (ns >= 'A' && ns <= 'Z') {
        out_ += "::{";
        out_ += ns == 'C' ? "closure" : ns == 'S' ? "shim" : std::string(1, ns);
        if (!name.empty())
          out_ += ":" + name;
        out_ += "#" + std::to_string(dis) + "}";
      } else {
        out_ += "::" + name;
      }
      break;
    }
    case 'I':
      path(in_value);
      if (in_value)
        out_ += "::";
      out_ += '<';
      for (bool first = true; ok_ && !eat('E'); first = false) {
        if (!first)
          out_ += ", ";
        generic_arg();
      }
      out_ += '>';
      break;
    case 'B':
      backref([&] { path(in_value); });
      break;
    default:
      ok_ = false;
    }
    depth_--;
  }

  // A path that is parsed but not printed (an impl's parent).
  void skip_path() {
    std::string saved = out_;
    path(false);
    out_ = std::move(saved);
  }

  void generic_arg() {
    if (eat('L')) {
      base62();
      out_ += "'_";
    } else if (eat('K')) {
      constant();
    } else {
      type();
    }
  }

  void constant() {
    if (eat('p')) {
      out_ += '_';
      return;
    }
    if (eat('B')) {
      backref([&] { constant(); });
      return;
    }
    char t = next();
    bool negative = eat('n');
    std::string hex;
    while (ok_ && peek() != '_')
      hex += next();
    next(); // '_'
    if (t == 'b') {
      out_ += hex == "1" ? "true" : "false";
      return;
    }
    uint64_t v = 0;
    for (char c : hex) {
      if (!is_hex(c) || v > (UINT64_MAX >> 4)) {
        ok_ = false;
        return;
      }
      v = v * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    if (t == 'c' && v < 0x80) {
      out_ += '\'';
      out_ += static_cast<char>(v);
      out_ += '\'';
      return;
    }
    out_ += (negative ? "-" : "") + std::to_string(v);
  }

  void type() {
    if (!ok_ || ++depth_ > 128) {
      ok_ = false;
      return;
    }
    static const char *const kBasic[26] = {
        "i8",   "bool",  "char",  "f64",   "str", "f32", nullptr,
        "u8",   "isize", "usize", nullptr, "i32", "u32", "i128",
        "u128", "_",     nullptr, nullptr, "i16", "u16", "()",
        "...",  nullptr, "i64",   "u64",   "!"};
    char c = peek();
    if (c >= 'a' && c <= 'z' && kBasic[c - 'a']) {
      pos_++;
      out_ += kBasic[c - 'a'];
      depth_--;
      return;
    }
    switch (next()) {
    case 'A':
      out_ += '[';
      type();
      out_ += "; ";
      constant();
      out_ += ']';
      break;
    case 'S':
      out_ += '[';
      type();
      out_ += ']';
      break;
    case 'T': {
      out_ += '(';
      size_t n = 0;
      for (; ok_ && !eat('E'); n++) {
        if (n)
          out_ += ", ";
        type();
      }
      out_ += n == 1 ? ",)" : ")";
      break;
    }
    case 'R':
    case 'Q': {
      bool mut = s_[pos_ - 1] == 'Q';
      if (eat('L'))
        base62();
      out_ += mut ? "&mut " : "&";
      type();
      break;
    }
    case 'P':
      out_ += "*const ";
      type();
      break;
    case 'O':
      out_ += "*mut ";
      type();
      break;
    case 'F': {
      opt_base62('G');
      bool is_unsafe = eat('U');
      std::string abi;
      if (eat('K')) {
        if (eat('C'))
          abi = "C";
        else
          abi = ident();
      }
      out_ += is_unsafe ? "unsafe " : "";
      if (!abi.empty())
        out_ += "extern \"" + abi + "\" ";
      out_ += "fn(";
      for (bool first = true; ok_ && !eat('E'); first = false) {
        if (!first)
          out_ += ", ";
        type();
      }
      out_ += ')';
      if (peek() == 'u') {
        pos_++; // returns ()
      } else {
        out_ += " -> ";
        type();
      }
      break;
    }
    case 'D': {
      opt_base62('G');
      out_ += "dyn ";
      for (bool first = true; ok_ && !eat('E'); first = false) {
        if (!first)
          out_ += " + ";
        path(false);
        // Associated types join the trait's generic arguments:
        // Fn<(A,), Output = R>.
        for (bool first_binding = true; ok_ && eat('p');
             first_binding = false) {
          if (!first_binding) {
            out_.pop_back(); // the '>' after the previous binding
            out_ += ", ";
          } else if (!out_.empty() && out_.back() == '>') {
            out_.pop_back();
            out_ += ", ";
          } else {
            out_ += '<';
          }
          out_ += ident() + " = ";
          type();
          out_ += '>';
        }
      }
      if (eat('L'))
        base62();
      break;
    }
    case 'B':
      backref([&] { type(); });
      break;
    default:
      pos_--;
      path(false);
    }
    depth_--;
  }

  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool ok_ = true;
  std::string out_;
};

} // namespace

std::optional<std::string> demangle_rust(std::string_view name) {
  // A suffix the linker or LLVM added (".llvm.123", "@@version").
  std::string_view suffix;
  if (auto at = name.find_first_of(".@");
      at != std::string_view::npos && at > 2 && name.starts_with("_R")) {
    suffix = name.substr(at);
    name = name.substr(0, at);
  }
  if (name.starts_with("_R")) {
    if (auto v0 = V0(name.substr(2)).run())
      return *v0 + (suffix.starts_with("@") ? std::string(suffix) : "");
    return std::nullopt;
  }
  return legacy(name);
}

} // namespace ubtrace::runtime::symbols
