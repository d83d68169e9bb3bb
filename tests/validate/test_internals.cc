// SPDX-License-Identifier: Apache-2.0
// The validator's internals: rule table, release exports, formats, symbol
// name matching, the child-process wire format and isolation.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "isolation.h"
#include "plugin_struct.h"
#include "report.h"
#include "rules.h"
#include "symbol_names.h"

namespace tfp_validator {
namespace {

std::string Newest() { return Release(ReleaseCount() - 1); }

const std::string* Field(const Finding& f, const std::string& name) {
  for (const auto& kv : f.fields) {
    if (kv.first == name) return &kv.second;
  }
  return nullptr;
}

TEST(Rules, TableMatchesIds) {
  EXPECT_STREQ(GetRule(RuleId::kFileMissing).id, "TFP-FILE-MISSING");
  EXPECT_STREQ(GetRule(RuleId::kSymEntryMangled).id, "TFP-SYM-ENTRY-MANGLED");
  EXPECT_STREQ(GetRule(RuleId::kIsolationCrash).id, "TFP-ISOLATION-CRASH");
  EXPECT_EQ(GetRule(RuleId::kSymCxxInternals).severity, Severity::kWarning);
  EXPECT_EQ(GetRule(RuleId::kSymUndefinedImport).phase, Phase::kSymbols);
  EXPECT_EQ(FindRule("TFP-FILE-EMPTY"), &GetRule(RuleId::kFileEmpty));
  EXPECT_EQ(FindRule("TFP-NO-SUCH-RULE"), nullptr);
  EXPECT_EQ(FindRule(nullptr), nullptr);
  EXPECT_STREQ(PhaseName(Phase::kFile), "file");
  EXPECT_STREQ(PhaseName(Phase::kIsolation), "isolation");
  for (int i = 0; i < kRuleCount; ++i) {
    const RuleRow& r = GetRule(i);
    EXPECT_EQ(FindRule(r.id), &r);
    for (const char* text : {r.summary, r.checks, r.subject, r.message, r.expected, r.actual, r.fix}) {
      EXPECT_NE(text[0], '\0') << r.id;
    }
  }
}

TEST(Rules, Releases) {
  ASSERT_GE(ReleaseCount(), 17);
  EXPECT_STREQ(Release(0), "2.5");
  EXPECT_EQ(ReleaseIndex("2.5"), 0);
  EXPECT_EQ(ReleaseIndex("2.18"), 13);
  EXPECT_EQ(ReleaseIndex("2.1"), -1);
  EXPECT_EQ(ReleaseIndex(nullptr), -1);
}

TEST(Rules, Exports) {
  EXPECT_EQ(ReleaseRanges(ExportMask("TF_AssignVariable")), "2.6-2.18");
  EXPECT_EQ(ReleaseRanges(ExportMask("TF_NewStatus")), "2.5-" + Newest());
  EXPECT_EQ(ReleaseRanges(ExportMask("TSL_NewStatus")), "2.12-" + Newest());
  EXPECT_EQ(ExportMask("TF_NoSuchFunction"), 0u);
  EXPECT_EQ(ExportMask(""), 0u);
  EXPECT_EQ(ExportMask("SE_InitPlugin"), 0u);  // plugins define it; TF does not export it
  EXPECT_EQ(ReleaseRanges(0), "");
  EXPECT_EQ(ReleaseRanges(0b1011), "2.5-2.6, 2.8");
  EXPECT_EQ(ReleaseRanges(0b100), "2.7");
}

TEST(Rules, Render) {
  Fields f = {{"symbol", "TF_Foo"}, {"release", "2.21"}, {"odd", "{release}"}};
  EXPECT_EQ(Render("{symbol} not in {release}", f), "TF_Foo not in 2.21");
  EXPECT_EQ(Render("{missing} {symbol}", f), "{missing} TF_Foo");
  EXPECT_EQ(Render("{odd}", f), "{release}");  // values are not expanded again
  EXPECT_EQ(Render("extern \"C\" { ... } {", f), "extern \"C\" { ... } {");
  EXPECT_EQ(Render("", f), "");
}

TEST(Report, RendersFromTheTable) {
  tfp_finding f = RenderFinding(Finding(RuleId::kSymUndefinedImport)
                                    .Set("symbol", "TF_AssignVariable")
                                    .Set("release", "2.21")
                                    .Set("releases", "exported by 2.6-2.18")
                                    .Set("file", "ignored: the report's path wins"),
                                "lib/libp.so");
  EXPECT_EQ(f.subject, "TF_AssignVariable");
  EXPECT_EQ(f.message, "undefined symbol not exported by TensorFlow 2.21 (exported by 2.6-2.18)");
  EXPECT_EQ(f.actual, "TF_AssignVariable: exported by 2.6-2.18");
  ASSERT_EQ(f.fields.size(), 4u);
  EXPECT_EQ(f.fields[0].first, "file");
  EXPECT_EQ(f.fields[0].second, "lib/libp.so");

  tfp_report report;
  report.path = "p.so";
  report.Add(Finding(RuleId::kSymCxxInternals));
  EXPECT_EQ(report.warnings, 1u);
  report.validated = true;
  EXPECT_EQ(report.ExitStatus(), 0);
  report.Add(Finding(RuleId::kSymNoEntry));
  EXPECT_EQ(report.ExitStatus(), 1);
  report.validated = false;
  EXPECT_EQ(report.ExitStatus(), 2);
}

TEST(Names, EditDistance) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
  EXPECT_EQ(EditDistance("ab", "ba"), 1);  // a swap is one edit
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(EditDistance("SE_InitPlugin", "SE_InitPlugin"), 0);
}

TEST(Names, NearMiss) {
  int score = -1;
  EXPECT_TRUE(IsNearMiss("SE_InitPlugins", "SE_InitPlugin", &score));
  EXPECT_EQ(score, 1);
  EXPECT_TRUE(IsNearMiss("se_initplugin", "SE_InitPlugin", &score));
  EXPECT_EQ(score, 0);
  EXPECT_TRUE(IsNearMiss("SE_IintPlugin", "SE_InitPlugin", &score));
  EXPECT_TRUE(IsNearMiss("TF_InitGraphPlugin", "TF_InitGraph", &score));
  EXPECT_EQ(score, 3);
  EXPECT_TRUE(IsNearMiss("TF_InitPlugin", "SE_InitPlugin", &score));
  EXPECT_TRUE(IsNearMiss("GetPJRTApi", "GetPjrtApi", &score));
  EXPECT_FALSE(IsNearMiss("SE_InitPlugin", "SE_InitPlugin", &score));
  EXPECT_FALSE(IsNearMiss("TF_NewStatus", "SE_InitPlugin", &score));
  EXPECT_FALSE(IsNearMiss("my_plugin_init", "SE_InitPlugin", &score));
  EXPECT_FALSE(IsNearMiss("TF_InitKernel", "TF_InitGraph", &score));
  EXPECT_FALSE(IsNearMiss("SE_InitPluginWithAVeryLongSuffix", "SE_InitPlugin", &score));
}

TEST(Names, MangledEntryPoint) {
  EXPECT_EQ(MangledEntryPoint("_Z13SE_InitPluginP29SE_PlatformRegistrationParamsP9TF_Status"),
            "SE_InitPlugin");
  EXPECT_EQ(MangledEntryPoint("_ZN6vendor13TF_InitKernelEv"), "TF_InitKernel");
  EXPECT_EQ(MangledEntryPoint("_Z10GetPjrtApiv"), "GetPjrtApi");
  EXPECT_EQ(MangledEntryPoint("_Z3fooP13SE_InitPlugin"), "");  // a parameter type, not the name
  EXPECT_EQ(MangledEntryPoint("_Z113SE_InitPluginv"), "");      // not length-prefixed 13
  EXPECT_EQ(MangledEntryPoint("SE_InitPlugin"), "");
  EXPECT_EQ(Demangle("_Z13SE_InitPluginP29SE_PlatformRegistrationParamsP9TF_Status"),
            "SE_InitPlugin(SE_PlatformRegistrationParams*, TF_Status*)");
  EXPECT_EQ(Demangle("not_mangled"), "not_mangled");
}

TEST(Names, InternalsNamespace) {
  EXPECT_EQ(InternalsNamespace("_ZN10tensorflow8internal15LogMessageFatalD1Ev"), "tensorflow::");
  EXPECT_EQ(InternalsNamespace("_ZN4absl12lts_202308026Status11EmptyStringEv"), "absl::");
  EXPECT_EQ(InternalsNamespace("_ZN3tsl6StatusC1Ev"), "tsl::");
  EXPECT_EQ(InternalsNamespace("_ZN3xla5ShapeD1Ev"), "xla::");
  EXPECT_EQ(InternalsNamespace("_ZN6google8protobuf7MessageD2Ev"), "google::protobuf::");
  // Outermost wins: a tensorflow:: function taking an absl:: type.
  EXPECT_EQ(InternalsNamespace("_ZN10tensorflow3FooEN4absl6StatusE"), "tensorflow::");
  EXPECT_EQ(InternalsNamespace("_ZNSt6vectorIN10tensorflow6TensorESaIS1_EED1Ev"), "tensorflow::");
  EXPECT_EQ(InternalsNamespace("_ZN6vendor13tslx_whateverEv"), "");  // "13tsl...", not "3tsl"
  EXPECT_EQ(InternalsNamespace("_ZNSt6vectorIiSaIiEED1Ev"), "");
  EXPECT_EQ(InternalsNamespace("TF_NewStatus"), "");
}

TEST(Wire, RoundTrip) {
  Finding a(RuleId::kSymUndefinedImport);
  a.Set("symbol", "TF_X").Set("releases", std::string("with\0nul", 8)).Set("empty", "");
  std::string bytes = EncodeFinding(a) + EncodeFinding(Finding(RuleId::kFileEmpty)) + EncodeEnd();
  Decoded d = DecodeReport(bytes);
  EXPECT_TRUE(d.complete);
  EXPECT_FALSE(d.malformed);
  ASSERT_EQ(d.findings.size(), 2u);
  EXPECT_EQ(d.findings[0].rule, RuleId::kSymUndefinedImport);
  EXPECT_EQ(d.findings[0].fields, a.fields);
  EXPECT_EQ(d.findings[1].rule, RuleId::kFileEmpty);
}

TEST(Wire, Malformed) {
  const std::string one = EncodeFinding(Finding(RuleId::kFileEmpty).Set("k", "value"));
  for (size_t cut = 1; cut < one.size(); ++cut) {  // cut anywhere: malformed, never complete
    Decoded d = DecodeReport(one.substr(0, cut));
    EXPECT_TRUE(d.malformed) << cut;
    EXPECT_FALSE(d.complete);
    EXPECT_TRUE(d.findings.empty());
  }
  EXPECT_FALSE(DecodeReport(one).complete);  // no end marker
  EXPECT_FALSE(DecodeReport(one).malformed);
  EXPECT_TRUE(DecodeReport(EncodeEnd() + "x").malformed);
  EXPECT_TRUE(DecodeReport("garbage").malformed);
  std::string bad_rule = one;
  bad_rule[1] = '\x7f';  // rule index 127
  EXPECT_TRUE(DecodeReport(bad_rule + EncodeEnd()).malformed);
  Decoded e = DecodeReport(EncodeError("boom"));
  EXPECT_EQ(e.error, "boom");
  EXPECT_FALSE(e.complete);
}

TEST(Isolation, Texts) {
  EXPECT_EQ(SignalName(SIGSEGV), "SIGSEGV (Segmentation fault)");
  EXPECT_EQ(SignalName(SIGABRT).substr(0, 7), "SIGABRT");
  EXPECT_EQ(DurationText(30000), "30 s");
  EXPECT_EQ(DurationText(500), "0.5 s");
  EXPECT_EQ(DurationText(1500), "1.5 s");
}

IsolatedRun RunPhase(const std::function<void(FindingSink&)>& body, unsigned timeout_ms = 10000) {
  IsolatedRun run;
  std::string error;
  EXPECT_TRUE(RunIsolated("test", body, timeout_ms, &run, &error)) << error;
  return run;
}

TEST(Isolation, Completes) {
  IsolatedRun run = RunPhase([](FindingSink& sink) {
    sink.Add(Finding(RuleId::kSymNoEntry).Set("detail", "d"));
    sink.Add(Finding(RuleId::kFileEmpty));
  });
  EXPECT_EQ(run.end, PhaseEnd::kCompleted);
  ASSERT_EQ(run.findings.size(), 2u);
  EXPECT_EQ(run.findings[0].rule, RuleId::kSymNoEntry);
  EXPECT_EQ(*Field(run.findings[0], "detail"), "d");
}

TEST(Isolation, ManyFindingsDoNotDeadlock) {  // more than a pipe buffer
  IsolatedRun run = RunPhase([](FindingSink& sink) {
    for (int i = 0; i < 5000; ++i) sink.Add(Finding(RuleId::kSymCxxInternals).Set("symbol", std::string(100, 'x')));
  });
  EXPECT_EQ(run.end, PhaseEnd::kCompleted);
  EXPECT_EQ(run.findings.size(), 5000u);
}

TEST(Isolation, CrashKeepsEarlierFindings) {
  IsolatedRun run = RunPhase([](FindingSink& sink) {
    sink.Add(Finding(RuleId::kSymNoEntry));
    raise(SIGSEGV);
  });
  EXPECT_EQ(run.end, PhaseEnd::kCrashed);
  ASSERT_EQ(run.findings.size(), 2u);
  EXPECT_EQ(run.findings[0].rule, RuleId::kSymNoEntry);
  EXPECT_EQ(run.findings[1].rule, RuleId::kIsolationCrash);
  EXPECT_EQ(*Field(run.findings[1], "phase"), "test");
  EXPECT_EQ(*Field(run.findings[1], "signal"), "SIGSEGV (Segmentation fault)");
}

TEST(Isolation, Abort) {
  IsolatedRun run = RunPhase([](FindingSink&) { std::abort(); });
  EXPECT_EQ(run.end, PhaseEnd::kCrashed);
  ASSERT_EQ(run.findings.size(), 1u);
  EXPECT_EQ(Field(run.findings[0], "signal")->substr(0, 7), "SIGABRT");
}

TEST(Isolation, TimeoutKillsTheChildAndItsChildren) {
  auto start = std::chrono::steady_clock::now();
  IsolatedRun run = RunPhase([](FindingSink&) {
    if (fork() == 0) {  // a grandchild holding the pipe open
      for (;;) pause();
    }
    for (;;) pause();
  }, 300);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(run.end, PhaseEnd::kTimedOut);
  EXPECT_LT(seconds, 5.0);
  ASSERT_EQ(run.findings.size(), 1u);
  EXPECT_EQ(run.findings[0].rule, RuleId::kIsolationTimeout);
  EXPECT_EQ(*Field(run.findings[0], "timeout"), "0.3 s");
}

TEST(Isolation, EarlyExit) {
  IsolatedRun run = RunPhase([](FindingSink&) { _exit(7); });
  EXPECT_EQ(run.end, PhaseEnd::kExited);
  ASSERT_EQ(run.findings.size(), 1u);
  EXPECT_EQ(run.findings[0].rule, RuleId::kIsolationExit);
  EXPECT_EQ(*Field(run.findings[0], "detail"), "exited with status 7 before its report was complete");
}

TEST(Isolation, ExitZeroWithoutReport) {
  IsolatedRun run = RunPhase([](FindingSink&) { _exit(0); });  // exit(0) in plugin code
  EXPECT_EQ(run.end, PhaseEnd::kExited);
  EXPECT_EQ(*Field(run.findings.at(0), "detail"), "exited with status 0 before its report was complete");
}

TEST(Isolation, Exception) {
  IsolatedRun run = RunPhase([](FindingSink&) { throw std::runtime_error("bad input"); });
  EXPECT_EQ(run.end, PhaseEnd::kExited);
  ASSERT_EQ(run.findings.size(), 1u);
  EXPECT_NE(Field(run.findings[0], "detail")->find("internal error: bad input"), std::string::npos);
}

TEST(Isolation, ParentStateUntouched) {
  int value = 1;
  RunPhase([&](FindingSink&) { value = 2; });
  EXPECT_EQ(value, 1);  // the phase ran in another process
}

// The generated layouts the registration phase (and the host) read plugin
// structs through: facts the rules depend on.
TEST(Layouts, StructSizesRevisionsChecks) {
  using tfp_shims::FindLayout;
  const tfp_shims::StructLayout* se = FindLayout("2.21", "SP_StreamExecutor");
  ASSERT_NE(se, nullptr);
  EXPECT_EQ(se->struct_size, 288u);
  EXPECT_STREQ(se->size_macro, "SP_STREAMEXECUTOR_STRUCT_SIZE");
  EXPECT_STREQ(se->revision, "SE3");
  EXPECT_TRUE(se->size_checked);
  EXPECT_EQ(FindLayout("2.5", "SP_StreamExecutor")->struct_size, 264u);
  EXPECT_STREQ(FindLayout("2.7", "SP_StreamExecutor")->revision, "SE2");
  EXPECT_EQ(FindLayout("2.8", "SP_Platform")->struct_size, 34u);
  EXPECT_EQ(FindLayout("2.21", "SP_Platform")->struct_size, 35u);
  // SP_TimerFns: checked while TF created timers (up to 2.13).
  EXPECT_TRUE(FindLayout("2.13", "SP_TimerFns")->size_checked);
  EXPECT_FALSE(FindLayout("2.14", "SP_TimerFns")->size_checked);
  EXPECT_EQ(FindLayout("2.21", "SP_NoSuchStruct"), nullptr);
  EXPECT_EQ(FindLayout("1.15", "SP_Platform"), nullptr);
  // Every release the validator knows has layouts.
  for (int i = 0; i < ReleaseCount(); ++i) {
    EXPECT_NE(FindLayout(Release(i), "SE_PlatformRegistrationParams"), nullptr) << Release(i);
  }
}

TEST(Layouts, RequiredFieldsPerRelease) {
  using tfp_shims::FindLayout;
  using tfp_shims::Requires;
  EXPECT_TRUE(Requires(FindLayout("2.13", "SP_PlatformFns"), "create_timer_fns"));
  EXPECT_FALSE(Requires(FindLayout("2.14", "SP_PlatformFns"), "create_timer_fns"));
  EXPECT_FALSE(Requires(FindLayout("2.6", "SP_StreamExecutor"), "memset"));
  EXPECT_TRUE(Requires(FindLayout("2.7", "SP_StreamExecutor"), "memset"));
  EXPECT_FALSE(Requires(FindLayout("2.21", "SP_PlatformFns"), "get_device_count"));  // unchecked
  const tfp_shims::RequiredField* r =
      tfp_shims::FindRequired(FindLayout("2.21", "SP_StreamExecutor"), "unified_memory_allocate");
  ASSERT_NE(r, nullptr);
  EXPECT_STREQ(r->condition, "SP_Platform.supports_unified_memory");
  EXPECT_FALSE(Requires(nullptr, "memset"));
}

TEST(Layouts, NamePattern) {
  EXPECT_STREQ(tfp_shims::NamePattern("2.21"), "[A-Z][A-Z_]*");
  EXPECT_TRUE(tfp_shims::MatchesNamePattern("2.21", "MY_DEVICE"));
  EXPECT_FALSE(tfp_shims::MatchesNamePattern("2.21", "my_device"));
  EXPECT_FALSE(tfp_shims::MatchesNamePattern("2.21", "_X"));
  EXPECT_FALSE(tfp_shims::MatchesNamePattern("2.21", ""));
  EXPECT_FALSE(tfp_shims::MatchesNamePattern("2.21", "GPU:0"));
}

TEST(PluginStruct, TensorFlowProblemsInOrder) {
  tfp_shims::PluginStruct platform("2.21", "SP_Platform");
  tfp_shims::PluginStruct se("2.21", "SP_StreamExecutor");
  auto problems = se.TensorFlowProblems(&platform);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems[0].kind, tfp_shims::StructProblem::kStructSizeZero);
  size_t unconditional = problems.size();
  platform.Set<unsigned char>("supports_unified_memory", 1);
  problems = se.TensorFlowProblems(&platform);
  EXPECT_EQ(problems.size(), unconditional + 2);  // the unified-memory pair
  // The same bytes through 2.5's layout: 2.5 requires no memset.
  se.PrefillStructSize();
  EXPECT_EQ(se.StructSize(), 288u);
  const tfp_shims::PluginStruct old("2.5", se);
  EXPECT_EQ(old.StructSize(), 288u);
  for (const auto& p : old.TensorFlowProblems(nullptr)) {
    EXPECT_NE(p.kind, tfp_shims::StructProblem::kStructSizeZero);
    EXPECT_STRNE(p.field, "memset");
  }
  TF_Status* status = TF_NewStatus();
  EXPECT_FALSE(se.CheckAsTensorFlow("2.21", &platform, status));
  EXPECT_EQ(TF_GetCode(status), TF_FAILED_PRECONDITION);
  EXPECT_NE(std::string(TF_Message(status)).find("SP_StreamExecutor.allocate is NULL"), std::string::npos);
  TF_DeleteStatus(status);
}

TEST(PluginStruct, PrepareSEInit) {
  tfp_shims::PluginStruct params("2.21", "SE_PlatformRegistrationParams");
  tfp_shims::PluginStruct platform("2.21", "SP_Platform");
  tfp_shims::PluginStruct fns("2.21", "SP_PlatformFns");
  tfp_shims::PrepareSEInit(&params, &platform, &fns, /*prefill_sizes=*/false);
  EXPECT_EQ(platform.StructSize(), 0u);
  EXPECT_EQ(params.Get<void*>("platform"), platform.data());
  EXPECT_EQ(params.Get<void*>("platform_fns"), fns.data());
  tfp_shims::PrepareSEInit(&params, &platform, &fns);
  EXPECT_EQ(platform.StructSize(), 35u);
  EXPECT_EQ(fns.StructSize(), tfp_shims::FindLayout("2.21", "SP_PlatformFns")->struct_size);
}

}  // namespace
}  // namespace tfp_validator
