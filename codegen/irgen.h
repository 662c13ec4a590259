// IRGen: lowers the typed AST to LLVM IR for the BPF target. Private to
// codegen/; split by node family over irgen_*.cpp.
//
// Values: integers, booleans, pointers and other 8-byte scalars are i64 in
// registers; strings, tuples, records, arrays, buffers, stacks and the like
// live in memory (a stack slot, a map value, the scratch buffer) and are
// handled by pointer. In memory, integers keep their type's width.
#pragma once

#include "ast/context.h"
#include "codegen/codegen.h"
#include "codegen/emit.h"
#include "runtime/abi.h"
#include "runtime/bundle.h"

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace ubtrace::codegen {

struct Val {
  llvm::Value *v = nullptr; // i64 scalar, or a pointer to the bytes
  bool mem = false;         // v points to memory holding the value
};

// A BPF map of the object: its spec and the global that defines it.
struct MapGen {
  runtime::MapSpec spec;
  const ast::MapInfo *info = nullptr; // null for internal maps
  int id = -1;                        // index in bundle.maps
  uint32_t bpf_type = 0;              // BPF_MAP_TYPE_*
  llvm::GlobalVariable *gv = nullptr;
  ast::Type key;   // as stored (None: the u64 0 of scalar maps)
  ast::Type value; // one slot as stored
};

class IRGen {
public:
  IRGen(ast::ASTContext &ast, const Options &opts);
  ~IRGen();
  Result<Output> run();

  // ---- irgen.cpp: module, probes, variables, memory helpers ----
  void declare_maps();
  void gen_probe(ast::Probe &p, size_t index);
  static runtime::ProbeKind runtime_kind(ast::ProbeKind k);
  void finish_module();
  // Memory for a temporary, valid for the whole function: a stack slot, or
  // for large ones a piece of the temps area. `stack_only` for memory that
  // holds BPF pointers (a for loop's context block): only the stack may.
  llvm::Value *entry_alloca(uint32_t size, const std::string &name,
                            bool stack_only = false);
  // Whether `size` more bytes of stack-only memory leave the BPF stack
  // room for LLVM's own spills.
  bool stack_fits(uint32_t size) const;
  llvm::Value *var_slot(const std::string &name);
  void collect_vars(ast::Block &body);
  void zero(llvm::Value *ptr, uint32_t size);
  void copy(llvm::Value *dst, llvm::Value *src, uint32_t size);
  llvm::Value *byte_ptr(llvm::Value *base, uint64_t offset);
  llvm::Value *load_int(llvm::Value *ptr, const ast::Type &t);
  void store_int(llvm::Value *ptr, llvm::Value *v, const ast::Type &t);
  // Stores `v` (of type `from`) into memory of type `to` (widening
  // integers, padding strings).
  void store_value(llvm::Value *dst, const ast::Type &to, Val v,
                   const ast::Type &from);
  // A value of type `t` as memory (spills scalars to a stack slot).
  llvm::Value *to_mem(Val v, const ast::Type &t);
  llvm::Value *helper(int id, llvm::Type *ret, std::vector<llvm::Value *> args);
  llvm::Value *i64(uint64_t v) { return b_.getInt64(v); }
  llvm::Type *i64t() { return b_.getInt64Ty(); }
  llvm::Type *ptrt() { return b_.getPtrTy(); }
  llvm::BasicBlock *block(const std::string &name);
  static bool is_scalar(const ast::Type &t);
  static ast::Type storage_type(const ast::Type &t);

  // ---- irgen_exprs.cpp ----
  Val gen(ast::Expr *e);
  llvm::Value *gen_scalar(ast::Expr *e); // an i64
  llvm::Value *gen_cond(ast::Expr *e);   // an i1
  Val gen_binop(ast::Binop &e);
  // `/` and `%` as bpftrace runs them (see the definition).
  llvm::Value *gen_division(ast::Binop &e, llvm::Value *l, llvm::Value *r,
                            bool sign);
  // Signed division without BPF's missing sdiv: divides the magnitudes.
  llvm::Value *signed_div(llvm::Value *l, llvm::Value *r);
  static bool both_constant(llvm::Value *a, llvm::Value *b);
  Val gen_unop(ast::Unop &e);
  Val gen_ternary(ast::Ternary &e);
  Val gen_field(ast::FieldAccess &e);
  Val gen_index(ast::ArrayAccess &e);
  Val gen_cast(ast::Cast &e);
  Val arg_value(int n, const ast::Location &loc, const std::string &name);
  Val place_value(const ast::ArgPlace &at, const ast::Location &loc,
                  const std::string &name);
  Val gen_tuple(ast::Expr &e, const std::vector<ast::Expr *> &elems);
  Val gen_identifier(ast::Identifier &e);
  Val gen_string_literal(const std::string &s, uint32_t size);
  llvm::Value *gen_memcmp_eq(llvm::Value *a, llvm::Value *b, uint32_t size,
                             bool strings);
  // A read of the traced process's memory; with loc, a failure is reported
  // there under -k.
  llvm::Value *probe_read(llvm::Value *dst, uint32_t size, llvm::Value *src,
                          const ast::Location *loc = nullptr);
  // `probe` as a string: its name from the probe-names map.
  Val probe_text(ast::Expr *probe);
  // -k: if `failed`, an EventType::HelperError naming the helper and loc,
  // with retcode.
  void check_helper(llvm::Value *failed, llvm::Value *retcode,
                    int32_t helper_id, const char *name,
                    const ast::Location &loc);

  // ---- irgen_maps.cpp ----
  MapGen &map_of(const std::string &name);
  llvm::Value *gen_key(ast::Map &m, MapGen &mg);
  llvm::Value *gen_key_from(ast::Expr *key, MapGen &mg,
                            const ast::Location &loc);
  Val gen_map_read(ast::Map &m);
  void gen_map_assign(ast::AssignMap &s);
  void gen_aggregate(ast::Map &m, ast::Call &c);
  // A pointer to the caller's slot of `key` in `mg`, creating the entry
  // (zeroed) when missing; null when the map is full.
  llvm::Value *lookup_or_init(MapGen &mg, llvm::Value *key);
  llvm::Value *sum_slots(MapGen &mg, llvm::Value *key);
  Val gen_incdec(ast::Unop &e);

  // ---- irgen_calls.cpp: the dispatch by builtin, builtin variables ----
  Val gen_call(ast::Call &c);
  Val gen_builtin(ast::BuiltinVar var, int index, const std::string &name,
                  ast::Expr &e);
  // A u64 of the globals map's value (abi::Globals, then uaddr values).
  llvm::Value *globals_field(uint32_t offset);
  // The integer of type `t` at p + offset, or 0 when p (a map lookup's
  // result) is null.
  llvm::Value *load_or_zero(llvm::Value *p, const ast::Type &t,
                            uint32_t offset = 0);
  // Element `idx` (esize bytes each) of the array at address `base` in the
  // traced process, read safely.
  Val read_element(llvm::Value *base, llvm::Value *idx, uint32_t esize,
                   const ast::Type &elem, const ast::Location &loc);
  llvm::Value *tseries_now(const ast::Location &loc);
  void gen_tseries(MapGen &mg, llvm::Value *p, llvm::Value *arg,
                   const ast::Type &t, const ast::Location &loc);
  // ---- irgen_calls_format.cpp ----
  Val gen_printf(ast::Call &c);
  Val gen_errorf(ast::Call &c);
  Val gen_system(ast::Call &c);
  Val gen_cat(ast::Call &c);
  // ---- irgen_calls_maps.cpp ----
  Val gen_clear_zero(ast::Call &c);
  Val gen_delete_has_key(ast::Call &c);
  Val gen_len(ast::Call &c);
  // ---- irgen_calls_strings.cpp ----
  Val gen_time(ast::Call &c);
  Val gen_strftime(ast::Call &c);
  Val gen_str(ast::Call &c);
  Val gen_buf(ast::Call &c);
  Val gen_strncmp(ast::Call &c);
  Val gen_strlen(ast::Call &c);
  Val gen_strcontains(ast::Call &c);
  // ---- irgen_calls_system.cpp ----
  Val gen_exit(ast::Call &c);
  Val gen_usym(ast::Call &c);
  Val gen_passthrough(ast::Call &c);
  Val gen_reg(ast::Call &c);
  Val gen_ntop(ast::Call &c);
  Val gen_pton(ast::Call &c);
  Val gen_macaddr(ast::Call &c);
  Val gen_cgroupid(ast::Call &c);
  Val gen_bswap(ast::Call &c);
  Val gen_nsecs(ast::Call &c);
  Val gen_signal(ast::Call &c);
  Val gen_write_user(ast::Call &c);
  Val gen_assert(ast::Call &c);
  Val gen_static_assert(ast::Call &c);
  Val gen_uaddr(ast::Call &c);

  // ---- irgen_events.cpp ----
  llvm::Value *scratch(uint32_t size);
  // A format whose messages point at `loc` (errorf, warnf, runtime warnings).
  // loc and the macro calls it was expanded at, as the bundle keeps them.
  static std::vector<runtime::SourceSite> sites_of(const ast::Location &loc);
  runtime::FormatSpec located_format(const ast::Location &loc,
                                     std::string format);
  void emit_event(llvm::Value *buf, uint32_t size);
  void gen_format_event(abi::EventType type,
                        std::vector<runtime::FormatSpec> &table, ast::Call &c);
  void gen_simple_event(abi::EventType type, uint64_t id,
                        std::vector<llvm::Value *> extra = {});
  Val gen_print(ast::Call &c);
  Val gen_join(ast::Call &c);

  // ---- irgen_stmts.cpp ----
  void gen_block(ast::Block &b);
  void gen_stmt(ast::Stmt *s);
  void gen_if(ast::If &s);
  void gen_while(ast::While &s);
  void gen_for(ast::For &s);
  void gen_return();

  // ---- btf.cpp: BTF-defined map globals ----
  void define_map_global(MapGen &mg);
  llvm::DIType *di_bytes(uint32_t size);
  llvm::DIType *di_int();

  // ---- state ----
  ast::ASTContext &ast_;
  Options opts_;
  std::unique_ptr<llvm::LLVMContext> llctx_;
  std::unique_ptr<llvm::Module> mod_;
  llvm::IRBuilder<> b_;
  std::unique_ptr<llvm::DIBuilder> di_;
  llvm::DICompileUnit *cu_ = nullptr;
  llvm::DIFile *difile_ = nullptr;
  runtime::Bundle bundle_;
  std::map<std::string, MapGen> maps_;
  std::vector<std::string> map_order_; // user maps, in id order
  uint32_t scratch_size_ = 64;
  // Large temporaries (stacks, big strings and buffers) live in entry 1 of
  // the scratch map instead of the 512-byte BPF stack: each gets a fixed
  // offset there, per probe (a probe's for-loop callbacks continue after it).
  uint32_t temps_off_ = 0;  // next free offset in the current probe
  uint32_t temps_size_ = 0; // the largest over all probes
  uint32_t stack_used_ = 0; // bytes of stack slots in the current probe
  llvm::Value *temps_base_ = nullptr; // current function's entry-1 pointer
  llvm::Value *temps_ptr(uint32_t size);
  // Closes the entry block: the temps lookup (if any) and a branch to body.
  void finish_entry(llvm::BasicBlock *body);
  uint32_t ncpus_ = 1;

  // Current function.
  llvm::Function *fn_ = nullptr;
  llvm::Value *ctx_ = nullptr;
  llvm::BasicBlock *entry_ = nullptr;
  bool gpu_ = false;
  bool usdt_ = false;       // every attach point of the probe is usdt
  bool mixed_usdt_ = false; // some are, some are not
  // Every attach point is a uretprobe: `args` reads the registers the hook
  // kept at the function's entry (abi::kCtxEntryArgs); set once it does.
  bool at_return_ = false;
  bool returns_value_ = false; // `return N` sets r0 (bench probes)
  bool reads_entry_args_ = false;
  std::set<std::string>
      probe_targets_; // binaries of the user-space attach points
  std::map<std::string, llvm::Value *> vars_; // name -> slot pointer
  std::map<std::string, ast::Type> var_types_;
  struct Loop {
    llvm::BasicBlock *brk;
    llvm::BasicBlock *cont;
    bool callback; // a for loop's callback: break/continue return
  };
  std::vector<Loop> loops_;
  // Inside a for loop's callback: where `return` records itself.
  llvm::Value *returned_flag_ = nullptr;
  std::string error_;
  void fail(const ast::Location &loc, const std::string &msg);
  // Each generated function's place in the script (a probe's attach
  // points, a for loop), for errors LLVM's backend reports by function.
  std::map<std::string, ast::Location> fn_locs_;
  void report_backend_errors(const std::vector<BackendError> &errors);
};

} // namespace ubtrace::codegen
