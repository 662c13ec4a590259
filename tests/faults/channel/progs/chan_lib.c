/* A library the hostile daemons dlopen() after taking the agent's
 * descriptors: its probes are pending until then, so the agent reports the
 * load on its channel (or must not, once the channel is not its own). */
__attribute__((noinline)) int chan_lib_fn(int x) {
  return x * 3 + 1;
}
