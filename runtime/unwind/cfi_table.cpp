#include "runtime/unwind/cfi_table.h"

#include <algorithm>
#include <cstring>

namespace ubtrace::runtime::unwind {

namespace {

// DWARF register numbers of x86-64.
constexpr uint64_t kRegRbp = 6, kRegRsp = 7, kRegRa = 16;

// The state of the rules that rows record, and the state of the others
// only as far as "expressible or not".
struct State {
  uint64_t cfa_reg = kRegRsp;
  int64_t cfa_offset = 8;
  bool cfa_expression = false;
  enum class Reg : uint8_t { Same, Offset, Undefined, Other };
  Reg rbp = Reg::Same;
  int64_t rbp_offset = 0;
  Reg ra = Reg::Offset;
  int64_t ra_offset = -8;
};

// A bounds-checked cursor over a section's bytes.
class Cursor {
public:
  Cursor(const uint8_t *data, size_t size, size_t pos = 0)
      : data_(data), size_(size), pos_(pos) {}
  bool ok() const { return ok_; }
  size_t pos() const { return pos_; }
  bool at_end() const { return pos_ >= size_; }
  void seek(size_t pos) {
    if (pos > size_)
      ok_ = false;
    else
      pos_ = pos;
  }
  template <class T> T fixed() {
    T v{};
    if (!ok_ || size_ - pos_ < sizeof(T)) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  uint64_t uleb() {
    uint64_t v = 0;
    for (unsigned shift = 0; ok_; shift += 7) {
      if (pos_ >= size_ || shift > 63) {
        ok_ = false;
        break;
      }
      uint8_t b = data_[pos_++];
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80))
        break;
    }
    return v;
  }
  int64_t sleb() {
    int64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    do {
      if (!ok_ || pos_ >= size_ || shift > 63) {
        ok_ = false;
        return 0;
      }
      b = data_[pos_++];
      v |= int64_t(b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
      v |= -(int64_t(1) << shift);
    return v;
  }
  // A DW_EH_PE_* encoded pointer; `vaddr` is where the section loads.
  uint64_t pointer(uint8_t enc, uint64_t vaddr) {
    if (enc == 0xff) // omit
      return 0;
    uint64_t here = vaddr + pos_;
    uint64_t v = 0;
    switch (enc & 0x0f) {
    case 0x00:
      v = fixed<uint64_t>();
      break;
    case 0x01:
      v = uleb();
      break;
    case 0x02:
      v = fixed<uint16_t>();
      break;
    case 0x03:
      v = fixed<uint32_t>();
      break;
    case 0x04:
      v = fixed<uint64_t>();
      break;
    case 0x09:
      v = static_cast<uint64_t>(sleb());
      break;
    case 0x0a:
      v = static_cast<uint64_t>(int64_t(fixed<int16_t>()));
      break;
    case 0x0b:
      v = static_cast<uint64_t>(int64_t(fixed<int32_t>()));
      break;
    case 0x0c:
      v = fixed<uint64_t>();
      break;
    default:
      ok_ = false;
      return 0;
    }
    switch (enc & 0x70) {
    case 0x00:
      break;
    case 0x10: // pcrel
      v += here;
      break;
    default: // textrel, datarel, funcrel, aligned: not in x86-64 FDEs
      ok_ = false;
      return 0;
    }
    if (enc & 0x80) // indirect: a pointer to the value, not in FDE ranges
      ok_ = false;
    return v;
  }
  const uint8_t *data() const { return data_; }

private:
  const uint8_t *data_;
  size_t size_;
  size_t pos_;
  bool ok_ = true;
};

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = -8;
  uint64_t ra_reg = kRegRa;
  uint8_t fde_encoding = 0; // absptr
  bool augmented = false;   // 'z': FDEs carry augmentation data
  bool signal_frame = false;
  size_t insns = 0, insns_end = 0; // the initial instructions
};

bool parse_cie(Cursor c, size_t end, bool debug_frame, Cie &cie) {
  uint8_t version = c.fixed<uint8_t>();
  if (version != 1 && version != 3 && version != 4)
    return false;
  std::string aug;
  for (char ch; c.ok() && (ch = static_cast<char>(c.fixed<uint8_t>())) != 0;)
    aug.push_back(ch);
  if (version == 4) {
    uint8_t address_size = c.fixed<uint8_t>();
    c.fixed<uint8_t>(); // segment selector size
    if (address_size != 8)
      return false;
  }
  cie.code_align = c.uleb();
  cie.data_align = c.sleb();
  cie.ra_reg = version == 1 ? c.fixed<uint8_t>() : c.uleb();
  if (!aug.empty() && aug[0] == 'z') {
    cie.augmented = true;
    uint64_t len = c.uleb();
    size_t data_end = c.pos() + len;
    for (size_t i = 1; i < aug.size() && c.ok(); i++) {
      switch (aug[i]) {
      case 'R':
        cie.fde_encoding = c.fixed<uint8_t>();
        break;
      case 'L':
        c.fixed<uint8_t>(); // the LSDA's encoding
        break;
      case 'P': {
        uint8_t enc = c.fixed<uint8_t>();
        // The personality routine may be indirect: only skip its bytes.
        c.pointer(enc & 0x7f, 0);
        break;
      }
      case 'S':
        cie.signal_frame = true;
        break;
      case 'B':
        break;
      default:
        c.seek(data_end); // unknown: the length lets us skip the rest
        i = aug.size();
        break;
      }
    }
    c.seek(data_end);
  } else if (!aug.empty() && aug != "eh") {
    return false; // an augmentation we cannot skip
  }
  (void)debug_frame;
  if (!c.ok() || c.pos() > end)
    return false;
  cie.insns = c.pos();
  cie.insns_end = end;
  return true;
}

class RowBuilder {
public:
  RowBuilder(CfiTable &table, const Cie &cie, const uint8_t *data,
             uint64_t vaddr)
      : table_(table), cie_(cie), data_(data), vaddr_(vaddr) {}

