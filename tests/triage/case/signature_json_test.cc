// Signature <-> JSON: the typed coarse signature writes exactly the JSON
// the verdict always wrote (members and order), so its "sig" (what stored
// bugs are deduplicated by) is unchanged; FromJson refuses malformed
// signatures naming the member.
#include <gtest/gtest.h>

#include "base/sha256.h"
#include "triage/case/verdict.h"

namespace trench::hlo_diff {
namespace {

// The old rule, from the literal text of the JSON without "sig".
std::string OldSig(const std::string& compact_json) {
  return Sha256Hex(compact_json).substr(0, 16);
}

Signature Mismatch() {
  Signature s;
  s.status = VerdictStatus::kMismatch;
  s.dtype = "f32";
  s.ops = {"add", "dot"};
  return s;
}

Signature CompileCrash() {
  Signature s;
  s.status = VerdictStatus::kCompileCrash;
  s.stage = "compile";
  s.message = "killed by SIGABRT: hloc: <path> Assertion failed at <name>";
  s.pass = "algsimp";
  return s;
}

TEST(SignatureJsonTest, SigIsUnchangedFromTheJsonRule) {
  struct Example {
    Signature s;
    std::string json;  // Compact, without "sig".
  };
  Signature nan_no_output;
  nan_no_output.status = VerdictStatus::kNanMismatch;
  Signature timeout;
  timeout.status = VerdictStatus::kTimeout;
  timeout.stage = "run";
  timeout.message = "timed out after N s";
  Signature pass;
  Signature unsupported;
  unsupported.status = VerdictStatus::kTargetUnsupported;
  const Example examples[] = {
      {Mismatch(),
       R"({"status":"mismatch","dtype":"f32","ops":["add","dot"]})"},
      {nan_no_output, R"({"status":"nan_mismatch","dtype":null,"ops":[]})"},
      {CompileCrash(),
       R"({"status":"compile_crash","stage":"compile","message":)"
       R"("killed by SIGABRT: hloc: <path> Assertion failed at <name>",)"
       R"("pass":"algsimp"})"},
      {timeout,
       R"({"status":"timeout","stage":"run","message":"timed out after N s",)"
       R"("pass":null})"},
      {pass, R"({"status":"pass"})"},
      {unsupported, R"({"status":"target_unsupported"})"},
  };
  for (const Example& e : examples) {
    Signature s = e.s;
    s.sig = SignatureHash(s);
    EXPECT_EQ(s.sig, OldSig(e.json)) << e.json;
    EXPECT_EQ(s.sig.size(), 16u);
    // ToJson is the old JSON with "sig" last.
    std::string with_sig = e.json;
    with_sig.pop_back();
    with_sig += R"(,"sig":")" + s.sig + "\"}";
    EXPECT_EQ(s.ToJson().Dump(), with_sig);
    // The JSON rule agrees, and the hash ignores a stale "sig".
    EXPECT_EQ(WithSignatureHash(s.ToJson()), s.ToJson());
    Signature stale = s;
    stale.sig = "0123456789abcdef";
    EXPECT_EQ(SignatureHash(stale), s.sig);
  }
}

TEST(SignatureJsonTest, RoundTripsEveryClass) {
  Signature nan_no_output;
  nan_no_output.status = VerdictStatus::kNanMismatch;
  Signature run_crash = CompileCrash();
  run_crash.status = VerdictStatus::kRunCrash;
  run_crash.stage = "run";
  run_crash.pass.reset();
  Signature invalid;
  invalid.status = VerdictStatus::kInvalidInput;
  for (Signature s : {Mismatch(), nan_no_output, CompileCrash(), run_crash,
                      invalid, Signature()}) {
    s.sig = SignatureHash(s);
    const Json j = s.ToJson();
    StatusOr<Json> parsed = ParseJson(j.DumpPretty());
    ASSERT_TRUE(parsed.ok());
    StatusOr<Signature> back = Signature::FromJson(*parsed);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->status, s.status);
    EXPECT_EQ(back->dtype, s.dtype);
    EXPECT_EQ(back->ops, s.ops);
    EXPECT_EQ(back->stage, s.stage);
    EXPECT_EQ(back->message, s.message);
    EXPECT_EQ(back->pass, s.pass);
    EXPECT_EQ(back->sig, s.sig);
    EXPECT_EQ(back->ToJson().Dump(), j.Dump());
  }
}

TEST(SignatureJsonTest, MalformedSignaturesNameTheMember) {
  auto error = [](const std::string& text) {
    StatusOr<Json> j = ParseJson(text);
    EXPECT_TRUE(j.ok()) << text;
    StatusOr<Signature> s = Signature::FromJson(j.ok() ? *j : Json());
    EXPECT_FALSE(s.ok()) << text;
    return s.ok() ? std::string() : s.status().message();
  };
  EXPECT_EQ(error(R"("mismatch")"), "signature: expected an object");
  EXPECT_EQ(error(R"({"sig": "x"})"), "signature.status: missing");
  EXPECT_NE(error(R"({"status": "odd", "sig": "x"})")
                .find("signature.status: unknown verdict status 'odd'"),
            std::string::npos);
  EXPECT_EQ(error(R"({"status": "pass"})"), "signature.sig: missing");
  EXPECT_EQ(error(R"({"status": "mismatch", "dtype": "f32", "sig": "x"})"),
            "signature.ops: missing");
  EXPECT_EQ(error(R"({"status": "mismatch", "dtype": "f32", "ops": [1],)"
                  R"( "sig": "x"})"),
            "signature.ops: expected an array of strings");
  EXPECT_EQ(error(R"({"status": "mismatch", "dtype": 3, "ops": [],)"
                  R"( "sig": "x"})"),
            "signature.dtype: expected a string or null");
  EXPECT_EQ(error(R"({"status": "run_crash", "stage": "run", "message": "m",)"
                  R"( "sig": "x"})"),
            "signature.pass: missing");
  EXPECT_EQ(error(R"({"status": "pass", "ops": [], "sig": "x"})"),
            "signature.ops: unexpected in a signature of status pass");
  // Inside a verdict the member is named from the verdict.
  Verdict v = InvalidInputVerdict("c/case.json: missing");
  Json j = v.ToJson();
  j["signature"]["sig"] = 7;
  StatusOr<Verdict> back = Verdict::FromJson(j);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().message(),
            "verdict.signature.sig: expected a string");
}

}  // namespace
}  // namespace trench::hlo_diff
