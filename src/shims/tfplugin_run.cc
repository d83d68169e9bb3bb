// SPDX-License-Identifier: Apache-2.0
// tfplugin-run: a plugin author's "hello world". Loads a plugin the way
// TensorFlow does (through the host, include/tfplugin/host.h) and
//   list      prints what it registered: platform, devices, kernels, ops;
//   op        runs one op on given (or random) inputs and prints outputs;
//   discover  prints the plugin files TF would load from a folder or
//             $TF_PLUGGABLE_DEVICE_LIBRARY_PATH.
// Exit status: 0 ok, 1 the plugin or op failed, 2 bad usage.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attr_value.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"
#include "tfplugin/host.h"
#include "tfplugin_shims.h"

namespace {

const char kUsage[] =
    "usage: tfplugin-run list PLUGIN.so [--tf RELEASE]\n"
    "       tfplugin-run op PLUGIN.so OP [--input SPEC]... [--attr NAME=VALUE]...\n"
    "                          [--device N] [--repeat N] [--seed N] [--tf RELEASE]\n"
    "       tfplugin-run discover [FOLDER]\n"
    "\n"
    "SPEC is DTYPE:SHAPE[=VALUES]: float:2x3 (random values), int32:4=1,2,3,4,\n"
    "float:scalar=2.5, float:0x3 (empty), float:2x2=ones|zeros|iota|random.\n"
    "Attrs are parsed by the op's attr type: transpose_a=true, T=float,\n"
    "strides=[1,1,1,1], padding=SAME. Type attrs the inputs determine are inferred.\n"
    "--tf RELEASE emulates that TensorFlow release (default: the newest).\n";

struct Status {
  TF_Status* s = TF_NewStatus();
  ~Status() { TF_DeleteStatus(s); }
  bool ok() const { return TF_GetCode(s) == TF_OK; }
  const char* msg() const { return TF_Message(s); }
};

int Usage(const std::string& why) {
  std::fprintf(stderr, "tfplugin-run: %s\n\n%s", why.c_str(), kUsage);
  return 2;
}

std::string CodeName(TF_Code c) {
  static const char* names[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
                                "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
                                "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  return c >= 0 && c <= 16 ? names[c] : "code " + std::to_string(c);
}

void PrintNotes() {
  for (size_t i = 0; i < tfp_shims_contract_note_count(); ++i) {
    std::printf("note: %s\n", tfp_shims_contract_note(i));
  }
  if (tfp_shims_unimplemented_calls() > 0) {
    std::printf("note: the plugin called %llu function(s) the shims do not implement (last: %s)\n",
                static_cast<unsigned long long>(tfp_shims_unimplemented_calls()), tfp_shims_last_unimplemented());
  }
}

// ---- 16-bit floats, for printing and filling half/bfloat16 tensors
float HalfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v = exp == 0 ? std::ldexp(static_cast<float>(man), -24)
            : exp == 31 ? (man ? NAN : INFINITY)
                        : std::ldexp(static_cast<float>(man | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}
uint16_t FloatToHalf(float f) {  // round to nearest; enough for test inputs
  if (std::isnan(f)) return 0x7e00;
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  f = std::fabs(f);
  if (f >= 65520.f) return sign | 0x7c00;
  if (f < 6.1035156e-05f) return sign | static_cast<uint16_t>(std::lround(f / 5.9604645e-08f));
  int e;
  float m = std::frexp(f, &e);  // f = m * 2^e, m in [0.5, 1)
  uint32_t man = static_cast<uint32_t>(std::lround((m * 2 - 1) * 1024));
  uint32_t exp = static_cast<uint32_t>(e - 1 + 15);
  if (man == 1024) { man = 0; ++exp; }
  return static_cast<uint16_t>(sign | exp << 10 | man);
}
float Bf16ToFloat(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

// Element `i` of a tensor as a double (or NaN for unsupported types).
double Get(const TF_Tensor* t, int64_t i) {
  const void* p = TF_TensorData(t);
  switch (TF_TensorType(t)) {
    case TF_FLOAT: return static_cast<const float*>(p)[i];
    case TF_DOUBLE: return static_cast<const double*>(p)[i];
    case TF_INT32: return static_cast<const int32_t*>(p)[i];
    case TF_INT64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case TF_INT16: return static_cast<const int16_t*>(p)[i];
    case TF_INT8: return static_cast<const int8_t*>(p)[i];
    case TF_UINT8: return static_cast<const uint8_t*>(p)[i];
    case TF_UINT16: return static_cast<const uint16_t*>(p)[i];
    case TF_UINT32: return static_cast<const uint32_t*>(p)[i];
    case TF_UINT64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case TF_BOOL: return static_cast<const uint8_t*>(p)[i];
    case TF_HALF: return HalfToFloat(static_cast<const uint16_t*>(p)[i]);
    case TF_BFLOAT16: return Bf16ToFloat(static_cast<const uint16_t*>(p)[i]);
    default: return NAN;
  }
}

bool Put(TF_Tensor* t, int64_t i, double v) {
  void* p = TF_TensorData(t);
  switch (TF_TensorType(t)) {
    case TF_FLOAT: static_cast<float*>(p)[i] = static_cast<float>(v); return true;
    case TF_DOUBLE: static_cast<double*>(p)[i] = v; return true;
    case TF_INT32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return true;
    case TF_INT64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); return true;
    case TF_INT16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); return true;
    case TF_INT8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); return true;
    case TF_UINT8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); return true;
    case TF_UINT16: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); return true;
    case TF_UINT32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); return true;
    case TF_UINT64: static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); return true;
    case TF_BOOL: static_cast<uint8_t*>(p)[i] = v != 0; return true;
    case TF_HALF: static_cast<uint16_t*>(p)[i] = FloatToHalf(static_cast<float>(v)); return true;
    case TF_BFLOAT16: static_cast<uint16_t*>(p)[i] = FloatToBf16(static_cast<float>(v)); return true;
    default: return false;
  }
}

