// LineSink (backends/output/line_sink.h): results on standard output are
// written in whole lines, at most PIPE_BUF bytes a write (unless one line is
// longer), so a program writing to the same pipe cannot land inside a line.
// A SOCK_SEQPACKET socket keeps each write() as one message, so the test
// sees exactly the pieces the sink wrote.
#include "backends/output/line_sink.h"

#include <gtest/gtest.h>

#include <climits>
#include <ostream>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace ubtrace::output {
namespace {

struct Pair {
  int writer = -1, reader = -1;
  Pair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds), 0);
    writer = fds[0];
    reader = fds[1];
    int big = 8 << 20;
    ::setsockopt(writer, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    ::setsockopt(reader, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  }
  ~Pair() {
    ::close(writer);
    ::close(reader);
  }
  // Every message written so far.
  std::vector<std::string> pieces() const {
    std::vector<std::string> out;
    std::string buf(1 << 20, '\0');
    for (;;) {
      ssize_t n = ::recv(reader, buf.data(), buf.size(), MSG_DONTWAIT);
      if (n <= 0)
        break;
      out.emplace_back(buf.data(), size_t(n));
    }
    return out;
  }
};

std::string join(const std::vector<std::string> &pieces) {
  std::string all;
  for (const std::string &p : pieces)
    all += p;
  return all;
}

TEST(LineSink, ABurstOfLinesIsWrittenInWholeLinesOfAtMostPipeBuf) {
  Pair p;
  std::string want;
  {
    LineSink sink(p.writer);
    std::ostream out(&sink);
    for (int i = 0; i < 20000; ++i) {
      std::string line = "line " + std::to_string(i) + " " +
                         std::string(size_t(i % 97), 'x') + "\n";
      out << line; // the buffer fills many times before any flush
      want += line;
    }
    out.flush();
    std::vector<std::string> pieces = p.pieces();
    ASSERT_GT(pieces.size(), 10u);
    for (const std::string &piece : pieces) {
      EXPECT_LE(piece.size(), size_t(PIPE_BUF));
      EXPECT_EQ(piece.back(), '\n');
    }
    EXPECT_EQ(join(pieces), want);
  }
}

TEST(LineSink, ALineLongerThanPipeBufIsOneWrite) {
  Pair p;
  LineSink sink(p.writer);
  std::ostream out(&sink);
  std::string longer(3 * PIPE_BUF, 'y');
  out << "a\n" << longer << "\nb\n";
  out.flush();
  std::vector<std::string> pieces = p.pieces();
  EXPECT_EQ(join(pieces), "a\n" + longer + "\nb\n");
  bool whole = false;
  for (const std::string &piece : pieces) {
    EXPECT_EQ(piece.back(), '\n');
    whole |= piece.find(longer + "\n") != std::string::npos;
  }
  EXPECT_TRUE(whole);
}

TEST(LineSink, APartialLineWaitsForItsEndOrAFlush) {
  Pair p;
  std::string filler;
  for (int i = 0; i < 5000; ++i)
    filler += "filler line " + std::to_string(i) + "\n";
  {
    LineSink sink(p.writer);
    std::ostream out(&sink);
    // Enough whole lines to overflow the buffer, then a partial one.
    out << "start " << "done\n" << filler << "tail without end";
    std::string before = join(p.pieces());
    EXPECT_EQ(before.rfind("start done\n", 0), 0u);
    EXPECT_EQ(before.find("tail"), std::string::npos);
    out.flush(); // the session's flush writes it as it is
    std::string after = join(p.pieces());
    EXPECT_EQ(before + after, "start done\n" + filler + "tail without end");
    out << "left at the end";
  }
  // What is left when the sink goes is written.
  EXPECT_EQ(join(p.pieces()), "left at the end");
}

} // namespace
} // namespace ubtrace::output
