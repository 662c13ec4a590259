#include "runtime/agent/gpu/gpu_runtime.h"

#include "runtime/agent/agent_thread.h"
#include "runtime/agent/gpu/device_store.h"
#include "runtime/agent/gpu/gpu_wire.h"
#include "runtime/agent/protocol.h"
#include "runtime/gpu/kernel_match.h"
#include "runtime/gpu/map_table.h"
#include "runtime/gpu/module_rewriter.h"
#include "runtime/maps/region.h"
#include "runtime/symbols/library_names.h"

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <fcntl.h>
#include <map>
#include <memory>
#include <poll.h>
#include <pthread.h>
#include <set>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace ubtrace::agent {
runtime::maps::Region *agent_region(); // agent.cpp
OwnedFd agent_take_gpu_channel();      // agent.cpp
} // namespace ubtrace::agent

namespace ubtrace::agent::gpu {
namespace {

using dlsym_fn = void *(*)(void *, const char *);

// libc's dlsym, not the interposer in libubtrace_preload.so (which hands
// out wrappers for the very functions the agent needs to call itself).
dlsym_fn real_dlsym() {
  static dlsym_fn fn = [] {
    void *f = dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34");
    if (!f)
      f = dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5");
    return reinterpret_cast<dlsym_fn>(f);
  }();
  return fn;
}

uint64_t now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}

std::string real_path(const std::string &path) {
  char buf[PATH_MAX];
  if (!path.empty() && realpath(path.c_str(), buf))
    return buf;
  return path;
}

// Which loaded object an image lives in (the file named in a load call, or
// the executable or library holding the embedded fatbin).
std::string object_of(const void *image, const char *path) {
  if (path)
    return real_path(path);
  Dl_info info{};
  if (dladdr(image, &info) && info.dli_fname && info.dli_fname[0]) {
    std::string name = real_path(info.dli_fname);
    if (!name.empty() && name[0] == '/')
      return name;
  }
  return real_path("/proc/self/exe");
}

class Lock {
public:
  explicit Lock(pthread_mutex_t &m) : m_(m) { pthread_mutex_lock(&m_); }
  ~Lock() { pthread_mutex_unlock(&m_); }

private:
  pthread_mutex_t &m_;
};

} // namespace

struct GpuRuntime::Impl {
  enum class State : uint8_t { Unstarted, Disabled, Ready };

  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; // setup and rewriting
  State state = State::Unstarted;
  // The channel the CLI passed on the agent's (MsgType::GpuChannel), and a
  // pipe that wakes the service thread for a local request. All three in
  // the program's descriptor table: checked before each use (owned_fd.h).
  OwnedFd sock;
  OwnedFd wake_read, wake_write;
  GpuSetup setup;
  DriverCalls cu;
  bool cu_loaded = false;

  // The device side, made at the first code load.
  bool device_ready = false, device_failed = false;
  bool torn_down = false; // the maps' context is gone: no more copies
  CUcontext ctx = nullptr;
  CUdevice device = 0;
  bool retained_primary = false;
  std::unique_ptr<DeviceStore> store;
  std::string baked_ptx;
  uint32_t device_sm = 0;
  // One rewriter per set of attachments (kernel:BIN:NAME's BIN narrows
  // them by the object an image comes from).
  std::map<uint64_t, std::unique_ptr<runtime::gpu::ModuleRewriter>> rewriters;
  std::set<const void *> ours; // images we gave the driver
  std::set<std::string> warned;
  std::set<std::string> named; // kernels reported to the CLI (GpuKernels)
  std::vector<std::unique_ptr<std::vector<uint8_t>>> files; // kept alive
  GpuStatsMsg stats{};

  // Local requests to the service thread (teardown read-backs).
  pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t queue_cv = PTHREAD_COND_INITIALIZER;
  uint64_t requested = 0, served = 0;
  bool serving = false;
  pthread_mutex_t send_mu = PTHREAD_MUTEX_INITIALIZER;

  bool start();
  bool load_driver();
  bool prepare_device();
  runtime::gpu::ModuleRewriter *rewriter_for(const std::string &object);
  void notice(const std::string &text);
  void
  report_kernels(const std::vector<runtime::gpu::InstrumentedKernel> &kernels);
  void reply(int32_t status, const std::vector<uint8_t> &extra = {},
             const std::string &error = "");
  void sync(); // read back + drain, on the service thread
  void serve();
  void handle(const Message &m);
};

