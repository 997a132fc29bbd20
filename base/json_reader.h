// Reads the members of one JSON object with every member checked: each
// accessor returns the value or kInvalidArgument naming where it is
// ("request.limits.wall_seconds: expected a non-negative number"). For
// data another process wrote (a run's result, a verdict, a request).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace trench {

class JsonReader {
 public:
  // `where` names the object in errors ("verdict", "request.limits").
  JsonReader(const Json& j, std::string where)
      : j_(j), where_(std::move(where)) {}

  // OK when the value is an object.
  Status Check() const;
  bool Has(std::string_view key) const { return j_.Find(key) != nullptr; }
  // The member; kInvalidArgument "missing" when absent.
  StatusOr<const Json*> Get(std::string_view key) const;
  StatusOr<std::string> String(std::string_view key) const;
  StatusOr<int64_t> Int(std::string_view key) const;
  StatusOr<uint64_t> Uint(std::string_view key) const;
  // A number >= 0.
  StatusOr<double> NonNegative(std::string_view key) const;
  StatusOr<bool> Bool(std::string_view key) const;
  StatusOr<std::vector<std::string>> Strings(std::string_view key) const;
  // A reader of member object `j`, named where.key.
  JsonReader Sub(const Json& j, std::string_view key) const;
  // kInvalidArgument "<where>.<key>: <what>" (key "" : the object itself).
  Status Error(std::string_view key, const std::string& what) const;

 private:
  const Json& j_;
  std::string where_;
};

}  // namespace trench
