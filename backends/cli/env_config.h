// Config variables from the environment. Every config variable can be set
// as UBTRACE_<NAME> or, as bpftrace spells it, BPFTRACE_<NAME> (UBTRACE_
// wins when both are set), and bpftrace's older names for a few. As in
// bpftrace, the environment applies after the script's config block, so it
// overrides the script: a runbook's tool can be retuned without editing it.
#pragma once

#include "runtime/config/config.h"
#include "runtime/result.h"

#include <optional>
#include <string>

namespace ubtrace::cli {

// The environment variable that sets `s`, and its value, if one does.
struct EnvValue {
  std::string variable;
  std::string value;
  bool inverted = false; // a legacy "no_" name of a boolean
};
std::optional<EnvValue> env_value_for(const runtime::ConfigVar &v);

// Checks and stores the environment's values into `config` (after the
// script's config block: they override it); a bad value is an error
// naming the environment variable.
Result<void> apply_environment(runtime::Config &config);

} // namespace ubtrace::cli
