//===- HostBuffer.h - host tensors and the host op runtime for op tests -*- C++ -*-===//
#ifndef WAVETILE_TEST_OPS_HOSTBUFFER_H
#define WAVETILE_TEST_OPS_HOSTBUFFER_H

#include "wavetile/Emulator.h"
#include "wavetile/ops/OpRuntime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace wavetile::test {

using ops::DType;

/// Host storage of one dtype, with f32 views of its values.
struct HostBuffer {
  DType dtype;
  std::vector<uint8_t> bytes;
  HostBuffer(DType dtype, size_t n) : dtype(dtype), bytes(n * (dtype == DType::f32 ? 4 : 2)) {}
  size_t size() const { return bytes.size() / (dtype == DType::f32 ? 4 : 2); }
  float get(size_t i) const {
    if (dtype == DType::f32) {
      float f;
      std::memcpy(&f, &bytes[4 * i], 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, &bytes[2 * i], 2);
    if (dtype == DType::f16) {
      _Float16 v;
      std::memcpy(&v, &h, 2);
      return float(v);
    }
    uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  void set(size_t i, float f) {
    if (dtype == DType::f32) {
      std::memcpy(&bytes[4 * i], &f, 4);
      return;
    }
    uint16_t h;
    if (dtype == DType::f16) {
      _Float16 v = _Float16(f);
      std::memcpy(&h, &v, 2);
    } else {
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      h = uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16); // nearest-even; no NaNs here
    }
    std::memcpy(&bytes[2 * i], &h, 2);
  }
  /// The dtype's rounding of `f`.
  float round(float f) const {
    HostBuffer one(dtype, 1);
    one.set(0, f);
    return one.get(0);
  }
  /// One unit in the last place at magnitude 1 (0 for f32, checked relatively instead).
  double ulp() const { return dtype == DType::f32 ? 0 : dtype == DType::f16 ? 1.0 / 1024 : 1.0 / 128; }
  void poison() { std::fill(bytes.begin(), bytes.end(), 0xff); } // NaN in every dtype
  void *data() { return bytes.data(); }
};

/// The value of an fp8 code: OCP e4m3fn (bias 7, S.1111.111 NaN) or e4m3fnuz (bias 8, 0x80 NaN).
inline double decodeFp8(uint8_t code, bool fnuz) {
  int exponent = (code >> 3) & 15, mantissa = code & 7;
  bool negative = code & 0x80;
  if (fnuz ? code == 0x80 : (exponent == 15 && mantissa == 7))
    return NAN;
  int bias = fnuz ? 8 : 7;
  double magnitude =
      exponent == 0 ? std::ldexp(mantissa / 8.0, 1 - bias) : std::ldexp(1 + mantissa / 8.0, exponent - bias);
  return negative ? -magnitude : magnitude;
}

/// The fp8 code of `value` rounded to nearest (ties to the even code), saturating at the
/// largest finite value; NaN has none (0xFF).
inline uint8_t encodeFp8(float value, bool fnuz) {
  int best = -1;
  double bestDistance = INFINITY;
  for (int code = 0; code < 256; ++code) {
    double v = decodeFp8(uint8_t(code), fnuz);
    if (std::isnan(v) || (!fnuz && v == 0 && bool(code & 0x80) != std::signbit(value)))
      continue; // e4m3fn zero keeps the value's sign; fnuz has one zero (0x80 is its NaN)
    double distance = std::abs(v - double(value));
    if (distance < bestDistance || (distance == bestDistance && !(code & 1) && (best & 1))) {
      best = code;
      bestDistance = distance;
    }
  }
  return uint8_t(best);
}

/// A generator seeded afresh for every run; the seed is printed so a failure can be replayed.
inline std::mt19937_64 freshGenerator() {
  uint64_t seed = std::random_device{}();
  std::printf("seed %llu\n", (unsigned long long)seed);
  return std::mt19937_64(seed);
}

/// That an op call (its result `ok`) was refused with an error containing `says`.
inline void expectRefused(bool ok, const std::string &error, const std::string &says) {
  EXPECT_FALSE(ok);
  EXPECT_NE(error.find(says), std::string::npos) << error;
}

/// The host device and an op runtime on it (a null runtime, with a test failure, if not).
/// The host device, or with WAVETILE_TEST_EMULATE=<GPU target> an emulated device of that
/// target: the same tests then run the ops' GPU kernels lane by lane (docs/emulator.md).
inline std::unique_ptr<Device> openTestDevice(std::string *error) {
  const char *emulated = std::getenv("WAVETILE_TEST_EMULATE");
  return emulated && *emulated ? openEmulatedDevice(emulated, error) : Device::open(Backend::Host, 0, error);
}

struct HostOps {
  std::unique_ptr<Device> device;
  std::unique_ptr<ops::OpRuntime> runtime;
  HostOps() {
    std::string error;
    device = openTestDevice(&error);
    if (device)
      runtime = ops::OpRuntime::create(*device, &error);
    if (!runtime)
      ADD_FAILURE() << error;
  }
};

} // namespace wavetile::test

#endif