  // Runs instructions [from, to) starting at `loc`; emits a row whenever
  // the location advances (and at the end).
  bool run(size_t from, size_t to, size_t size, bool initial) {
    Cursor c(data_, std::min(to, size), from);
    while (c.ok() && !c.at_end()) {
      uint8_t op = c.fixed<uint8_t>();
      uint8_t high = op & 0xc0, low = op & 0x3f;
      if (high == 0x40) { // advance_loc
        advance(low * cie_.code_align);
        continue;
      }
      if (high == 0x80) { // offset
        set_offset(low, static_cast<int64_t>(c.uleb()) * cie_.data_align);
        continue;
      }
      if (high == 0xc0) { // restore
        restore(low);
        continue;
      }
      switch (op) {
      case 0x00: // nop
        break;
      case 0x01: { // set_loc
        uint64_t to_loc = c.pointer(cie_.fde_encoding, vaddr_);
        if (to_loc < loc_)
          return false;
        advance(to_loc - loc_);
        break;
      }
      case 0x02:
        advance(c.fixed<uint8_t>() * cie_.code_align);
        break;
      case 0x03:
        advance(c.fixed<uint16_t>() * cie_.code_align);
        break;
      case 0x04:
        advance(uint64_t(c.fixed<uint32_t>()) * cie_.code_align);
        break;
      case 0x05: { // offset_extended
        uint64_t reg = c.uleb();
        set_offset(reg, static_cast<int64_t>(c.uleb()) * cie_.data_align);
        break;
      }
      case 0x06: // restore_extended
        restore(c.uleb());
        break;
      case 0x07: // undefined
        set_rule(c.uleb(), State::Reg::Undefined);
        break;
      case 0x08: // same_value
        set_rule(c.uleb(), State::Reg::Same);
        break;
      case 0x09: { // register
        uint64_t reg = c.uleb();
        c.uleb();
        set_rule(reg, State::Reg::Other);
        break;
      }
      case 0x0a: // remember_state
        if (stack_.size() >= 64)
          return false;
        stack_.push_back(state_);
        break;
      case 0x0b: // restore_state
        if (stack_.empty())
          return false;
        state_ = stack_.back();
        stack_.pop_back();
        break;
      case 0x0c: // def_cfa
        state_.cfa_reg = c.uleb();
        state_.cfa_offset = static_cast<int64_t>(c.uleb());
        state_.cfa_expression = false;
        break;
      case 0x0d: // def_cfa_register
        state_.cfa_reg = c.uleb();
        state_.cfa_expression = false;
        break;
      case 0x0e: // def_cfa_offset
        state_.cfa_offset = static_cast<int64_t>(c.uleb());
        break;
      case 0x0f: { // def_cfa_expression
        uint64_t len = c.uleb();
        c.seek(c.pos() + len);
        state_.cfa_expression = true;
        break;
      }
      case 0x10: { // expression
        uint64_t reg = c.uleb();
        uint64_t len = c.uleb();
        c.seek(c.pos() + len);
        set_rule(reg, State::Reg::Other);
        break;
      }
      case 0x11: { // offset_extended_sf
        uint64_t reg = c.uleb();
        set_offset(reg, c.sleb() * cie_.data_align);
        break;
      }
      case 0x12: // def_cfa_sf
        state_.cfa_reg = c.uleb();
        state_.cfa_offset = c.sleb() * cie_.data_align;
        state_.cfa_expression = false;
        break;
      case 0x13: // def_cfa_offset_sf
        state_.cfa_offset = c.sleb() * cie_.data_align;
        break;
      case 0x14:   // val_offset
      case 0x15: { // val_offset_sf
        uint64_t reg = c.uleb();
        if (op == 0x14)
          c.uleb();
        else
          c.sleb();
        set_rule(reg, State::Reg::Other);
        break;
      }
      case 0x16: { // val_expression
        uint64_t reg = c.uleb();
        uint64_t len = c.uleb();
        c.seek(c.pos() + len);
        set_rule(reg, State::Reg::Other);
        break;
      }
      case 0x2e: // GNU_args_size
        c.uleb();
        break;
      case 0x2f: { // GNU_negative_offset_extended
        uint64_t reg = c.uleb();
        set_offset(reg, -static_cast<int64_t>(c.uleb()) * cie_.data_align);
        break;
      }
      default:
        return false; // an opcode we do not know: stop trusting the rest
      }
      if (initial)
        initial_ = state_;
    }
    if (initial)
      initial_ = state_;
    return c.ok();
  }