GpuRuntime &GpuRuntime::instance() {
  static GpuRuntime runtime;
  return runtime;
}

// Never destroyed: the service thread and the application's own exit
// handlers (cudart's releases its context through our hooks) use it until
// the process is gone. As a static object, exit() ran its destructor
// before cudart's handler, and the service thread, woken for the last
// read-back, called through the freed device store and killed the target.
GpuRuntime::Impl *GpuRuntime::impl() {
  static Impl *const impl = new Impl;
  return impl;
}

const DriverCalls &GpuRuntime::driver() {
  Impl &im = *impl();
  Lock lock(im.mu);
  im.load_driver();
  return im.cu;
}

void *GpuRuntime::driver_symbol(const char *name) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib || !real_dlsym())
    return nullptr;
  return real_dlsym()(lib, name);
}

bool GpuRuntime::Impl::load_driver() {
  if (cu_loaded)
    return cu.cuMemAlloc != nullptr;
  cu_loaded = true;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib)
    lib = dlopen("libcuda.so", RTLD_NOW | RTLD_NOLOAD);
  if (!lib || !real_dlsym())
    return false;
  auto get = [&](auto &slot, const char *name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
        real_dlsym()(lib, name));
  };
  get(cu.cuInit, "cuInit");
  get(cu.cuCtxGetCurrent, "cuCtxGetCurrent");
  get(cu.cuCtxPushCurrent, "cuCtxPushCurrent_v2");
  get(cu.cuCtxPopCurrent, "cuCtxPopCurrent_v2");
  get(cu.cuCtxGetDevice, "cuCtxGetDevice");
  get(cu.cuDeviceGet, "cuDeviceGet");
  get(cu.cuDeviceGetCount, "cuDeviceGetCount");
  get(cu.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  get(cu.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  get(cu.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  get(cu.cuMemAlloc, "cuMemAlloc_v2");
  get(cu.cuMemAllocManaged, "cuMemAllocManaged");
  get(cu.cuMemFree, "cuMemFree_v2");
  get(cu.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  get(cu.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  get(cu.cuMemsetD8, "cuMemsetD8_v2");
  get(cu.cuGetErrorString, "cuGetErrorString");
  return cu.cuCtxGetCurrent && cu.cuCtxPushCurrent && cu.cuCtxPopCurrent &&
         cu.cuCtxGetDevice && cu.cuDeviceGet && cu.cuDevicePrimaryCtxRetain &&
         cu.cuMemAlloc && cu.cuMemcpyHtoD && cu.cuMemcpyDtoH && cu.cuMemsetD8;
}

void GpuRuntime::Impl::notice(const std::string &text) {
  if (!sock.valid())
    return;
  Message m{MsgType::GpuNotice, {}, -1};
  m.payload.assign(text.begin(), text.end());
  Lock lock(send_mu);
  (void)send_message(sock, m);
}

void GpuRuntime::Impl::report_kernels(
    const std::vector<runtime::gpu::InstrumentedKernel> &kernels) {
  Message m{MsgType::GpuKernels, {}, -1};
  for (const runtime::gpu::InstrumentedKernel &k : kernels)
    if (named.insert(k.name).second) {
      m.payload.insert(m.payload.end(), k.name.begin(), k.name.end());
      m.payload.push_back(0);
    }
  if (m.payload.empty() || !sock.valid())
    return;
  Lock lock(send_mu);
  (void)send_message(sock, m);
}

void GpuRuntime::Impl::reply(int32_t status, const std::vector<uint8_t> &extra,
                             const std::string &error) {
  ReplyMsg r{status, 0, 0};
  Message m = Message::of(MsgType::Reply, r);
  m.payload.insert(m.payload.end(), extra.begin(), extra.end());
  m.payload.insert(m.payload.end(), error.begin(), error.end());
  Lock lock(send_mu);
  (void)send_message(sock, m);
}

void *service_thread(void *arg) {
  static_cast<GpuRuntime::Impl *>(arg)->serve();
  return nullptr;
}

// Greets the CLI's GPU backend on the channel it passed, and takes the
// setup. Called with `mu` held, once. No channel: this trace has no GPU
// probes (the agent never looks for one by name), and every image passes
// through untouched.
bool GpuRuntime::Impl::start() {
  if (state != State::Unstarted)
    return state == State::Ready;
  state = State::Disabled;
  if (!agent_region())
    return false; // not traced, or the CLI sent no maps
  OwnedFd fd = agent_take_gpu_channel();
  if (!fd.valid())
    return false;
  HelloMsg hello{kProtocolVersion, uint32_t(getpid()), 0, 0};
  if (!send_message(fd, Message::of(MsgType::GpuHello, hello))) {
    fd.close();
    return false;
  }
  auto m = recv_message(fd, 10000);
  if (!m || m->type != MsgType::GpuSetup) {
    if (m && m->fd >= 0)
      OwnedFd::adopt(m->fd).close();
    fd.close();
    return false;
  }
  auto decoded = decode_setup(m->payload);
  sock = std::move(fd);
  if (!decoded) {
    reply(-EINVAL, {}, decoded.error());
    sock.close();
    return false;
  }
  setup = std::move(*decoded);
  reply(0);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0)
    return false;
  wake_read = OwnedFd::adopt(pipe_fds[0]);
  wake_write = OwnedFd::adopt(pipe_fds[1]);
  if (!agent::start_agent_thread(service_thread, this))
    return false;
  {
    Lock q(queue_mu);
    serving = true;
  }
  state = State::Ready;
  return true;
}

void exit_read_back() {
  GpuRuntime::instance().before_teardown("exit");
}

// The device maps, in the context current at the first load (or device 0's
// primary context, which cudart uses too), and the probe PTX with their
// addresses. Called with `mu` held.
bool GpuRuntime::Impl::prepare_device() {
  if (device_ready || device_failed)
    return device_ready;
  device_failed = true;
  if (!load_driver()) {
    notice("GPU probes disabled: the CUDA driver's entry points were not "
           "found in the process");
    return false;
  }
  bool pushed = false;
  if (cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) {
    if (cu.cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
        cu.cuDevicePrimaryCtxRetain(&ctx, device) != CUDA_SUCCESS) {
      notice("GPU probes disabled: no CUDA context to allocate maps in");
      return false;
    }
    retained_primary = true;
    pushed = cu.cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
  } else if (cu.cuCtxGetDevice(&device) != CUDA_SUCCESS) {
    device = 0;
  }
  int count = 1, major = 0, minor = 0;
  if (cu.cuDeviceGetCount)
    cu.cuDeviceGetCount(&count);
  if (cu.cuDeviceGetAttribute) {
    cu.cuDeviceGetAttribute(
        &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    cu.cuDeviceGetAttribute(
        &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  }
  device_sm = uint32_t(major * 10 + minor);
  store = std::make_unique<DeviceStore>(cu, setup.maps);
  // Several GPUs: kernels on any of them must reach the same maps.
  auto allocated = store->allocate(/*managed=*/count > 1);
  if (pushed) {
    CUcontext popped;
    cu.cuCtxPopCurrent(&popped);
  }
  if (!allocated) {
    notice("GPU probes disabled: " + allocated.error());
    return false;
  }
  std::vector<uint64_t> table = store->table();
  table.resize(setup.map_table_entries, 0);
  auto baked = runtime::gpu::bake_map_table(setup.ptx, table);
  if (!baked) {
    notice("GPU probes disabled: " + baked.error());
    return false;
  }
  baked_ptx = std::move(*baked);
  device_failed = false;
  device_ready = true;
  // After cudart's own atexit handler was registered (it initialised
  // before loading code), so this one runs first, with the context alive.
  atexit(exit_read_back);
  return true;
}

runtime::gpu::ModuleRewriter *
GpuRuntime::Impl::rewriter_for(const std::string &object) {
  uint64_t mask = 0;
  for (size_t i = 0; i < setup.attachments.size() && i < 64; ++i) {
    const std::string &bin = setup.attachments[i].binary;
    // A library by name (`kernel:libfoo.so:*`, `kernel:libfoo:*`) matches
    // the file the module came from by its name, wherever it was loaded
    // from, as uprobes on libraries by name do.
    if (bin.empty() || bin == "*" || real_path(bin) == object ||
        runtime::gpu::glob_match(bin, object) ||
        (runtime::symbols::looks_like_library(bin) &&
         runtime::symbols::library_name_matches(bin, object)))
      mask |= uint64_t(1) << i;
  }
  if (mask == 0)
    return nullptr;
  auto &slot = rewriters[mask];
  if (slot)
    return slot.get();
  runtime::gpu::ProbeProgram program;
  program.ptx = baked_ptx;
  for (size_t i = 0; i < setup.attachments.size() && i < 64; ++i)
    if (mask & (uint64_t(1) << i))
      program.attachments.push_back(setup.attachments[i].attachment);
  runtime::gpu::RewriteOptions options;
  options.device_sm = device_sm;
  auto made = runtime::gpu::ModuleRewriter::create(std::move(program), options);
  if (!made) {
    notice("GPU probes cannot be injected: " + made.error());
    rewriters.erase(mask);
    return nullptr;
  }
  slot = std::move(*made);
  return slot.get();
}

const void *GpuRuntime::image_for_driver(const void *image, const char *path) {
  Impl &im = *impl();
  if (!image)
    return image;
  Lock lock(im.mu);
  if (!im.start() || im.ours.count(image))
    return image;
  im.stats.modules_seen++;
  if (!im.prepare_device())
    return image;
  std::string object = object_of(image, path);
  runtime::gpu::ModuleRewriter *rewriter = im.rewriter_for(object);
  if (!rewriter)
    return image;
  auto result = rewriter->rewrite(image);
  if (!result) {
    im.stats.modules_failed++;
    im.notice("a CUDA module of " + object + " cannot be read: " +
              result.error() + "; its kernels run unprobed");
    return image;
  }
  const runtime::gpu::RewrittenImage &out = **result;
  switch (out.outcome) {
  case runtime::gpu::RewriteOutcome::Instrumented:
    im.stats.modules_instrumented++;
    im.stats.kernels_instrumented += out.kernels.size();
    im.report_kernels(out.kernels);
    im.ours.insert(out.driver_image());
    im.ours.insert(out.image.data());
    return out.driver_image();
  case runtime::gpu::RewriteOutcome::NoMatch:
    return image;
  case runtime::gpu::RewriteOutcome::NoPtx:
    im.stats.modules_without_ptx++;
    if (im.warned.insert(object + ":noptx").second)
      im.notice("a CUDA module of " + object +
                " has no PTX (SASS only): its kernels run unprobed; rebuild "
                "it with PTX (nvcc -gencode arch=compute_XX,code=compute_XX) "
                "to trace them");
    return image;
  case runtime::gpu::RewriteOutcome::Failed:
    im.stats.modules_failed++;
    if (im.warned.insert(object + ":" + out.note).second)
      im.notice("a CUDA module of " + object + " cannot be instrumented (" +
                out.note + "): its kernels run unprobed");
    return image;
  }
  return image;
}

bool GpuRuntime::holds_maps(CUcontext ctx) {
  Impl &im = *impl();
  Lock lock(im.mu);
  return im.device_ready && !im.torn_down && ctx == im.ctx;
}

bool GpuRuntime::holds_maps_on(CUdevice device) {
  Impl &im = *impl();
  Lock lock(im.mu);
  return im.device_ready && !im.torn_down && device == im.device;
}

void GpuRuntime::launched() {
  __atomic_add_fetch(&impl()->stats.launches, 1, __ATOMIC_RELAXED);
}

// Service thread only: the device's maps into the region, its events into
// the region's ring.
void GpuRuntime::Impl::sync() {
  runtime::maps::Region *region = agent_region();
  {
    Lock lock(mu);
    if (!device_ready || torn_down || !region)
      return;
  }
  if (cu.cuCtxPushCurrent(ctx) != CUDA_SUCCESS)
    return;
  auto back = store->read_back(*region);
  auto drained = store->drain_ring(*region);
  CUcontext popped;
  cu.cuCtxPopCurrent(&popped);
  stats.readbacks++;
  if (drained) {
    stats.events += drained->records;
    stats.events_lost += drained->lost;
  }
  if (!back)
    notice("GPU maps could not be read back: " + back.error());
  else if (!drained)
    notice("GPU events could not be read: " + drained.error());
}

void GpuRuntime::before_teardown(const char *why) {
  Impl &im = *impl();
  {
    Lock lock(im.mu);
    if (im.state != Impl::State::Ready || !im.device_ready || im.torn_down)
      return;
  }
  // The service thread does the copy (one thread slot for every
  // read-back); wait for it, bounded.
  Lock q(im.queue_mu);
  if (!im.serving)
    return;
  uint64_t ticket = ++im.requested;
  char one = 1;
  if (im.wake_write.usable())
    (void)!write(im.wake_write.get(), &one, 1);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 10;
  while (im.served < ticket && im.serving)
    if (pthread_cond_timedwait(&im.queue_cv, &im.queue_mu, &deadline) != 0)
      break;
  (void)why;
  // Our own hold on the primary context goes too, so the application's
  // release really tears it down.
  Lock lock(im.mu);
  if (im.retained_primary && im.cu.cuDevicePrimaryCtxRelease) {
    im.retained_primary = false;
    im.cu.cuDevicePrimaryCtxRelease(im.device);
  }
}

void GpuRuntime::Impl::handle(const Message &m) {
  switch (m.type) {
  case MsgType::GpuSync:
    sync();
    reply(0);
    return;
  case MsgType::GpuClear: {
    GpuClearMsg c{};
    if (!m.read(c)) {
      reply(-EINVAL, {}, "malformed clear request");
      return;
    }
    bool ok = true;
    std::string error;
    {
      Lock lock(mu);
      if (device_ready && !torn_down &&
          cu.cuCtxPushCurrent(ctx) == CUDA_SUCCESS) {
        auto done = store->clear(c.map, c.zero != 0);
        CUcontext popped;
        cu.cuCtxPopCurrent(&popped);
        if (!done) {
          ok = false;
          error = done.error();
        }
      }
    }
    reply(ok ? 0 : -EIO, {}, error);
    return;
  }
  case MsgType::GpuStats: {
    std::vector<uint8_t> extra(sizeof(GpuStatsMsg));
    std::memcpy(extra.data(), &stats, sizeof stats);
    reply(0, extra);
    return;
  }
  default:
    reply(-EINVAL, {}, "unexpected message on the GPU channel");
    return;
  }
}

void GpuRuntime::Impl::serve() {
  uint64_t next_drain = now_ms() + setup.drain_interval_ms;
  for (;;) {
    int timeout = setup.drain_interval_ms ? int(setup.drain_interval_ms) : 200;
    // The program may have taken either descriptor: then the CLI is out of
    // reach (the maps are no longer read back) and this thread ends.
    if (!sock.usable() || !wake_read.usable())
      break;
    struct pollfd fds[2] = {{sock.get(), POLLIN, 0},
                            {wake_read.get(), POLLIN, 0}};
    int n = poll(fds, 2, timeout);
    if (n < 0 && errno != EINTR)
      break;
    if (n > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      auto m = recv_message(sock, 0);
      if (!m)
        break;          // the CLI is gone: the target runs on
      if (m->fd >= 0) { // none is expected here; it is ours to close
        OwnedFd::adopt(m->fd).close();
        m->fd = -1;
      }
      handle(*m);
    }
    if (n > 0 && (fds[1].revents & POLLIN) && wake_read.usable()) {
      char drained[64];
      (void)!read(wake_read.get(), drained, sizeof drained);
    }
    uint64_t ticket;
    {
      Lock q(queue_mu);
      ticket = requested;
    }
    if (ticket > served) {
      sync();
      {
        Lock lock(mu);
        torn_down = true; // what follows a teardown cannot be copied
      }
      Lock q(queue_mu);
      served = ticket;
      pthread_cond_broadcast(&queue_cv);
    }
    if (setup.drain_interval_ms && now_ms() >= next_drain) {
      runtime::maps::Region *region = agent_region();
      bool ready;
      {
        Lock lock(mu);
        ready = device_ready && !torn_down && region;
      }
      if (ready && cu.cuCtxPushCurrent(ctx) == CUDA_SUCCESS) {
        auto drained = store->drain_ring(*region);
        CUcontext popped;
        cu.cuCtxPopCurrent(&popped);
        if (drained) {
          stats.events += drained->records;
          stats.events_lost += drained->lost;
        }
      }
      next_drain = now_ms() + setup.drain_interval_ms;
    }
  }
  {
    Lock send(send_mu);
    sock.close(); // (only if still ours)
  }
  Lock q(queue_mu);
  serving = false;
  pthread_cond_broadcast(&queue_cv);
}

} // namespace ubtrace::agent::gpu
