// SPDX-License-Identifier: Apache-2.0
// Phase 5, kernels: the plugin opened through the host (tfplugin/host.h),
// which registers its platform and calls TF_InitKernel as TensorFlow does.
// A listing child checks what was registered (TFP-KERN-DEVICE-TYPE,
// TFP-KERN-DUPLICATE); then each op of a reference set runs in a child of
// its own on device 0 for each registered float32 (and int32) kernel, on
// deterministic random inputs, and is compared with src/reference
// (TFP-KERN-NUMERICS, TFP-KERN-RUN-FAILED). A child that crashes or hangs
// becomes TFP-KERN-RUN-FAILED for its op. Children report their counts as
// TFP-KERN-SUMMARY findings, which this process folds into one.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <elf.h>

#include "owned_status.h"
#include "elf_file.h"
#include "isolation.h"
#include "phases.h"
#include "reference.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"
#include "tfplugin/host.h"

namespace tfp_validator {
namespace {

using tfp_reference::Shape;
using tfp_reference::ShapeText;

// ---- Tolerances, in one place (documented in rules.toml, TFP-KERN-NUMERICS)
constexpr double kFloatAbs = 1e-5;       // float32 elementwise: abs + rel * |want|
constexpr double kFloatRel = 1e-5;
constexpr double kMatMulRelPerK = 1e-4;  // float32 MatMul: 1e-4 * K * (1 + |want|)
// int32: exact.

const char* const kReferenceOps[] = {"AddV2", "Sub", "Mul", "RealDiv", "Relu", "Identity",
                                     "MatMul"};
constexpr unsigned kReferenceOpCount = sizeof kReferenceOps / sizeof kReferenceOps[0];


// The host, opened for the targeted release; closed on scope exit.
class Host {
 public:
  Host(const PhaseContext& context, std::string* error) {
    tfp_host_options options{};
    options.struct_size = TFP_HOST_OPTIONS_STRUCT_SIZE;
    options.tf_release = context.release.c_str();
    OwnedStatus s;
    host_ = tfp_host_open(context.path.c_str(), &options, s.get());
    if (host_ == nullptr) *error = s.text();
  }
  // Closed only in this process (--in-process): in a child the process ends
  // instead, so a plugin whose teardown crashes (the runtime phase's
  // TFP-RT-TEARDOWN) does not fail its kernels as well.
  ~Host() {
    if (close_) tfp_host_close(host_);
  }
  void CloseOnExit(bool close) { close_ = close; }
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;
  tfp_host* get() { return host_; }

