#include "runtime/inject/command_line.h"

#include <gtest/gtest.h>

namespace ubtrace::runtime::inject {
namespace {

std::vector<std::string> words(std::string_view text) {
  auto result = split_command(text);
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error());
  return result.ok() ? result->argv : std::vector<std::string>{};
}

std::string error_of(std::string_view text) {
  auto result = split_command(text);
  EXPECT_FALSE(result.ok()) << "accepted: " << text;
  return result.ok() ? "" : result.error();
}

using Words = std::vector<std::string>;

TEST(CommandLine, SplitsOnBlanks) {
  EXPECT_EQ(words("./app  -x\t1\n2"), (Words{"./app", "-x", "1", "2"}));
  EXPECT_EQ(words("  ls  "), (Words{"ls"}));
}

TEST(CommandLine, SingleQuotesAreLiteral) {
  EXPECT_EQ(words(R"(echo 'a b' 'c\d' '$HOME' '"')"),
            (Words{"echo", "a b", R"(c\d)", "$HOME", "\""}));
}

TEST(CommandLine, DoubleQuotesEscapeOnlyTheirSpecials) {
  EXPECT_EQ(words(R"(echo "a b" "q\"x" "back\\slash" "keep\n" "d\$")"),
            (Words{"echo", "a b", "q\"x", R"(back\slash)", R"(keep\n)", "d$"}));
}

TEST(CommandLine, BackslashOutsideQuotes) {
  EXPECT_EQ(words(R"(echo a\ b \'x\' \\)"),
            (Words{"echo", "a b", "'x'", "\\"}));
  EXPECT_EQ(words("echo a\\\nb"), (Words{"echo", "ab"}));
}

TEST(CommandLine, AdjacentPartsMakeOneWord) {
  EXPECT_EQ(words(R"(x'b c'"d e"f)"), (Words{"xb cd ef"}));
}

TEST(CommandLine, EmptyQuotedWordsAreKept) {
  EXPECT_EQ(words(R"(prog '' "" x)"), (Words{"prog", "", "", "x"}));
}

TEST(CommandLine, LeadingAssignmentsGoToTheEnvironment) {
  auto command = split_command("A=1 B_2='x y' ./app C=3");
  ASSERT_TRUE(command.ok()) << command.error();
  EXPECT_EQ(command->env, (Words{"A=1", "B_2=x y"}));
  EXPECT_EQ(command->argv, (Words{"./app", "C=3"}));
}

TEST(CommandLine, QuotedNameIsNotAnAssignment) {
  auto command = split_command("'A=1' ./app");
  ASSERT_TRUE(command.ok()) << command.error();
  EXPECT_TRUE(command->env.empty());
  EXPECT_EQ(command->argv, (Words{"A=1", "./app"}));
}

TEST(CommandLine, GlobsAndTildeStayLiteral) {
  EXPECT_EQ(words("ls *.c ~ [ab]?"), (Words{"ls", "*.c", "~", "[ab]?"}));
}

TEST(CommandLine, LoneDollarIsLiteral) {
  EXPECT_EQ(words("echo 5$ $"), (Words{"echo", "5$", "$"}));
}

TEST(CommandLine, RejectsShellOperatorsWithColumn) {
  EXPECT_EQ(error_of("ls | wc"),
            "shell operator '|' at column 4 is not supported: -c runs the "
            "program without a shell (use -c \"sh -c '...'\" to trace a "
            "shell)");
  EXPECT_NE(error_of("a > out").find("'>' at column 3"), std::string::npos);
  EXPECT_NE(error_of("a; b").find("';' at column 2"), std::string::npos);
  EXPECT_NE(error_of("a &").find("'&'"), std::string::npos);
  // Quoted, they are plain characters.
  EXPECT_EQ(words("grep 'a|b' \"x>y\" c\\;"),
            (Words{"grep", "a|b", "x>y", "c;"}));
}

TEST(CommandLine, RejectsExpansions) {
  EXPECT_EQ(error_of("echo $HOME"),
            "shell expansion at column 6 is not supported: -c runs the "
            "program without a shell (quote it with '...' to pass it "
            "literally)");
  EXPECT_NE(error_of("echo \"${X}\"").find("column 7"), std::string::npos);
  EXPECT_NE(error_of("echo `date`").find("column 6"), std::string::npos);
  EXPECT_NE(error_of("echo $(date)").find("column 6"), std::string::npos);
}

TEST(CommandLine, RejectsUnterminatedQuotes) {
  EXPECT_EQ(error_of("echo 'abc"), "unterminated single quote at column 6");
  EXPECT_EQ(error_of("echo \"abc"), "unterminated double quote at column 6");
  EXPECT_EQ(error_of("echo \\"), "trailing backslash at column 6");
}

TEST(CommandLine, RejectsEmptyCommands) {
  EXPECT_EQ(error_of(""), "empty command");
  EXPECT_EQ(error_of("   "), "empty command");
  EXPECT_EQ(error_of("A=1"),
            "no program to run after the variable assignments");
}

} // namespace
} // namespace ubtrace::runtime::inject
