// A user's own LD_PRELOAD library (built twice, as libuser_preload_a.so and
// libuser_preload_b.so): it does nothing but be loaded.
int ubt_user_preload_marker(void) {
  return 1;
}
