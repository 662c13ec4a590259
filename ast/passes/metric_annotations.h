// Metric annotations: line comments that name a map's Prometheus labels
// and help text, for the exporters (backends/output/prometheus.h) and the
// labels of pprof samples. Being comments, they leave the script one that
// bpftrace runs as it is.
//
//   // ubtrace:metric @bytes labels(pid, comm) "Bytes read, by process"
//
// A comment of its own line: `ubtrace:metric`, the map, then optionally
// labels(...) with one name per key part (one for a single key, one per
// tuple element), then optionally the help text in double quotes (\" and
// \\ escaped). Label names are Prometheus's ([a-zA-Z_][a-zA-Z0-9_]*, not
// starting with "__", not "le" or "quantile", which the exporters use).
// Runs after semantic analysis: the map must exist and the labels must
// match its key; the result is stored in the map's MapInfo.
#pragma once

#include "ast/context.h"

namespace ubtrace::ast {

bool run_metric_annotations(ASTContext &ctx);

} // namespace ubtrace::ast
