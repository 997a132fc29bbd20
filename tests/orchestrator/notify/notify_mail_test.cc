// E-mail reports: the message (headers made safe, the report and the
// patch inline) and its delivery through libcurl's SMTP client to a
// loopback sink (smtp_sink.py, Debian's python3-aiosmtpd).
#include "orchestrator/notify/notify_mail.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "orchestrator/notify/notifier.h"
#include "tests/orchestrator/notify/notify_test_util.h"
#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator {
namespace {

namespace fs = std::filesystem;
using testing::OutboxRows;
using testing::StoreTest;

std::string Unbase64(std::string_view in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+')
      v = 62;
    else if (c == '/')
      v = 63;
    else
      continue;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

// The text of RFC 2047 B-encoded words (UTF-8), folding removed.
std::string DecodeWords(const std::string& value) {
  std::string out;
  size_t pos = 0;
  while ((pos = value.find("=?UTF-8?B?", pos)) != std::string::npos) {
    pos += 10;
    const size_t end = value.find("?=", pos);
    if (end == std::string::npos) break;
    out += Unbase64(value.substr(pos, end - pos));
    pos = end + 2;
  }
  return out;
}

struct Mail {
  std::vector<std::pair<std::string, std::string>> headers;  // Unfolded.
  std::vector<std::string> body;                             // Lines.
  std::string raw;
  std::string Header(const std::string& name) const {
    for (const auto& [k, v] : headers)
      if (k == name) return v;
    return "";
  }
};

Mail ParseMail(const std::string& raw) {
  Mail m;
  m.raw = raw;
  std::vector<std::string> lines;
  std::stringstream in(raw);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  size_t i = 0;
  for (; i < lines.size() && !lines[i].empty(); ++i) {
    if ((lines[i][0] == ' ' || lines[i][0] == '\t') && !m.headers.empty()) {
      m.headers.back().second += lines[i];
    } else {
      const size_t colon = lines[i].find(':');
      m.headers.emplace_back(
          lines[i].substr(0, colon),
          colon == std::string::npos ? "" : lines[i].substr(colon + 2));
    }
  }
  m.body.assign(lines.begin() + std::min(i + 1, lines.size()), lines.end());
  return m;
}

// The SMTP sink, a child process on a loopback port.
class SmtpSink {
 public:
  // Starts it; `skip` is set when aiosmtpd is not installed.
  Status Start(const std::string& dir, bool* skip) {
    dir_ = dir;
    const std::string script = std::string(TRENCH_SOURCE_DIR) +
                               "/tests/orchestrator/notify/smtp_sink.py";
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = testing::UnusedPort();
      int fds[2];
      if (pipe(fds) != 0) return IoError("pipe");
      pid_ = fork();
      if (pid_ == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        const std::string port = std::to_string(port_);
        execl("/usr/bin/python3", "python3", script.c_str(), dir.c_str(),
              port.c_str(), static_cast<char*>(nullptr));
        _exit(4);  // No python3: as good as no aiosmtpd.
      }
      close(fds[1]);
      std::string out;
      pollfd p{fds[0], POLLIN, 0};
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (out.find('\n') == std::string::npos &&
             std::chrono::steady_clock::now() < deadline) {
        if (poll(&p, 1, 200) > 0) {
          char buf[256];
          const ssize_t n = read(fds[0], buf, sizeof buf);
          if (n <= 0) break;
          out.append(buf, n);
        }
      }
      close(fds[0]);
      if (out.rfind("ready", 0) == 0) return Status::Ok();
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      if (code == 4) {
        *skip = true;
        return Status::Ok();
      }
      if (code != 3) {
        return Internal("smtp_sink.py did not start (exit " +
                        std::to_string(code) + "): " + out);
      }
    }
    return Internal("smtp_sink.py: no free port after 5 tries");
  }
  ~SmtpSink() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status;
      waitpid(pid_, &status, 0);
    }
  }
  std::string url() const {
    return "smtp://127.0.0.1:" + std::to_string(port_);
  }
  // The messages received so far, in order.
  std::vector<Mail> Mails() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().extension() == ".eml") names.push_back(e.path().string());
    }
    std::sort(names.begin(), names.end());
    std::vector<Mail> mails;
    for (const std::string& n : names) {
      std::ifstream in(n, std::ios::binary);
      std::stringstream s;
      s << in.rdbuf();
      mails.push_back(ParseMail(s.str()));
    }
    return mails;
  }
  std::string Envelope(int index) const {
    char name[32];
    std::snprintf(name, sizeof name, "/%06d.json", index + 1);
    std::ifstream in(dir_ + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

TEST(MailSubjectTest, IsOneAsciiLineWithoutInjectedHeaders) {
  EXPECT_EQ(MailSubject(7, "wrong sum\r\nBcc: evil@example.org"),
            "[trench] bug 7: wrong sum Bcc: evil@example.org");
  const std::string utf8 = MailSubject(8, "naïve reduce ≠ 0 \x1b[31m");
  EXPECT_EQ(utf8.rfind("=?UTF-8?B?", 0), 0u) << utf8;
  for (unsigned char c : utf8) {
    EXPECT_TRUE(c == '\r' || c == '\n' || (c >= 0x20 && c < 0x7f));
  }
  EXPECT_EQ(DecodeWords(utf8), "[trench] bug 8: naïve reduce ≠ 0 [31m");
  // A long title: several encoded words of at most 75 characters each,
  // folded, never cutting a character in two.
  std::string long_title;
  for (int i = 0; i < 40; ++i) long_title += "é";
  const std::string folded = MailSubject(9, long_title);
  std::stringstream lines(folded);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    EXPECT_LE(line.size(), 76u) << line;
  }
  EXPECT_EQ(DecodeWords(folded), "[trench] bug 9: " + long_title);
}

TEST(MailRenderTest, LongLinesGoQuotedPrintable) {
  NotifyEmailConfig e;
  e.from = "trench@example.org";
  e.to = {"dev@example.org"};
  MailContent c;
  c.kind = "proposed";
  c.delivery_id = "ev2-abc";
  c.bug.id = 1;
  c.bug.title = "t";
  c.diff = "+" + std::string(2000, 'x') + "\n";
  const Mail m = ParseMail(RenderMail(e, c));
  EXPECT_EQ(m.Header("Content-Transfer-Encoding"), "quoted-printable");
  for (const std::string& l : m.body) EXPECT_LE(l.size(), 76u);
  c.diff = "+short\n";
  EXPECT_EQ(ParseMail(RenderMail(e, c)).Header("Content-Transfer-Encoding"),
            "8bit");
}

class NotifyMailTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    sink_dir_ = dir_ + "/sink";
    fs::create_directories(sink_dir_);
    bool skip = false;
    Status s = sink_.Start(sink_dir_, &skip);
    if (skip) {
      GTEST_SKIP() << "the SMTP sink needs Debian's python3-aiosmtpd "
                      "(/usr/bin/python3 -m aiosmtpd): apt-get install "
                      "python3-aiosmtpd";
    }
    ASSERT_TRUE(s.ok()) << s.message();
    store_ = OpenStore(&clock_);
    ASSERT_NE(store_, nullptr);
  }
  NotifySetup MailSetup(std::vector<std::string> to) {
    NotifyDestination d;
    d.channel = NotifyChannel::kEmail;
    d.key = "email";
    d.email.smtp_url = sink_.url();
    d.email.from = "trench@example.org";
    d.email.to = std::move(to);
    d.email.starttls = "try";
    NotifySetup s;
    s.destinations.push_back(d);
    s.max_attempts = 3;
    s.backoff_seconds = 1;
    return s;
  }
  std::unique_ptr<Notifier> MakeNotifier(NotifySetup setup) {
    return testing::TestNotifier(path_, std::move(setup), &clock_);
  }
  void Move(int64_t id, BugState to, TransitionFields f = {}) {
    auto b = store_->TransitionBug(id, to, "test", Json::MakeObject(), f);
    ASSERT_TRUE(b.ok()) << b.status().message();
  }

  std::string sink_dir_;
  SmtpSink sink_;
  std::unique_ptr<Store> store_;
};

