// Semantic analysis of aggregations and the functions on whole maps.
#include "ast/builtins.h"
#include "ast/passes/semantic_internal.h"

namespace ubtrace::ast {

void Semantic::check_aggregation(Call &c) {
  const std::string &n = c.name;
  if (!in_map_assign_) {
    err(c.loc) << n << "() should be directly assigned to a map";
    c.type = Type{};
    return;
  }
  c.type = Type{};
  if (n == "count") {
    if (check_arity(c))
      c.type = make_simple(TypeKind::Count, 8);
    return;
  }
  if (n == "sum" || n == "min" || n == "max" || n == "avg" || n == "stats") {
    if (!check_arity(c) || !expect_int_arg(c, 0))
      return;
    Type arg = decay(c.args[0]->type);
    TypeKind k = n == "sum"   ? TypeKind::Sum
                 : n == "min" ? TypeKind::Min
                 : n == "max" ? TypeKind::Max
                 : n == "avg" ? TypeKind::Avg
                              : TypeKind::Stats;
    c.type = make_simple(k, 8);
    c.type.agg_signed = arg.is_int() ? arg.is_signed : false;
    return;
  }
  if (n == "hist") {
    if (!check_arity(c) || !expect_int_arg(c, 0))
      return;
    int64_t bits = 0;
    if (c.args.size() == 2) {
      if (!expect_int_literal(c, 1, bits))
        return;
      if (bits < 0 || bits > 5) {
        err(c.args[1]->loc) << "hist: bits " << bits << " must be 0..5";
        return;
      }
    }
    c.type = make_simple(TypeKind::Hist, 8);
    c.type.hist_bits = static_cast<uint32_t>(bits);
    return;
  }
  if (n == "lhist") {
    if (!check_arity(c) || !expect_int_arg(c, 0))
      return;
    int64_t mn, mx, step;
    if (!expect_int_literal(c, 1, mn) || !expect_int_literal(c, 2, mx) ||
        !expect_int_literal(c, 3, step))
      return;
    if (mn < 0) {
      err(c.args[1]->loc)
          << "lhist: invalid min value (must be non-negative literal)";
      return;
    }
    if (step <= 0) {
      err(c.args[3]->loc) << "lhist() step must be >= 1 (" << step
                          << " provided)";
      return;
    }
    if (mx <= mn) {
      err(c.loc) << "lhist() max must be greater than min (" << mn << ", " << mx
                 << " provided)";
      return;
    }
    if ((mx - mn) / step > 1000) {
      err(c.loc) << "lhist() too many buckets, must be <= 1000 (would need "
                 << (mx - mn) / step << ")";
      return;
    }
    c.type = make_simple(TypeKind::LHist, 8);
    c.type.lhist_min = mn;
    c.type.lhist_max = mx;
    c.type.lhist_step = step;
    return;
  }
  if (n == "tseries") {
    check_tseries(c);
    return;
  }
}

// tseries(n, interval, num_intervals[, "avg"|"max"|"min"|"sum"]): the
// interval and the count are literals (a duration literal reads as ns).
void Semantic::check_tseries(Call &c) {
  if (!check_arity(c) || !expect_int_arg(c, 0))
    return;
  int64_t interval = 0, count = 0;
  if (!expect_int_literal(c, 1, interval) || !expect_int_literal(c, 2, count))
    return;
  if (interval <= 0) {
    err(c.args[1]->loc) << "tseries() interval_ns must be >= 1 (" << interval
                        << " provided)";
    return;
  }
  if (count <= 0 || count > kMaxTSeriesIntervals) {
    err(c.args[2]->loc) << "tseries() num_intervals must be >= 1 and <= "
                        << kMaxTSeriesIntervals << " (" << count
                        << " provided)";
    return;
  }
  auto agg = TSeriesAgg::Last;
  if (c.args.size() == 4) {
    std::string name;
    if (!expect_string_literal(c, 3, name))
      return;
    if (name == "avg")
      agg = TSeriesAgg::Avg;
    else if (name == "max")
      agg = TSeriesAgg::Max;
    else if (name == "min")
      agg = TSeriesAgg::Min;
    else if (name == "sum")
      agg = TSeriesAgg::Sum;
    else {
      err(c.args[3]->loc) << "tseries() expects one of avg, max, min or sum "
                          << "as the aggregation (\"" << name << "\" provided)";
      return;
    }
  }
  if (!check_unstable(c, ctx_.config.unstable_tseries, "tseries",
                      "unstable_tseries", warned_tseries_))
    return;
  Type arg = decay(c.args[0]->type);
  c.type = make_simple(TypeKind::TSeries, 8);
  c.type.agg_signed = arg.is_int() ? arg.is_signed : false;
  c.type.ts_interval_ns = static_cast<uint64_t>(interval);
  c.type.ts_intervals = static_cast<uint32_t>(count);
  c.type.ts_agg = static_cast<uint8_t>(agg);
}

void Semantic::check_print(Call &c) {
  if (!check_arity(c))
    return;
  auto *m = dyn_cast<Map>(c.args[0]);
  if (m && !m->subscripted) {
    // print(@m, top, div): how many entries (0: all), divided by what.
    for (size_t i = 1; i < c.args.size(); i++)
      if (expect_int_arg(c, i))
        check_literal_range(c, i, i == 1 ? 0 : 1, INT64_MAX,
                            i == 1 ? "print() top" : "print() divisor");
    return;
  }
  if (c.args.size() > 1) {
    err(c.loc) << "Non-map print() only takes 1 argument, " << c.args.size()
               << " found";
    return;
  }
  Type t = c.args[0]->type;
  if (t.kind == TypeKind::Void)
    err(c.loc) << "print() can not print a value of type void";
  return;
}

void Semantic::check_clear_zero(Call &c) {
  if (check_arity(c))
    expect_map_arg(c, 0);
  return;
}

void Semantic::check_delete(Call &c) {
  if (!check_arity(c) || !expect_map_arg(c, 0, c.args.size() == 1))
    return;
  auto *m = static_cast<Map *>(c.args[0]);
  if (c.args.size() == 2) {
    // delete(@m, key): check the key like @m[key] would.
    Map probe_map(m->loc, m->name);
    probe_map.keys = {c.args[1]};
    probe_map.subscripted = true;
    check_map_keys(probe_map);
  } else if (!m->subscripted && map_info(m->name, m->loc).keyed) {
    err(c.loc) << "delete() of a keyed map needs a key: delete(" << m->name
               << ", key) or delete(" << m->name << "[key])";
  }
  c.type = make_bool();
  return;
}

void Semantic::check_has_key(Call &c) {
  if (!check_arity(c) || !expect_map_arg(c, 0))
    return;
  auto *m = static_cast<Map *>(c.args[0]);
  if (map_info(m->name, m->loc).scalar && !map_info(m->name, m->loc).keyed) {
    err(c.loc) << "call to has_key() expects a map with explicit keys "
               << "(non-scalar map)";
    return;
  }
  Map probe_map(m->loc, m->name);
  probe_map.keys = {c.args[1]};
  probe_map.subscripted = true;
  check_map_keys(probe_map);
  c.type = make_bool();
  return;
}

void Semantic::check_len(Call &c) {
  if (!check_arity(c))
    return;
  Type t = c.args[0]->type;
  auto *m = dyn_cast<Map>(c.args[0]);
  if (m && !m->subscripted && map_info(m->name, m->loc).scalar &&
      !map_info(m->name, m->loc).keyed) {
    err(c.loc) << "call to len() expects a map with explicit keys "
               << "(non-scalar map)";
    return;
  }
  if ((m && !m->subscripted) || t.kind == TypeKind::UStack ||
      t.kind == TypeKind::KStack) {
    c.type = make_int(8, true);
    return;
  }
  err(c.loc) << "len() expects a map or stack to be provided";
  return;
}

} // namespace ubtrace::ast
