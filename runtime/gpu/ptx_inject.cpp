#include "runtime/gpu/ptx_inject.h"

#include "runtime/gpu/content_hash.h"
#include "runtime/gpu/kernel_match.h"
#include "runtime/gpu/probe_abi.h"
#include "runtime/gpu/ptx_merge.h"
#include "runtime/gpu/text_edits.h"

#include <cstdio>

namespace ubtrace::runtime::gpu {
namespace {

constexpr std::string_view kContextName = "__ubt_ctx";
// cvta.param (generic addresses of kernel parameters) needs PTX ISA 7.7
// and sm_70.
constexpr uint32_t kParamAddressMajor = 7, kParamAddressMinor = 7;
constexpr uint32_t kParamAddressSm = 70;

// A probe to call, resolved against the probe module.
struct ProbeCall {
  std::string function; // name in the merged module
  bool takes_context = false;
  uint64_t arg_mask = 0;
};

std::string hex64(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx",
                static_cast<unsigned long long>(value));
  return buf;
}

Result<bool> probe_takes_context(const PtxModule &probe,
                                 std::string_view name) {
  const PtxFunction *fn = probe.find_function(name);
  if (fn == nullptr || fn->is_entry || !fn->has_body)
    return make_error("probe PTX defines no .func " + std::string(name));
  if (!fn->returns.empty())
    return make_error("probe .func " + std::string(name) +
                      " must not return a value");
  if (fn->params.empty())
    return false;
  const PtxParam &p = fn->params.front();
  if (fn->params.size() > 1 || p.is_array() ||
      (p.type != ".b64" && p.type != ".u64" && p.type != ".s64"))
    return make_error("probe .func " + std::string(name) +
                      " must take no parameter or one 64-bit context "
                      "pointer");
  return true;
}

// How a kernel parameter is loaded into the 64-bit slot.
enum class ParamLoad : uint8_t { Value, Address, Zero };

ParamLoad param_load(const PtxParam &p, bool can_address,
                     std::string_view &load_type) {
  std::string_view t = p.type;
  if (p.is_array() || t == ".b128")
    return can_address ? ParamLoad::Address : ParamLoad::Zero;
  if (t == ".u8" || t == ".u16" || t == ".u32" || t == ".u64" || t == ".s8" ||
      t == ".s16" || t == ".s32" || t == ".s64" || t == ".b8" || t == ".b16" ||
      t == ".b32" || t == ".b64") {
    load_type = t;
    return ParamLoad::Value;
  }
  if (t == ".f32" || t == ".f16x2" || t == ".bf16x2") {
    load_type = ".b32";
    return ParamLoad::Value;
  }
  if (t == ".f64") {
    load_type = ".b64";
    return ParamLoad::Value;
  }
  if (t == ".f16" || t == ".bf16") {
    load_type = ".b16";
    return ParamLoad::Value;
  }
  return ParamLoad::Zero; // .texref, .samplerref, .surfref, unknown
}

struct SiteCode {
  std::string text;
  bool uses_context = false;
};

// The blanks that indent the line holding `offset` up to it ("" when
// something else precedes it on its line).
std::string_view indent_at(std::string_view text, size_t offset) {
  size_t start = offset;
  while (start > 0 && (text[start - 1] == ' ' || text[start - 1] == '\t'))
    --start;
  if (start > 0 && text[start - 1] != '\n')
    return "";
  return text.substr(start, offset - start);
}

// The `{ }` block that calls `calls` at one site of `kernel`. It is
// inserted where a statement starts, after that statement's indentation:
// its lines take the same indentation and it ends with it again, so the
// statement keeps its own.
SiteCode site_block(const PtxFunction &kernel, uint64_t kernel_id,
                    ProbeSite site, std::string_view guard,
                    const std::vector<const ProbeCall *> &calls,
                    bool can_address, std::string_view indent) {
  uint64_t mask = 0;
  bool context = false;
  for (const ProbeCall *c : calls) {
    context |= c->takes_context;
    if (c->takes_context)
      mask |= c->arg_mask;
  }
  std::string g = guard.empty() ? "" : std::string(guard) + " ";
  const char *site_name = site == ProbeSite::Entry ? "entry" : "exit";
  std::string out =
      "{ // ubtrace: kernel " + std::string(site_name) + " probes";
  auto line = [&](const std::string &text) {
    out += "\n";
    out += indent;
    out += text;
  };
  std::string ctx(kContextName);
  auto store = [&](uint32_t offset) {
    line("st.local.u64 [" + ctx + "+" + std::to_string(offset) + "], %ubt_v;");
  };
  if (context) {
    uint32_t site_id =
        site == ProbeSite::Entry ? UBT_GPU_SITE_ENTRY : UBT_GPU_SITE_EXIT;
    uint64_t count_and_site =
        (uint64_t{site_id} << 32) | static_cast<uint32_t>(kernel.params.size());
    line(".reg .b64 %ubt_v;");
    line("mov.u64 %ubt_v, " + hex64(kernel_id) + ";");
    store(UBT_GPU_CTX_KERNEL_ID_OFFSET);
    line("mov.u64 %ubt_v, " + hex64(count_and_site) + ";");
    store(UBT_GPU_CTX_ARG_COUNT_OFFSET);
    for (size_t i = 0; i < kernel.params.size(); ++i) {
      if (i < 64 && !(mask & (uint64_t{1} << i)))
        continue;
      const PtxParam &p = kernel.params[i];
      std::string_view load_type;
      std::string name(p.name);
      switch (param_load(p, can_address, load_type)) {
      case ParamLoad::Value:
        line("ld.param" + std::string(load_type) + " %ubt_v, [" + name + "];");
        break;
      case ParamLoad::Address:
        line("mov.u64 %ubt_v, " + name + ";");
        line("cvta.param.u64 %ubt_v, %ubt_v;");
        break;
      case ParamLoad::Zero:
        line("mov.u64 %ubt_v, 0;");
        break;
      }
      store(static_cast<uint32_t>(UBT_GPU_CTX_ARGS_OFFSET + 8 * i));
    }
    line("mov.u64 %ubt_v, " + ctx + ";");
    line("cvta.local.u64 %ubt_v, %ubt_v;");
  }
  for (const ProbeCall *c : calls) {
    if (!c->takes_context) {
      line(g + "call " + c->function + ";");
      continue;
    }
    line("{");
    line(".param .b64 __ubt_arg;");
    line("st.param.b64 [__ubt_arg], %ubt_v;");
    line(g + "call " + c->function + ", (__ubt_arg);");
    line("}");
  }
  line("}");
  out += "\n";
  out += indent;
  return SiteCode{std::move(out), context};
}

bool needs_param_address(const PtxFunction &kernel,
                         const std::vector<const ProbeCall *> &calls) {
  uint64_t mask = 0;
  for (const ProbeCall *c : calls)
    if (c->takes_context)
      mask |= c->arg_mask;
  for (size_t i = 0; i < kernel.params.size() && i < 64; ++i)
    if ((mask & (uint64_t{1} << i)) &&
        (kernel.params[i].is_array() || kernel.params[i].type == ".b128"))
      return true;
  return false;
}

bool version_less(uint32_t a_major, uint32_t a_minor, uint32_t b_major,
                  uint32_t b_minor) {
  return a_major != b_major ? a_major < b_major : a_minor < b_minor;
}

} // namespace