TEST_F(NotifyMailTest, OneMailPerNewBugAndPerProposedPatch) {
  auto notifier =
      MakeNotifier(MailSetup({"dev@example.org", "lead@example.org"}));
  ASSERT_EQ(*notifier->RunOnce(), 0);
  Json details = Json::MakeObject();
  details["report"] = Json::MakeObject();
  details["report"]["text"] = "sum of f32 differs\n.starts with a dot\n";
  auto id =
      store_->CreateBug({.signature = "add/f32/mismatch",
                         .title = "naïve sum ≠ 0\r\nBcc: evil@example.org",
                         .details = details},
                        "fuzzer", Json::MakeObject());
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*notifier->RunOnce(), 1);

  ASSERT_TRUE(
      *store_->PutCase(std::string(64, 'b'), "cases/b", Json::MakeObject()));
  Move(*id, BugState::kReproduced);
  Move(*id, BugState::kMinimized, {.minimized_sha256 = std::string(64, 'b')});
  Move(*id, BugState::kLocalized);
  Move(*id, BugState::kCulpritFound, {.culprit_commit = std::string(40, 'c')});
  const std::string diff =
      "--- a/compiler/passes/fold.cc\n+++ b/compiler/passes/fold.cc\n"
      "@@ -1,2 +1,2 @@\n-  return a+b;\n+  return a + b;\n.hidden dot line\n"
      "..two dots\n.\n";
  ASSERT_TRUE(store_->AddPatch(*id, "trench/bug-1", diff).ok());
  Move(*id, BugState::kPatchDrafted);
  Move(*id, BugState::kPatchVerified);
  EXPECT_EQ(*notifier->RunOnce(), 0);  // No mail for these moves.
  Move(*id, BugState::kProposed);
  EXPECT_EQ(*notifier->RunOnce(), 1);

  std::vector<Mail> mails = sink_.Mails();
  ASSERT_EQ(mails.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const Mail& m = mails[i];
    EXPECT_EQ(m.Header("From"), "trench@example.org");
    EXPECT_EQ(m.Header("To"), "dev@example.org, lead@example.org");
    EXPECT_EQ(DecodeWords(m.Header("Subject")),
              "[trench] bug 1: naïve sum ≠ 0 Bcc: evil@example.org");
    EXPECT_EQ(m.Header("Bcc"), "");  // The title injected no header.
    EXPECT_EQ(m.Header("Date"), "Tue, 14 Nov 2023 22:13:20 +0000");
    EXPECT_EQ(m.Header("Content-Type"), "text/plain; charset=utf-8");
    EXPECT_EQ(m.Header("MIME-Version"), "1.0");
    EXPECT_EQ(m.Header("Message-ID"),
              "<" + m.Header("X-Trench-Delivery") + "@example.org>");
    EXPECT_NE(sink_.Envelope(i).find("\"to\": [\"dev@example.org\", "
                                     "\"lead@example.org\"]"),
              std::string::npos)
        << sink_.Envelope(i);
  }
  auto events = store_->ListEvents(*id, 0, 100);
  EXPECT_EQ(mails[0].Header("X-Trench-Delivery"),
            DeliveryId(events->front().id, "email"));
  EXPECT_EQ(mails[0].Header("X-Trench-Event"), "finding");
  EXPECT_EQ(mails[1].Header("X-Trench-Event"), "proposed");
  EXPECT_EQ(mails[1].Header("In-Reply-To"), mails[0].Header("Message-ID"));
  auto has_line = [](const Mail& m, const std::string& line) {
    return std::find(m.body.begin(), m.body.end(), line) != m.body.end();
  };
  EXPECT_TRUE(has_line(mails[0], "trench found a new bug.")) << mails[0].raw;
  EXPECT_TRUE(has_line(mails[0], "dashboard: /bugs/1"));
  EXPECT_TRUE(has_line(mails[0], "The triage report:"));
  EXPECT_TRUE(has_line(mails[0], "> .starts with a dot")) << mails[0].raw;
  EXPECT_TRUE(has_line(mails[1],
                       "trench proposes a patch for bug 1 (branch "
                       "trench/bug-1)."))
      << mails[1].raw;
  // The patch inline, lines starting with '.' intact (libcurl stuffed
  // them, the sink unstuffed them).
  for (const char* l :
       {"+  return a + b;", ".hidden dot line", "..two dots", "."}) {
    EXPECT_TRUE(has_line(mails[1], l)) << l << "\n" << mails[1].raw;
  }
  EXPECT_TRUE(has_line(mails[1], "The triage report:"));
  EXPECT_TRUE(OutboxRows(store_.get(), "pending").empty());
  EXPECT_EQ(OutboxRows(store_.get(), "sent").size(), 2u);
}