bool IsFloating(TF_DataType t) { return t == TF_FLOAT || t == TF_DOUBLE || t == TF_HALF || t == TF_BFLOAT16; }

// DTYPE:SHAPE[=VALUES] -> a host tensor; NULL with *error set.
TF_Tensor* ParseInput(const std::string& spec, std::mt19937_64* rng, std::string* error) {
  size_t colon = spec.find(':');
  if (colon == std::string::npos) {
    *error = "input '" + spec + "': expected DTYPE:SHAPE[=VALUES], e.g. float:2x3";
    return nullptr;
  }
  TF_DataType dtype;
  if (!tfp_shims::ParseDataType(spec.substr(0, colon), &dtype) || TF_DataTypeSize(dtype) == 0) {
    *error = "input '" + spec + "': unknown or unsupported dtype '" + spec.substr(0, colon) + "'";
    return nullptr;
  }
  std::string rest = spec.substr(colon + 1), shape_text = rest, values;
  size_t eq = rest.find('=');
  if (eq != std::string::npos) {
    shape_text = rest.substr(0, eq);
    values = rest.substr(eq + 1);
  }
  std::vector<int64_t> dims;
  if (shape_text != "scalar" && shape_text != "[]" && !shape_text.empty()) {
    std::stringstream ss(shape_text);
    std::string d;
    while (std::getline(ss, d, 'x')) {
      char* end = nullptr;
      long long v = std::strtoll(d.c_str(), &end, 10);
      if (d.empty() || *end != '\0' || v < 0) {
        *error = "input '" + spec + "': bad dimension '" + d + "' (shape is like 2x3, 5, scalar)";
        return nullptr;
      }
      dims.push_back(v);
    }
  }
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  TF_Tensor* t = TF_AllocateTensor(dtype, dims.data(), static_cast<int>(dims.size()),
                                   static_cast<size_t>(n) * TF_DataTypeSize(dtype));
  if (t == nullptr) {
    *error = "input '" + spec + "': cannot allocate";
    return nullptr;
  }
  std::vector<double> given;
  if (values.empty() || values == "random") {
    std::uniform_real_distribution<double> real(-1, 1);
    std::uniform_int_distribution<int> integer(0, 9);
    for (int64_t i = 0; i < n; ++i) given.push_back(IsFloating(dtype) ? real(*rng) : integer(*rng));
  } else if (values == "zeros" || values == "ones") {
    given.assign(static_cast<size_t>(n), values == "ones" ? 1 : 0);
  } else if (values == "iota") {
    for (int64_t i = 0; i < n; ++i) given.push_back(static_cast<double>(i));
  } else {
    std::stringstream ss(values);
    std::string v;
    while (std::getline(ss, v, ',')) {
      char* end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0') {
        *error = "input '" + spec + "': bad value '" + v + "'";
        TF_DeleteTensor(t);
        return nullptr;
      }
      given.push_back(x);
    }
    if (static_cast<int64_t>(given.size()) != n) {
      *error = "input '" + spec + "': " + std::to_string(given.size()) + " values for " + std::to_string(n) +
               " elements";
      TF_DeleteTensor(t);
      return nullptr;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!Put(t, i, given[static_cast<size_t>(i)])) {
      *error = "input '" + spec + "': cannot fill a " + tfp_shims::DataTypeName(dtype) + " tensor";
      TF_DeleteTensor(t);
      return nullptr;
    }
  }
  return t;
}