Result<InjectionResult> inject_probes(std::string_view module_ptx,
                                      const ProbeProgram &program) {
  auto probe = parse_ptx(program.ptx);
  if (!probe)
    return make_error("probe PTX: " + probe.error());
  return inject_probes(module_ptx, *probe, program);
}

Result<InjectionResult> inject_probes(std::string_view module_ptx,
                                      const PtxModule &probe,
                                      const ProbeProgram &program) {
  InjectionResult result;
  auto parsed = parse_ptx(module_ptx);
  if (!parsed)
    return std::move(parsed).take_error();
  const PtxModule &module = *parsed;
  result.version_major = module.version_major;
  result.version_minor = module.version_minor;

  // Which probes go where, before touching anything.
  std::vector<ProbeCall> calls(program.attachments.size());
  for (size_t i = 0; i < program.attachments.size(); ++i) {
    auto takes = probe_takes_context(probe, program.attachments[i].function);
    if (!takes)
      return std::move(takes).take_error();
    calls[i].takes_context = *takes;
    calls[i].arg_mask = program.attachments[i].arg_mask;
  }
  struct KernelPlan {
    const PtxFunction *fn;
    InstrumentedKernel info;
    std::vector<const ProbeCall *> entry, exit;
  };
  std::vector<KernelPlan> plans;
  for (const PtxFunction &fn : module.functions) {
    if (!fn.is_entry || !fn.has_body)
      continue;
    KernelNames names = kernel_names(fn.name);
    KernelPlan plan{&fn, {}, {}, {}};
    for (size_t i = 0; i < program.attachments.size(); ++i) {
      const ProbeAttachment &a = program.attachments[i];
      if (!kernel_matches(a.kernel_pattern, names))
        continue;
      (a.site == ProbeSite::Entry ? plan.entry : plan.exit)
          .push_back(&calls[i]);
    }
    if (plan.entry.empty() && plan.exit.empty())
      continue;
    plan.info.name = std::string(fn.name);
    plan.info.kernel_id = fnv1a64(fn.name);
    plans.push_back(std::move(plan));
  }
  if (plans.empty()) {
    result.ptx = std::string(module_ptx);
    return result;
  }
  if (module_ptx.find(kContextName) != std::string_view::npos)
    return make_error("module already holds ubtrace probes (" +
                      std::string(kContextName) + ")");

  auto merge = plan_probe_merge(module, probe);
  if (!merge)
    return std::move(merge).take_error();
  for (size_t i = 0; i < calls.size(); ++i)
    calls[i].function = merge->name_in_module(program.attachments[i].function);

  uint32_t major = merge->version_major, minor = merge->version_minor;
  bool can_address =
      module.target_sm() == 0 || module.target_sm() >= kParamAddressSm;
  std::vector<TextEdit> edits;
  for (KernelPlan &plan : plans) {
    const PtxFunction &fn = *plan.fn;
    bool context = false;
    if (!plan.entry.empty()) {
      SiteCode code =
          site_block(fn, plan.info.kernel_id, ProbeSite::Entry, "", plan.entry,
                     can_address, indent_at(module_ptx, fn.code_begin));
      context |= code.uses_context;
      edits.push_back({fn.code_begin, 0, std::move(code.text), 0});
      plan.info.entry_calls = static_cast<uint32_t>(plan.entry.size());
    }
    if (!plan.exit.empty()) {
      for (const PtxExit &site : fn.exits) {
        SiteCode code = site_block(fn, plan.info.kernel_id, ProbeSite::Exit,
                                   site.guard, plan.exit, can_address,
                                   indent_at(module_ptx, site.offset));
        context |= code.uses_context;
        edits.push_back({site.offset, 0, std::move(code.text), 1});
        ++plan.info.exit_sites;
        plan.info.exit_calls += static_cast<uint32_t>(plan.exit.size());
      }
    }
    if (context) {
      size_t bytes = UBT_GPU_CTX_ARGS_OFFSET + 8 * fn.params.size();
      edits.push_back({fn.body_open + 1, 0,
                       "\n\t.local .align 8 .b8 " + std::string(kContextName) +
                           "[" + std::to_string(bytes) + "];",
                       0});
    }
    bool address = can_address && (needs_param_address(fn, plan.entry) ||
                                   needs_param_address(fn, plan.exit));
    if (address &&
        version_less(major, minor, kParamAddressMajor, kParamAddressMinor)) {
      major = kParamAddressMajor;
      minor = kParamAddressMinor;
    }
    result.kernels.push_back(plan.info);
  }
  if (major != module.version_major || minor != module.version_minor)
    edits.push_back({module.version_begin,
                     module.version_end - module.version_begin,
                     std::to_string(major) + "." + std::to_string(minor), 0});
  edits.push_back({module.header_end, 0, merge->text, 0});
  result.ptx = apply_edits(module_ptx, std::move(edits));
  result.version_major = major;
  result.version_minor = minor;
  result.renamed = merge->renamed;
  return result;
}

} // namespace ubtrace::runtime::gpu
