// A test fixture that runs each test in a fresh empty working directory
// (removed afterwards), to see that a command wrote nothing where it was
// run.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace trench::testing {

class InEmptyDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    old_ = std::filesystem::current_path();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("in_empty_dir_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::filesystem::current_path(dir_);
  }
  void TearDown() override {
    std::filesystem::current_path(old_);
    std::filesystem::remove_all(dir_);
  }
  bool NothingWritten() const { return std::filesystem::is_empty(dir_); }

  std::filesystem::path old_, dir_;
};

}  // namespace trench::testing