std::string ShapeText(const TF_Tensor* t) {
  std::vector<int64_t> dims;
  for (int d = 0; d < TF_NumDims(t); ++d) dims.push_back(TF_Dim(t, d));
  return tfp_shims::ShapeText(tfp_shims::Shape{false, dims});
}

void PrintTensor(const char* label, const TF_Tensor* t) {
  std::printf("%s: %s %s", label, tfp_shims::DataTypeName(TF_TensorType(t)), ShapeText(t).c_str());
  int64_t n = TF_TensorElementCount(t);
  const int64_t kShown = 24;
  std::printf(" = [");
  for (int64_t i = 0; i < std::min(n, kShown); ++i) {
    double v = Get(t, i);
    if (IsFloating(TF_TensorType(t))) {
      std::printf("%s%.6g", i ? ", " : "", v);
    } else {
      std::printf("%s%.0f", i ? ", " : "", v);
    }
  }
  std::printf("%s]\n", n > kShown ? ", ..." : "");
}

tfp_host* Open(const std::string& path, const std::string& release, Status* st) {
  tfp_host_options opts{};
  opts.struct_size = TFP_HOST_OPTIONS_STRUCT_SIZE;
  opts.tf_release = release.empty() ? nullptr : release.c_str();
  return tfp_host_open(path.c_str(), &opts, st->s);
}

int List(const std::string& path, const std::string& release) {
  Status st;
  tfp_host* h = Open(path, release, &st);
  if (h == nullptr) {
    std::fprintf(stderr, "tfplugin-run: %s: %s\n", CodeName(TF_GetCode(st.s)).c_str(), st.msg());
    PrintNotes();
    return 1;
  }
  std::printf("plugin: %s\nemulating: TensorFlow %s\nentry points:", tfp_host_path(h), tfp_host_release(h));
  for (unsigned i = 0; i < TFP_ENTRY_COUNT; ++i) {
    if (tfp_host_entry_points(h) & (1u << i)) std::printf(" %s", tfp_host_entry_point_name(1u << i));
  }
  std::printf("\n");
  if (tfp_host_platform_name(h) != nullptr) {
    std::printf("platform: name %s, type %s, %d device(s)\n", tfp_host_platform_name(h), tfp_host_platform_type(h),
                tfp_host_device_count(h));
    for (int d = 0; d < tfp_host_device_count(h); ++d) {
      tfp_device_info info{};
      info.struct_size = TFP_DEVICE_INFO_STRUCT_SIZE;
      tfp_host_device_info(h, d, &info, st.s);
      if (!st.ok()) {
        std::printf("  device %d: %s\n", d, st.msg());
        continue;
      }
      auto s = [](const char* p) { return p ? p : "-"; };
      std::printf("  %s: hardware %s, vendor %s, pci %s, numa %lld, bandwidth %lld B/s, %.1f GFLOP/s, memory %lld of %lld bytes free\n",
                  info.name, s(info.hardware_name), s(info.device_vendor), s(info.pci_bus_id),
                  static_cast<long long>(info.numa_node), static_cast<long long>(info.memory_bandwidth), info.gflops,
                  static_cast<long long>(info.memory_free), static_cast<long long>(info.memory_total));
    }
  } else {
    std::printf("platform: none (no SE_InitPlugin)\n");
  }
  std::printf("kernels: %d\n", tfp_host_kernel_count(h));
  for (int i = 0; i < tfp_host_kernel_count(h); ++i) {
    tfp_kernel_info k{};
    k.struct_size = TFP_KERNEL_INFO_STRUCT_SIZE;
    if (tfp_host_kernel_info(h, i, &k) == 0) std::printf("  %s\n", k.description);
  }
  std::printf("ops defined by the plugin: %d\n", tfp_host_op_count(h));
  for (int i = 0; i < tfp_host_op_count(h); ++i) {
    const char* sig = tfp_host_op_signature(h, tfp_host_op_name(h, i));
    std::printf("  %s\n", sig ? sig : tfp_host_op_name(h, i));
  }
  PrintNotes();
  tfp_host_close(h);
  return 0;
}

