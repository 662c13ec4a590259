// The non-map messages of both outputs: printf, time, cat, join, system,
// values, lost events, attached probes, errors.
#include "backends/output/json_output.h"
#include "backends/output/text_output.h"

#include <cstring>
#include <gtest/gtest.h>
#include <sstream>

namespace ubtrace::output::test {
namespace {

struct Outputs {
  std::ostringstream out, err, json_out;
  TextOutput text{out, err};
  JsonOutput json{json_out};
};

TEST(Messages, PrintfTimeCatJoinSyscall) {
  Outputs o;
  for (Output *x :
       {static_cast<Output *>(&o.text), static_cast<Output *>(&o.json)}) {
    x->printf("test \r \n \t \\ \" bar");
    x->time("12:00:01\n");
    x->cat("1.0 2.0\n");
    x->join("/bin/echo,'A'");
    x->syscall("a b c\n");
  }
  EXPECT_EQ(o.out.str(), "test \r \n \t \\ \" bar12:00:01\n1.0 2.0\n"
                         "/bin/echo,'A'\na b c\n");
  EXPECT_EQ(o.json_out.str(),
            "{\"type\": \"printf\", \"data\": \"test \\r \\n \\t \\\\ \\\" "
            "bar\"}\n"
            "{\"type\": \"time\", \"data\": \"12:00:01\\n\"}\n"
            "{\"type\": \"cat\", \"data\": \"1.0 2.0\\n\"}\n"
            "{\"type\": \"join\", \"data\": \"/bin/echo,'A'\"}\n"
            "{\"type\": \"syscall\", \"data\": \"a b c\\n\"}\n");
  EXPECT_EQ(o.err.str(), "");
}

TEST(Messages, Values) {
  Outputs o;
  Value t = Value::of_tuple(
      {Value::of_int(1), Value::of_int(2), Value::of_string("string")});
  o.text.value(t);
  o.text.value(Value::of_int(5));
  o.json.value(t);
  o.json.value(Value::of_tuple({Value::of_bool(true), Value::of_bool(false)}));
  o.json.value(Value::of_string("Argument list too long"));
  EXPECT_EQ(o.out.str(), "(1, 2, string)\n5\n");
  EXPECT_EQ(o.json_out.str(),
            "{\"type\": \"value\", \"data\": [1,2,\"string\"]}\n"
            "{\"type\": \"value\", \"data\": [true,false]}\n"
            "{\"type\": \"value\", \"data\": \"Argument list too long\"}\n");
}

TEST(Messages, ProbesAndLostEvents) {
  Outputs o;
  o.text.attached_probes(1);
  o.text.attached_probes(3);
  o.text.lost_events(7);
  o.json.attached_probes(1);
  o.json.lost_events(7);
  EXPECT_EQ(o.out.str(), "");
  EXPECT_EQ(o.err.str(),
            "Attached 1 probe\nAttached 3 probes\nLost 7 events\n");
  EXPECT_EQ(o.json_out.str(),
            "{\"type\": \"attached_probes\", \"count\": 1, \"data\": "
            "{\"probes\": 1}}\n"
            "{\"type\": \"lost_events\", \"count\": 7, \"data\": "
            "{\"events\": 7}}\n");
}

SourceLocation loc(std::string text, uint64_t line, uint64_t col,
                   std::vector<std::string> context = {}) {
  return {"stdin", line, col, std::move(text), std::move(context)};
}

TEST(Messages, ErrorfAndWarnf) {
  Outputs o;
  std::vector<SourceLocation> chain = {loc("stdin:1:9-62", 1, 9)};
  o.text.diagnostic(Severity::Error, "Something bad with args: 10, arg2",
                    chain);
  o.text.diagnostic(Severity::Warning, "trailing newline dropped\n", chain);
  // A macro expansion adds the places it came from, with their source.
  std::vector<SourceLocation> expanded = {
      loc("stdin:1:15-38", 1, 15),
      loc("stdin:1:50-55", 1, 50,
          {"macro bad() { errorf(\"Something bad\"); } begin { bad(); }",
           "                                                 ~~~~~"})};
  o.text.diagnostic(Severity::Error, "Something bad", expanded);
  EXPECT_EQ(o.err.str(),
            "stdin:1:9-62: ERROR: Something bad with args: 10, arg2\n"
            "stdin:1:9-62: WARNING: trailing newline dropped\n"
            "stdin:1:15-38: ERROR: Something bad\n"
            "stdin:1:50-55: ERROR: expanded from\n"
            "macro bad() { errorf(\"Something bad\"); } begin { bad(); }\n"
            "                                                 ~~~~~\n");
  EXPECT_EQ(o.out.str(), "");

  o.json.diagnostic(Severity::Error, "bad \"x\"", expanded);
  o.json.diagnostic(Severity::Warning, "w", chain);
  EXPECT_EQ(o.json_out.str(),
            "{\"type\": \"errorf\", \"msg\": \"bad \\\"x\\\"\", \"filename\": "
            "\"stdin\", \"line\": 1, \"col\": 15}\n"
            "{\"type\": \"warnf\", \"msg\": \"w\", \"filename\": \"stdin\", "
            "\"line\": 1, \"col\": 9}\n");
}

TEST(Messages, HelperAndRuntimeErrors) {
  Outputs o;
  std::vector<SourceLocation> chain = {
      loc("stdin:1:38-50", 1, 38, {"source line", "~~~~"})};
  o.text.helper_error("Bad address", "probe_read", -14, chain);
  o.text.runtime_error("divide by zero", chain);
  EXPECT_EQ(o.err.str(),
            "stdin:1:38-50: WARNING: Bad address\n"
            "Additional Info - helper: probe_read, retcode: -14\n"
            "source line\n~~~~\n"
            "stdin:1:38-50: WARNING: divide by zero\nsource line\n~~~~\n");
  o.json.helper_error("Map full; can't update element.", "map_update_elem", -14,
                      chain);
  o.json.runtime_error("divide by zero", chain);
  // JSON reports strerror(-retcode), as bpftrace does.
  EXPECT_EQ(o.json_out.str(),
            std::string("{\"type\": \"helper_error\", \"msg\": \"") +
                std::strerror(14) +
                "\", \"helper\": \"map_update_elem\", \"retcode\": -14, "
                "\"filename\": \"stdin\", \"line\": 1, \"col\": 38}\n"
                "{\"type\": \"runtime_error\", \"msg\": \"divide by zero\", "
                "\"filename\": \"stdin\", \"line\": 1, \"col\": 38}\n");
}

TEST(Messages, EndPrintsTwoNewlinesInTextOnly) {
  Outputs o;
  o.text.end();
  o.json.end();
  EXPECT_EQ(o.out.str(), "\n\n");
  EXPECT_EQ(o.json_out.str(), "");
}

} // namespace
} // namespace ubtrace::output::test