  void start(uint64_t loc, uint64_t end) {
    loc_ = loc;
    end_ = end;
    state_ = State{};
    stack_.clear();
  }
  void begin_fde() { initial_ = state_; }
  void flush() { emit(); }

private:
  void advance(uint64_t delta) {
    emit();
    loc_ += delta;
  }
  void emit() {
    if (loc_ >= end_)
      return;
    CfiRow row;
    row.start = loc_;
    bool rbp_ok =
        state_.rbp == State::Reg::Same ||
        (state_.rbp == State::Reg::Offset && state_.rbp_offset >= INT16_MIN &&
         state_.rbp_offset <= INT16_MAX);
    bool cfa_ok = !state_.cfa_expression &&
                  (state_.cfa_reg == kRegRsp || state_.cfa_reg == kRegRbp) &&
                  state_.cfa_offset >= INT32_MIN &&
                  state_.cfa_offset <= INT32_MAX;
    if (state_.ra == State::Reg::Undefined) {
      row.cfa = CfaRule::End;
    } else if (cfa_ok && rbp_ok && state_.ra == State::Reg::Offset &&
               state_.ra_offset == -8 && !cie_.signal_frame) {
      row.cfa = state_.cfa_reg == kRegRsp ? CfaRule::Rsp : CfaRule::Rbp;
      row.cfa_offset = static_cast<int32_t>(state_.cfa_offset);
      if (state_.rbp == State::Reg::Offset) {
        row.rbp = RbpRule::Offset;
        row.rbp_offset = static_cast<int16_t>(state_.rbp_offset);
      }
    } else {
      row.cfa = CfaRule::Unsupported;
      table_.complex_rows++;
    }
    if (!table_.rows.empty() && table_.rows.back().start == row.start)
      table_.rows.back() = row; // several advances of 0
    else
      table_.rows.push_back(row);
  }
  // The rule of a register the walker follows in `st` (rbp, the return
  // address), with its offset; nullptr for the others.
  State::Reg *rule_of(State &st, uint64_t reg, int64_t *&offset) {
    if (reg == kRegRbp) {
      offset = &st.rbp_offset;
      return &st.rbp;
    }
    if (reg == cie_.ra_reg) {
      offset = &st.ra_offset;
      return &st.ra;
    }
    return nullptr;
  }
  void set_offset(uint64_t reg, int64_t off) {
    int64_t *offset = nullptr;
    if (State::Reg *r = rule_of(state_, reg, offset)) {
      *r = State::Reg::Offset;
      *offset = off;
    }
  }
  void set_rule(uint64_t reg, State::Reg rule) {
    int64_t *offset = nullptr;
    if (State::Reg *r = rule_of(state_, reg, offset))
      *r = rule;
  }
  // DW_CFA_restore: the rule the CIE's initial instructions left.
  void restore(uint64_t reg) {
    int64_t *offset = nullptr, *initial_offset = nullptr;
    State::Reg *r = rule_of(state_, reg, offset);
    State::Reg *ir = rule_of(initial_, reg, initial_offset);
    if (r && ir) {
      *r = *ir;
      *offset = *initial_offset;
    }
  }