TEST_F(NotifyMailTest, RefusedRecipientFailsForGoodBusyOneIsRetried) {
  auto notifier = MakeNotifier(MailSetup({"reject@example.org"}));
  ASSERT_EQ(*notifier->RunOnce(), 0);
  ASSERT_TRUE(store_->CreateBug({.title = "t"}, "t", Json()).ok());
  EXPECT_EQ(*notifier->RunOnce(), 1);
  auto rows = OutboxRows(store_.get());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].state, "failed");
  EXPECT_NE(rows[0].last_error.find("reply 550"), std::string::npos)
      << rows[0].last_error;

  // Another destination config on the same store: a 451 is transient.
  auto busy = MakeNotifier(MailSetup({"busy@example.org"}));
  ASSERT_TRUE(store_->CreateBug({.title = "u"}, "t", Json()).ok());
  EXPECT_EQ(*busy->RunOnce(), 1);
  rows = OutboxRows(store_.get());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].state, "pending");
  EXPECT_NE(rows[1].last_error.find("reply 451"), std::string::npos)
      << rows[1].last_error;
  EXPECT_TRUE(sink_.Mails().empty());
}

// The outbox under SIGKILL, for mail: notifiers in child processes are
// killed at random moments while bugs are filed; a last one finishes.
// Every new bug got its mail, each under one delivery id (a mail sent
// again after a kill mid-send carries the same id, so a reader's client
// can drop it), and the outbox ends with every row sent.
TEST_F(NotifyMailTest, SigkillAtRandomMomentsLosesNoMail) {
  // The sink answers each mail 0.3 s after storing it: kills land
  // mid-send, and such a mail is sent again.
  NotifySetup setup = MailSetup({"dev@example.org", "slow@example.org"});
  setup.backoff_seconds = 0.01;
  setup.max_attempts = 1000;
  auto start_child = [&] { return testing::StartNotifierChild(path_, setup); };
  auto kill_child = testing::KillChild;
  std::mt19937 rng(21);  // Reproducible moments.
  int filed = 0;
  for (int round = 0; round < 30; ++round) {
    const pid_t pid = start_child();
    std::uniform_int_distribution<int> bugs(0, 2), wait_us(0, 400'000);
    for (int i = bugs(rng); i > 0; --i) {
      ASSERT_TRUE(store_
                      ->CreateBug({.title = "bug " + std::to_string(++filed)},
                                  "fuzzer", Json())
                      .ok());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(wait_us(rng)));
    kill_child(pid);
  }
  ASSERT_GT(filed, 10);
  const pid_t last = start_child();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (std::chrono::steady_clock::now() < deadline &&
         !(OutboxRows(store_.get()).size() == static_cast<size_t>(filed) &&
           OutboxRows(store_.get(), "pending").empty())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill_child(last);

  auto events = store_->ListEvents(std::nullopt, 0, 100000);
  ASSERT_TRUE(events.ok());
  std::map<std::string, int64_t> event_of_delivery;
  for (const Event& e : *events) {
    event_of_delivery[DeliveryId(e.id, "email")] = e.id;
  }
  std::map<int64_t, std::set<std::string>> deliveries_of;  // event -> ids
  size_t repeats = 0;
  std::set<std::string> seen;
  for (const Mail& m : sink_.Mails()) {
    const std::string delivery = m.Header("X-Trench-Delivery");
    auto it = event_of_delivery.find(delivery);
    ASSERT_NE(it, event_of_delivery.end()) << m.raw;
    EXPECT_EQ(m.Header("X-Trench-Event"), "finding");
    deliveries_of[it->second].insert(delivery);
    if (!seen.insert(delivery).second) ++repeats;
  }
  EXPECT_EQ(deliveries_of.size(), static_cast<size_t>(filed));
  for (const auto& [event, ids] : deliveries_of) {
    EXPECT_EQ(ids.size(), 1u) << "event " << event;
  }
  EXPECT_GE(repeats, 1u);  // Some were killed mid-send and sent again.
  EXPECT_EQ(OutboxRows(store_.get()).size(), static_cast<size_t>(filed));
  for (const OutboxRow& r : OutboxRows(store_.get())) {
    EXPECT_EQ(r.state, "sent") << r.last_error;
  }
  std::cout << filed << " mails, " << repeats << " sent again after a kill\n";
}

}  // namespace
}  // namespace trench::orchestrator
