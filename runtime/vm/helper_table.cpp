#include "runtime/abi.h"
#include "runtime/vm/helpers.h"

#include <linux/bpf.h>

namespace ubtrace::vm {

HelperTable::HelperTable(std::vector<HelperProto> protos) {
  for (HelperProto &p : protos)
    add(std::move(p));
}

void HelperTable::add(HelperProto proto) {
  if (proto.id < 0)
    return;
  size_t id = static_cast<size_t>(proto.id);
  if (id >= index_by_id_.size())
    index_by_id_.resize(id + 1, -1);
  if (index_by_id_[id] >= 0) {
    protos_[index_by_id_[id]] = std::move(proto);
    return;
  }
  index_by_id_[id] = static_cast<int32_t>(protos_.size());
  protos_.push_back(std::move(proto));
}

const HelperProto *HelperTable::find(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= index_by_id_.size() ||
      index_by_id_[id] < 0)
    return nullptr;
  return &protos_[index_by_id_[id]];
}

const HelperTable &standard_helpers() {
  using A = ArgKind;
  using R = RetKind;
  static const HelperTable table({
      {BPF_FUNC_map_lookup_elem,
       "map_lookup_elem",
       R::MapValueOrNull,
       {A::MapPtr, A::MapKey}},
      {BPF_FUNC_map_update_elem,
       "map_update_elem",
       R::Integer,
       {A::MapPtr, A::MapKey, A::MapValue, A::Scalar}},
      {BPF_FUNC_map_delete_elem,
       "map_delete_elem",
       R::Integer,
       {A::MapPtr, A::MapKey}},
      {BPF_FUNC_probe_read,
       "probe_read",
       R::Integer,
       {A::WritableMem, A::SizeOrZero, A::Anything}},
      {BPF_FUNC_ktime_get_ns, "ktime_get_ns", R::Integer, {}},
      // The format's arguments (r3..r5) are as many as it needs: unchecked.
      {BPF_FUNC_trace_printk,
       "trace_printk",
       R::Integer,
       {A::ReadableMem, A::Size}},
      {BPF_FUNC_get_prandom_u32, "get_prandom_u32", R::Integer, {}},
      {BPF_FUNC_get_smp_processor_id, "get_smp_processor_id", R::Integer, {}},
      {BPF_FUNC_get_current_pid_tgid, "get_current_pid_tgid", R::Integer, {}},
      {BPF_FUNC_get_current_uid_gid, "get_current_uid_gid", R::Integer, {}},
      {BPF_FUNC_get_current_comm,
       "get_current_comm",
       R::Integer,
       {A::WritableMem, A::Size}},
      {abi::kHelperRelatedComm,
       "ubt_related_comm",
       R::Integer,
       {A::WritableMem, A::Size, A::Scalar}},
      {abi::kHelperPpid, "ubt_ppid", R::Integer, {}},
      {abi::kHelperInitialPidTgid, "ubt_initial_pid_tgid", R::Integer, {}},
      {BPF_FUNC_perf_event_output,
       "perf_event_output",
       R::Integer,
       {A::Ctx, A::PerfEventMapPtr, A::Scalar, A::ReadableMem, A::SizeOrZero}},
      {BPF_FUNC_get_stackid,
       "get_stackid",
       R::Integer,
       {A::Ctx, A::StackTraceMapPtr, A::Scalar}},
      {BPF_FUNC_get_current_task, "get_current_task", R::Integer, {}},
      {BPF_FUNC_get_numa_node_id, "get_numa_node_id", R::Integer, {}},
      {BPF_FUNC_probe_read_str,
       "probe_read_str",
       R::Integer,
       {A::WritableMem, A::Size, A::Anything}},
      {BPF_FUNC_get_current_cgroup_id, "get_current_cgroup_id", R::Integer, {}},
      {BPF_FUNC_get_stack,
       "get_stack",
       R::Integer,
       {A::Ctx, A::WritableMem, A::SizeOrZero, A::Scalar}},
      {BPF_FUNC_send_signal, "send_signal", R::Integer, {A::Scalar}},
      {BPF_FUNC_probe_read_user,
       "probe_read_user",
       R::Integer,
       {A::WritableMem, A::SizeOrZero, A::Anything}},
      {BPF_FUNC_probe_read_kernel,
       "probe_read_kernel",
       R::Integer,
       {A::WritableMem, A::SizeOrZero, A::Anything}},
      {BPF_FUNC_probe_read_user_str,
       "probe_read_user_str",
       R::Integer,
       {A::WritableMem, A::Size, A::Anything}},
      {BPF_FUNC_probe_read_kernel_str,
       "probe_read_kernel_str",
       R::Integer,
       {A::WritableMem, A::Size, A::Anything}},
      {BPF_FUNC_probe_write_user,
       "probe_write_user",
       R::Integer,
       {A::Anything, A::ReadableMem, A::SizeOrZero}},
      {BPF_FUNC_jiffies64, "jiffies64", R::Integer, {}},
      {BPF_FUNC_ktime_get_boot_ns, "ktime_get_boot_ns", R::Integer, {}},
      {BPF_FUNC_ringbuf_query,
       "ringbuf_query",
       R::Integer,
       {A::RingbufMapPtr, A::Scalar}},
      {BPF_FUNC_ringbuf_output,
       "ringbuf_output",
       R::Integer,
       {A::RingbufMapPtr, A::ReadableMem, A::SizeOrZero, A::Scalar}},
      {BPF_FUNC_ringbuf_reserve,
       "ringbuf_reserve",
       R::RingbufMemOrNull,
       {A::RingbufMapPtr, A::ConstAllocSize, A::Scalar}},
      {BPF_FUNC_ringbuf_submit,
       "ringbuf_submit",
       R::Integer,
       {A::RingbufMem, A::Scalar}},
      {BPF_FUNC_ringbuf_discard,
       "ringbuf_discard",
       R::Integer,
       {A::RingbufMem, A::Scalar}},
      {BPF_FUNC_for_each_map_elem,
       "for_each_map_elem",
       R::Integer,
       {A::MapPtr, A::Callback, A::CallbackCtx, A::Scalar},
       CallbackKind::ForEachMapElem},
      {BPF_FUNC_snprintf,
       "snprintf",
       R::Integer,
       {A::WritableMem, A::SizeOrZero, A::ConstString, A::ReadableMemOrNull,
        A::SizeOrZero}},
      {BPF_FUNC_get_func_ip, "get_func_ip", R::Integer, {A::Ctx}},
      {BPF_FUNC_get_attach_cookie, "get_attach_cookie", R::Integer, {A::Ctx}},
      {BPF_FUNC_loop,
       "loop",
       R::Integer,
       {A::Scalar, A::Callback, A::CallbackCtx, A::Scalar},
       CallbackKind::Loop},
      {BPF_FUNC_strncmp,
       "strncmp",
       R::Integer,
       {A::ReadableMem, A::Size, A::ConstString}},
      {BPF_FUNC_map_lookup_percpu_elem,
       "map_lookup_percpu_elem",
       R::MapValueOrNull,
       {A::MapPtr, A::MapKey, A::Scalar}},
      {BPF_FUNC_ktime_get_tai_ns, "ktime_get_tai_ns", R::Integer, {}},
  });
  return table;
}

} // namespace ubtrace::vm