  CfiTable &table_;
  const Cie &cie_;
  const uint8_t *data_;
  uint64_t vaddr_;
  uint64_t loc_ = 0, end_ = 0;
  State state_, initial_;
  std::vector<State> stack_;
};

} // namespace

void add_cfi_rows(const CfiSection &s, CfiTable &table) {
  if (!s.data || s.size == 0)
    return;
  Cursor c(s.data, s.size);
  while (c.ok() && s.size - c.pos() >= 4) {
    uint64_t length = c.fixed<uint32_t>();
    bool wide = length == 0xffffffffu;
    if (wide)
      length = c.fixed<uint64_t>();
    if (length == 0) {
      if (s.debug_frame) // .debug_frame has no terminator: skip padding
        continue;
      break; // .eh_frame's terminator
    }
    size_t id_pos = c.pos();
    if (!c.ok() || length > s.size - id_pos) {
      table.bad_entries++;
      break;
    }
    size_t end = id_pos + length;
    uint64_t id = wide ? c.fixed<uint64_t>() : c.fixed<uint32_t>();
    uint64_t cie_id = s.debug_frame ? (wide ? ~0ull : 0xffffffffull) : 0;
    if (id == cie_id) { // a CIE: read when an FDE names it
      c.seek(end);
      continue;
    }
    // An FDE: its CIE (.eh_frame: back from the id field; .debug_frame:
    // an offset into the section).
    uint64_t cie_pos = s.debug_frame ? id : id_pos - id;
    if (!s.debug_frame && id > id_pos) {
      table.bad_entries++;
      c.seek(end);
      continue;
    }
    Cie cie;
    bool cie_ok = false;
    if (cie_pos < s.size) {
      Cursor cc(s.data, s.size, cie_pos);
      uint64_t cie_len = cc.fixed<uint32_t>();
      bool cie_wide = cie_len == 0xffffffffu;
      if (cie_wide)
        cie_len = cc.fixed<uint64_t>();
      size_t cie_id_pos = cc.pos();
      if (cc.ok() && cie_len <= s.size - cie_id_pos) {
        uint64_t got = cie_wide ? cc.fixed<uint64_t>() : cc.fixed<uint32_t>();
        uint64_t want = s.debug_frame ? (cie_wide ? ~0ull : 0xffffffffull) : 0;
        cie_ok = cc.ok() && got == want &&
                 parse_cie(cc, cie_id_pos + cie_len, s.debug_frame, cie);
      }
    }
    if (!cie_ok) {
      table.bad_entries++;
      c.seek(end);
      continue;
    }
    uint8_t enc = s.debug_frame ? 0x00 : cie.fde_encoding;
    uint64_t pc_begin = c.pointer(enc, s.vaddr);
    uint64_t pc_range = c.pointer(enc & 0x0f, s.vaddr);
    if (cie.augmented) {
      uint64_t len = c.uleb();
      c.seek(c.pos() + len);
    }
    if (!c.ok() || c.pos() > end || pc_range == 0 ||
        pc_begin + pc_range < pc_begin) {
      table.bad_entries++;
      c = Cursor(s.data, s.size, end);
      continue;
    }
    table.fdes++;
    RowBuilder rb(table, cie, s.data, s.vaddr);
    rb.start(pc_begin, pc_begin + pc_range);
    size_t before = table.rows.size();
    bool ok = rb.run(cie.insns, cie.insns_end, s.size, true);
    rb.begin_fde();
    ok = ok && rb.run(c.pos(), end, s.size, false);
    if (ok) {
      rb.flush();
    } else {
      // A program we cannot follow: none of its rows.
      table.rows.resize(before);
      table.bad_entries++;
    }
    // The range ends here unless another FDE starts at its end.
    CfiRow close;
    close.start = pc_begin + pc_range;
    close.cfa = CfaRule::Unsupported;
    table.rows.push_back(close);
    c.seek(end);
  }
}

void finish_cfi_table(CfiTable &table) {
  auto &rows = table.rows;
  // Stable: for equal starts the first read wins, except that a closing
  // row (Unsupported with no FDE behind it) never hides a real one.
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); i++)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return rows[a].start != rows[b].start ? rows[a].start < rows[b].start
                                          : a < b;
  });
  std::vector<CfiRow> sorted;
  sorted.reserve(rows.size());
  for (size_t i : order)
    sorted.push_back(rows[i]);
  rows = std::move(sorted);
  std::vector<CfiRow> out;
  out.reserve(rows.size());
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    const CfiRow *pick = &rows[i];
    for (; j < rows.size() && rows[j].start == rows[i].start; j++)
      if (pick->cfa == CfaRule::Unsupported &&
          rows[j].cfa != CfaRule::Unsupported)
        pick = &rows[j];
    out.push_back(*pick);
    i = j;
  }
  rows = std::move(out);
}

const CfiRow *find_cfi_row(const CfiRow *rows, size_t count, uint64_t addr) {
  size_t lo = 0, hi = count;
  while (lo < hi) { // the first row starting after addr
    size_t mid = lo + (hi - lo) / 2;
    if (rows[mid].start <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo == 0 ? nullptr : &rows[lo - 1];
}

std::string describe(const CfiRow &row) {
  switch (row.cfa) {
  case CfaRule::End:
    return "end";
  case CfaRule::Unsupported:
    return "unsupported";
  case CfaRule::Rsp:
  case CfaRule::Rbp:
    break;
  }
  std::string s = row.cfa == CfaRule::Rsp ? "cfa=rsp" : "cfa=rbp";
  s += (row.cfa_offset >= 0 ? "+" : "") + std::to_string(row.cfa_offset);
  if (row.rbp == RbpRule::Offset)
    s += " rbp=[cfa" + std::to_string(row.rbp_offset) + "]";
  else
    s += " rbp=same";
  return s;
}

} // namespace ubtrace::runtime::unwind