int RunOp(const std::string& path, const std::string& release, const std::string& op_name,
          const std::vector<std::string>& inputs, const std::vector<std::string>& attrs, int device, int repeat,
          uint64_t seed) {
  Status st;
  tfp_host* h = Open(path, release, &st);
  if (h == nullptr) {
    std::fprintf(stderr, "tfplugin-run: %s: %s\n", CodeName(TF_GetCode(st.s)).c_str(), st.msg());
    return 1;
  }
  int rc = 0;
  tfp_op* op = tfp_op_new(h, op_name.c_str(), device, st.s);
  std::mt19937_64 rng(seed);
  if (op == nullptr) {
    std::fprintf(stderr, "tfplugin-run: %s: %s\n", CodeName(TF_GetCode(st.s)).c_str(), st.msg());
    rc = 1;
  }
  for (size_t i = 0; rc == 0 && i < attrs.size(); ++i) {
    size_t eq = attrs[i].find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "tfplugin-run: --attr %s: expected NAME=VALUE\n", attrs[i].c_str());
      rc = 2;
      break;
    }
    tfp_op_set_attr(op, attrs[i].substr(0, eq).c_str(), attrs[i].substr(eq + 1).c_str(), st.s);
    if (!st.ok()) {
      std::fprintf(stderr, "tfplugin-run: %s\n", st.msg());
      rc = 2;
    }
  }
  for (size_t i = 0; rc == 0 && i < inputs.size(); ++i) {
    std::string error;
    TF_Tensor* t = ParseInput(inputs[i], &rng, &error);
    if (t == nullptr) {
      std::fprintf(stderr, "tfplugin-run: %s\n", error.c_str());
      rc = 2;
      break;
    }
    PrintTensor(("input " + std::to_string(i)).c_str(), t);
    tfp_op_add_input(op, t, st.s);
    TF_DeleteTensor(t);
  }
  std::vector<double> times;
  for (int r = 0; rc == 0 && r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    tfp_op_run(op, st.s);
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    if (!st.ok()) {
      std::fprintf(stderr, "tfplugin-run: %s failed: %s: %s\n", op_name.c_str(), CodeName(TF_GetCode(st.s)).c_str(),
                   st.msg());
      rc = 1;
    }
  }
  if (rc == 0) {
    std::printf("kernel: %s\n", tfp_op_kernel(op));
    for (int i = 0; i < tfp_op_num_outputs(op); ++i) PrintTensor(("output " + std::to_string(i)).c_str(), tfp_op_output(op, i));
    std::sort(times.begin(), times.end());
    std::printf("time: %.1f us median of %d run(s), including copies to and from the device\n",
                times[times.size() / 2], repeat);
  }
  PrintNotes();
  tfp_op_delete(op);
  tfp_host_close(h);
  return rc;
}

int Discover(const char* location) {
  Status st;
  char** paths = nullptr;
  int n = location ? tfp_host_discover(location, &paths, st.s) : tfp_host_discover_env(&paths, st.s);
  if (n < 0) {
    std::fprintf(stderr, "tfplugin-run: %s\n", st.msg());
    return 1;
  }
  if (location == nullptr && n == 0) std::printf("TF_PLUGGABLE_DEVICE_LIBRARY_PATH is not set\n");
  for (int i = 0; i < n; ++i) std::printf("%s\n", paths[i]);
  tfp_host_free_paths(paths);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  std::string cmd = args[0], release;
  std::vector<std::string> positional, inputs, attrs;
  int device = 0, repeat = 1;
  uint64_t seed = 1;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> const std::string* {
      if (i + 1 >= args.size()) return nullptr;
      (void)flag;
      return &args[++i];
    };
    if (a == "--tf" || a == "--input" || a == "--attr" || a == "--device" || a == "--repeat" || a == "--seed") {
      const std::string* v = value(a.c_str());
      if (v == nullptr) return Usage(a + " needs a value");
      if (a == "--tf") release = *v;
      else if (a == "--input") inputs.push_back(*v);
      else if (a == "--attr") attrs.push_back(*v);
      else {
        char* end = nullptr;
        long long n = std::strtoll(v->c_str(), &end, 10);
        if (v->empty() || *end != '\0' || n < 0) return Usage(a + " needs a non-negative number");
        if (a == "--device") device = static_cast<int>(n);
        else if (a == "--repeat") repeat = std::max(1, static_cast<int>(n));
        else seed = static_cast<uint64_t>(n);
      }
    } else if (a.rfind("--", 0) == 0) {
      return Usage("unknown option " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (cmd == "list") {
    if (positional.size() != 1) return Usage("list takes one PLUGIN.so");
    return List(positional[0], release);
  }
  if (cmd == "op") {
    if (positional.size() != 2) return Usage("op takes PLUGIN.so and OP");
    return RunOp(positional[0], release, positional[1], inputs, attrs, device, repeat, seed);
  }
  if (cmd == "discover") {
    if (positional.size() > 1) return Usage("discover takes at most one FOLDER");
    return Discover(positional.empty() ? nullptr : positional[0].c_str());
  }
  return Usage("unknown command '" + cmd + "'");
}
