/* A second preloaded library, to check that the agent is appended to an
 * existing LD_PRELOAD rather than replacing it; also a "broken agent" that
 * never says hello. */
int ubt_preload_other_marker(void) {
  return 1234;
}