 private:
  tfp_host* host_ = nullptr;
  bool close_ = true;
};

std::string TypeName(TF_DataType t) {
  switch (t) {
    case TF_FLOAT: return "float";
    case TF_INT32: return "int32";
    default: return "dtype " + std::to_string(static_cast<int>(t));
  }
}

// The host's one-line description (KernelDef::Describe: op, device type,
// constraints, host memory, label, priority) and the registered name.
std::string KernelText(const tfp_kernel_info& k) {
  return std::string(k.description) + " (\"" + k.name + "\")";
}

Finding Summary(const std::string& kernel, const std::string& detail, const std::string& want,
                const std::string& got) {
  return Finding(RuleId::kKernSummary)
      .Set("kernel", kernel)
      .Set("detail", detail)
      .Set("want", want)
      .Set("got", got);
}

// ---- The listing child: device types and duplicates
void ListKernels(const PhaseContext& context, FindingSink& sink) {
  std::string error;
  Host host(context, &error);
  host.CloseOnExit(context.in_process);
  if (host.get() == nullptr) {
    // The registration phase reports why the plugin does not load.
    sink.Add(Summary("TF_InitKernel", "the host could not open the plugin: " + error,
                     "the plugin to load", "kernel checks skipped").Set("state", "skip"));
    return;
  }
  if (!(tfp_host_entry_points(host.get()) & TFP_ENTRY_TF_INIT_KERNEL)) {
    sink.Add(Summary("TF_InitKernel", "the plugin does not export TF_InitKernel: no kernels to check",
                     "TF_InitKernel", "not exported; kernel checks skipped")
                 .Set("state", "skip"));
    return;
  }
  const char* platform_type = tfp_host_platform_type(host.get());
  const int count = tfp_host_kernel_count(host.get());
  std::map<std::string, std::string> seen;  // key -> the first kernel's text
  for (int i = 0; i < count; ++i) {
    tfp_kernel_info k{};
    k.struct_size = TFP_KERNEL_INFO_STRUCT_SIZE;
    if (tfp_host_kernel_info(host.get(), i, &k) != 0) continue;
    const std::string text = KernelText(k);
    const std::string type = k.device_type;
    if (platform_type != nullptr && type != platform_type && type != "CPU") {
      sink.Add(Finding(RuleId::kKernDeviceType)
                   .Set("kernel", text)
                   .Set("detail", "registered for device type \"" + type +
                                      "\", but the plugin's platform type is \"" + platform_type + "\"")
                   .Set("want", std::string("\"") + platform_type + "\" (or \"CPU\")")
                   .Set("got", "\"" + type + "\""));
    }
    std::vector<std::string> constraints;
    for (int c = 0; c < k.num_type_constraints; ++c) {
      constraints.push_back(std::string(k.constraint_attrs[c]) + "=" +
                            std::to_string(static_cast<int>(k.constraint_types[c])));
    }
    std::sort(constraints.begin(), constraints.end());
    std::string key = std::string(k.op) + "\x1f" + type + "\x1f" + k.label + "\x1f" +
                      std::to_string(k.priority);
    for (const std::string& c : constraints) key += "\x1f" + c;
    auto [it, fresh] = seen.emplace(key, text);
    if (!fresh) {
      sink.Add(Finding(RuleId::kKernDuplicate)
                   .Set("kernel", text)
                   .Set("detail", "registered again with the same op, device type, label, type "
                                  "constraints and priority as " + it->second +
                                  ": TensorFlow fails every node that matches them")
                   .Set("want", "one registration")
                   .Set("got", "a second registration"));
    }
  }
  const int devices = tfp_host_device_count(host.get());
  sink.Add(Summary("TF_InitKernel", "", "", "")
               .Set("state", devices > 0 ? "run" : "nodevice")
               .Set("kernels", std::to_string(count)));
}

// ---- Inputs and cases
uint32_t g_rng = 0x2545f491u;
uint32_t Next() {
  g_rng = g_rng * 1664525u + 1013904223u;
  return g_rng >> 8;
}
float RandomFloat(bool nonzero) {
  const float u = static_cast<float>(Next() & 0xffff) / 65535.0f;  // [0, 1]
  if (!nonzero) return -2.0f + 4.0f * u;
  return (Next() & 1 ? 1.0f : -1.0f) * (0.5f + 1.5f * u);  // |x| in [0.5, 2]
}
int32_t RandomInt(bool nonzero) {
  const int32_t v = static_cast<int32_t>(Next() % 201) - 100;
  return nonzero && v == 0 ? 7 : v;
}

struct Tensor {
  TF_DataType dtype;
  Shape shape;
  std::vector<float> f;
  std::vector<int32_t> i;
  const void* data() const { return dtype == TF_FLOAT ? static_cast<const void*>(f.data()) : i.data(); }
  size_t bytes() const { return dtype == TF_FLOAT ? f.size() * 4 : i.size() * 4; }
};

Tensor Random(TF_DataType dtype, const Shape& shape, bool nonzero) {
  Tensor t{dtype, shape, {}, {}};
  const int64_t n = tfp_reference::NumElements(shape);
  for (int64_t k = 0; k < n; ++k) {
    if (dtype == TF_FLOAT) t.f.push_back(RandomFloat(nonzero));
    else t.i.push_back(RandomInt(nonzero));
  }
  return t;
}

// One op to run: its inputs, bool attrs, the reference result, a name.
struct Case {
  std::string what;  // "[3,4] + [4]"
  std::vector<Tensor> inputs;
  std::vector<std::pair<const char*, bool>> attrs;
  Tensor want;
  double matmul_k = -1;  // MatMul: the inner dimension (tolerance); else -1
};

std::vector<Case> BinaryCases(const std::string& op, TF_DataType dtype) {
  tfp_reference::Binary bop;
  tfp_reference::BinaryFromOp(op, &bop);
  const char* sign = op == "AddV2" ? " + " : op == "Sub" ? " - " : op == "Mul" ? " * " : " / ";
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {4}},   {{2, 1, 5}, {3, 1}}, {{}, {}},       {{7}, {}},     {{}, {5}},
      {{0}, {0}},      {{0, 3}, {3}},       {{1}, {1}},     {{13}, {13}},  {{3, 5, 7}, {3, 5, 7}},
      {{1, 17}, {9, 1}}};
  std::vector<Case> cases;
  for (const auto& [xs, ys] : shapes) {
    Case c;
    c.what = ShapeText(xs) + sign + ShapeText(ys);
    c.inputs = {Random(dtype, xs, false), Random(dtype, ys, op == "RealDiv")};
    Shape out;
    tfp_reference::BroadcastShape(xs, ys, &out);
    c.want = Tensor{dtype, out, {}, {}};
    const int64_t n = tfp_reference::NumElements(out);
    if (dtype == TF_FLOAT) {
      c.want.f.resize(n);
      tfp_reference::BinaryOp(bop, c.inputs[0].f.data(), xs, c.inputs[1].f.data(), ys,
                              c.want.f.data(), out);
    } else {
      c.want.i.resize(n);
      tfp_reference::BinaryOp(bop, c.inputs[0].i.data(), xs, c.inputs[1].i.data(), ys,
                              c.want.i.data(), out);
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<Case> UnaryCases(const std::string& op, TF_DataType dtype) {
  std::vector<Case> cases;
  for (const Shape& s : std::vector<Shape>{{}, {0}, {1}, {31}, {4, 7}}) {
    Case c;
    c.what = op + "(" + ShapeText(s) + ")";
    c.inputs = {Random(dtype, s, false)};
    c.want = Tensor{dtype, s, {}, {}};
    const int64_t n = tfp_reference::NumElements(s);
    if (dtype == TF_FLOAT) {
      c.want.f.resize(n);
      if (op == "Relu") tfp_reference::Relu(c.inputs[0].f.data(), n, c.want.f.data());
      else tfp_reference::Identity(c.inputs[0].f.data(), n, c.want.f.data());
    } else {
      c.want.i.resize(n);
      if (op == "Relu") tfp_reference::Relu(c.inputs[0].i.data(), n, c.want.i.data());
      else tfp_reference::Identity(c.inputs[0].i.data(), n, c.want.i.data());
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<Case> MatMulCases(TF_DataType dtype) {
  struct Mkn { int64_t m, k, n; };
  std::vector<Case> cases;
  for (const Mkn& d : {Mkn{1, 1, 1}, Mkn{3, 5, 7}, Mkn{1, 9, 4}, Mkn{8, 1, 3}, Mkn{5, 17, 1}}) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      Case c;
      const Shape as = ta ? Shape{d.k, d.m} : Shape{d.m, d.k};
      const Shape bs = tb ? Shape{d.n, d.k} : Shape{d.k, d.n};
      c.what = "MatMul(" + ShapeText(as) + ", " + ShapeText(bs) + ", transpose_a=" +
               (ta ? "true" : "false") + ", transpose_b=" + (tb ? "true" : "false") + ")";
      c.inputs = {Random(dtype, as, false), Random(dtype, bs, false)};
      c.attrs = {{"transpose_a", ta}, {"transpose_b", tb}};
      c.want = Tensor{dtype, {d.m, d.n}, {}, {}};
      c.matmul_k = static_cast<double>(d.k);
      if (dtype == TF_FLOAT) {
        c.want.f.resize(d.m * d.n);
        tfp_reference::MatMul(c.inputs[0].f.data(), c.inputs[1].f.data(), d.m, d.k, d.n, ta, tb,
                              c.want.f.data());
      } else {
        c.want.i.resize(d.m * d.n);
        tfp_reference::MatMul(c.inputs[0].i.data(), c.inputs[1].i.data(), d.m, d.k, d.n, ta, tb,
                              c.want.i.data());
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Runs `c`; "" if the result is right, else a finding is sent. Returns true if it passed.
bool RunCase(tfp_host* host, const std::string& op, const std::string& kernel, const Case& c,
             FindingSink& sink) {
  auto failed = [&](const std::string& detail, const std::string& got) {
    sink.Add(Finding(RuleId::kKernRunFailed)
                 .Set("kernel", kernel)
                 .Set("detail", c.what + ": " + detail)
                 .Set("want", "a result")
                 .Set("got", got));
    return false;
  };
  OwnedStatus s;
  tfp_op* node = tfp_op_new(host, op.c_str(), 0, s.get());
  if (node == nullptr) return failed("tfp_op_new failed", s.text());
  struct Deleter {
    tfp_op* op;
    ~Deleter() { tfp_op_delete(op); }
  } deleter{node};
  for (const auto& [name, value] : c.attrs) tfp_op_set_attr_bool(node, name, value);
  for (const Tensor& t : c.inputs) {
    TF_Tensor* in = TF_AllocateTensor(t.dtype, t.shape.data(), static_cast<int>(t.shape.size()),
                                      t.bytes());
    if (in == nullptr) return failed("cannot make an input tensor", "TF_AllocateTensor failed");
    if (t.bytes() > 0) std::memcpy(TF_TensorData(in), t.data(), t.bytes());
    tfp_op_add_input(node, in, s.get());
    TF_DeleteTensor(in);
    if (!s.ok()) return failed("tfp_op_add_input failed", s.text());
  }
  tfp_op_run(node, s.get());
  if (!s.ok()) return failed("the kernel failed", s.text());
  const TF_Tensor* out = tfp_op_output(node, 0);
  if (out == nullptr) return failed("no output 0", "no output");
  Shape got_shape;
  for (int d = 0; d < TF_NumDims(out); ++d) got_shape.push_back(TF_Dim(out, d));
  auto numerics = [&](const std::string& detail, const std::string& want, const std::string& got) {
    sink.Add(Finding(RuleId::kKernNumerics)
                 .Set("kernel", kernel)
                 .Set("detail", c.what + ": " + detail)
                 .Set("want", want)
                 .Set("got", got));
    return false;
  };
  if (got_shape != c.want.shape || TF_TensorType(out) != c.want.dtype) {
    return numerics("output of the wrong shape or type",
                    TypeName(c.want.dtype) + " " + ShapeText(c.want.shape),
                    TypeName(TF_TensorType(out)) + " " + ShapeText(got_shape));
  }
  const int64_t n = tfp_reference::NumElements(c.want.shape);
  double max_abs = 0, max_rel = 0;
  int64_t first_bad = -1;
  double bad_got = 0, bad_want = 0;
  for (int64_t i = 0; i < n; ++i) {
    double g, w, tol;
    if (c.want.dtype == TF_FLOAT) {
      g = static_cast<const float*>(TF_TensorData(out))[i];
      w = c.want.f[i];
      tol = c.matmul_k >= 0 ? kMatMulRelPerK * c.matmul_k * (1 + std::fabs(w))
                            : kFloatAbs + kFloatRel * std::fabs(w);
    } else {
      g = static_cast<const int32_t*>(TF_TensorData(out))[i];
      w = c.want.i[i];
      tol = 0;
    }
    const double err = std::isnan(g) != std::isnan(w) ? INFINITY : std::isnan(g) ? 0 : std::fabs(g - w);
    max_abs = std::max(max_abs, err);
    if (w != 0) max_rel = std::max(max_rel, err / std::fabs(w));
    if (!(err <= tol) && first_bad < 0) first_bad = i, bad_got = g, bad_want = w;
  }
  if (first_bad < 0) return true;
  const std::string tolerance =
      c.want.dtype != TF_FLOAT ? "exact"
      : c.matmul_k >= 0 ? "|error| <= " + Num(kMatMulRelPerK) + " * K * (1 + |want|), K = " + Num(c.matmul_k)
                        : "|error| <= " + Num(kFloatAbs) + " + " + Num(kFloatRel) + " * |want|";
  return numerics("max abs error " + Num(max_abs) + ", max rel error " + Num(max_rel) +
                      "; first bad element " + std::to_string(first_bad) + " of " +
                      std::to_string(n) + ": got " + Num(bad_got) + ", want " + Num(bad_want),
                  tolerance, "element " + std::to_string(first_bad) + " = " + Num(bad_got));
}

// ---- An op's child: its kernels for the platform type, each dtype's cases
void CheckOp(const PhaseContext& context, const std::string& op, FindingSink& sink) {
  std::string error;
  Host host(context, &error);
  host.CloseOnExit(context.in_process);
  if (host.get() == nullptr) return;
  const char* platform_type = tfp_host_platform_type(host.get());
  if (platform_type == nullptr || tfp_host_device_count(host.get()) <= 0) return;
  std::map<TF_DataType, std::string> dtypes;  // to check -> a kernel's text
  std::set<TF_DataType> duplicated;  // TFP-KERN-DUPLICATE (the listing reports it): not run
  std::set<std::string> keys;
  for (int i = 0; i < tfp_host_kernel_count(host.get()); ++i) {
    tfp_kernel_info k{};
    k.struct_size = TFP_KERNEL_INFO_STRUCT_SIZE;
    if (tfp_host_kernel_info(host.get(), i, &k) != 0) continue;
    if (op != k.op || std::string(platform_type) != k.device_type || k.label[0] != '\0') continue;
    std::string key = std::to_string(k.priority);
    std::vector<TF_DataType> types;
    bool constrained = false;
    for (int c = 0; c < k.num_type_constraints; ++c) {
      key += std::string("\x1f") + k.constraint_attrs[c] + "=" +
             std::to_string(static_cast<int>(k.constraint_types[c]));
      if (std::string(k.constraint_attrs[c]) != "T") continue;
      constrained = true;
      const TF_DataType t = k.constraint_types[c];
      if (t == TF_FLOAT || (t == TF_INT32 && op != "RealDiv")) types.push_back(t);
    }
    if (!constrained) types.push_back(TF_FLOAT);
    const bool again = !keys.insert(key).second;
    for (TF_DataType t : types) {
      dtypes.emplace(t, "");
      if (again) duplicated.insert(t);
    }
  }
  for (TF_DataType t : duplicated) dtypes.erase(t);
  size_t cases = 0, passed = 0;
  for (auto& [dtype, unused] : dtypes) {
    (void)unused;
    const std::string kernel = op + " on " + platform_type + " {T=" + TypeName(dtype) + "}";
    std::vector<Case> list = op == "MatMul" ? MatMulCases(dtype)
                             : op == "Relu" || op == "Identity" ? UnaryCases(op, dtype)
                                                                : BinaryCases(op, dtype);
    for (const Case& c : list) {
      ++cases;
      if (RunCase(host.get(), op, kernel, c, sink)) ++passed;
    }
  }
  std::string types;
  for (const auto& [dtype, unused] : dtypes) types += (types.empty() ? "" : ",") + TypeName(dtype);
  sink.Add(Summary(op, "", "", "")
               .Set("state", "op")
               .Set("types", types)
               .Set("cases", std::to_string(cases))
               .Set("passed", std::to_string(passed)));
}

std::string Field(const Finding& f, const std::string& name) {
  for (const auto& [k, v] : f.fields) {
    if (k == name) return v;
  }
  return "";
}

}  // namespace

unsigned KernelsChildCount() { return kReferenceOpCount + 1; }

void RunKernelsPhase(const PhaseContext& context, FindingSink& sink) {
  // TF_InitKernel must be an exported function before the host calls it (the
  // symbols phase reports anything else: TFP-SYM-ENTRY-NOT-FUNCTION, ...).
  const SymbolTables symbols = ReadSymbols(context.path);
  std::string entry = "not exported";
  for (const ElfSymbol& sym : symbols.dynamic) {
    if (sym.name != "TF_InitKernel" || !sym.defined) continue;
    entry = sym.type == STT_FUNC || sym.type == STT_GNU_IFUNC ? "" : SymbolTypeName(sym.type);
  }
  if (!entry.empty()) {
    sink.Add(Summary("TF_InitKernel",
                     "the plugin does not export TF_InitKernel as a function: no kernels to check",
                     "TF_InitKernel, a function", entry + "; kernel checks skipped"));
    return;
  }
  IsolatedRun listing;
  std::string error;
  auto list_body = [&](FindingSink& s) { ListKernels(context, s); };
  if (!RunPhase("kernels listing", list_body, context.timeout_ms, context.in_process, &listing,
                &error)) {
    throw std::runtime_error("cannot start a child for the kernel listing: " + error);
  }
  std::string state, kernels = "0";
  for (Finding& f : listing.findings) {
    if (f.rule == RuleId::kKernSummary) {
      state = Field(f, "state");
      kernels = Field(f, "kernels");
      if (state == "skip") sink.Add(Summary(Field(f, "kernel"), Field(f, "detail"), Field(f, "want"), Field(f, "got")));
      continue;
    }
    if (GetRule(f.rule).phase == Phase::kIsolation) {
      f = Finding(RuleId::kKernRunFailed)
              .Set("kernel", "TF_InitKernel")
              .Set("detail", std::string("opening the plugin through the host and listing its "
                                         "kernels: the process died (") +
                                 GetRule(f.rule).id + ")")
              .Set("want", "the kernels listed")
              .Set("got", Render(GetRule(f.rule).actual, f.fields));
    }
    sink.Add(std::move(f));
  }
  if (state == "skip" || state.empty()) return;
  if (state == "nodevice") {
    sink.Add(Summary("TF_InitKernel", kernels + " kernels listed; no device to run them on",
                     "a device", "numerics checks skipped"));
    return;
  }

  std::string checked;
  size_t cases = 0, passed = 0;
  for (const char* op : kReferenceOps) {
    IsolatedRun run;
    auto body = [&](FindingSink& s) { CheckOp(context, op, s); };
    const std::string name = std::string("kernels check ") + op;
    if (!RunPhase(name.c_str(), body, context.timeout_ms, context.in_process, &run, &error)) {
      throw std::runtime_error("cannot start a child for " + name + ": " + error);
    }
    for (Finding& f : run.findings) {
      if (f.rule == RuleId::kKernSummary) {
        if (Field(f, "types").empty()) continue;
        checked += (checked.empty() ? "" : ", ") + std::string(op) + " (" + Field(f, "types") + ")";
        cases += std::stoul(Field(f, "cases"));
        passed += std::stoul(Field(f, "passed"));
        continue;
      }
      if (GetRule(f.rule).phase == Phase::kIsolation) {
        f = Finding(RuleId::kKernRunFailed)
                .Set("kernel", op)
                .Set("detail", std::string("running ") + op + " on its reference cases: " +
                                   Render(GetRule(f.rule).message, f.fields))
                .Set("want", "the kernel returns")
                .Set("got", Render(GetRule(f.rule).actual, f.fields));
      }
      sink.Add(std::move(f));
    }
  }
  sink.Add(Summary("TF_InitKernel",
                   kernels + " kernels listed; reference ops checked: " +
                       (checked.empty() ? "none registered" : checked),
                   "every case passes",
                   std::to_string(passed) + " of " + std::to_string(cases) + " cases pass"));
}

}  // namespace tfp_validator
