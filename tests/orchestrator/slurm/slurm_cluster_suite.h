// A gtest suite on one SlurmCluster (slurm_cluster.h).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "tests/orchestrator/read_all.h"
#include "tests/orchestrator/slurm/slurm_cluster.h"

namespace trench::orchestrator::testing {

// A test suite on one cluster: started before the suite's first test,
// stopped after its last; a test is skipped when it cannot run here.
class SlurmClusterSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new SlurmCluster();
    std::string skip;
    start_ = cluster_->Start(&skip);
    skip_ = skip;
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(start_.ok()) << start_.message();
  }

  static inline SlurmCluster* cluster_ = nullptr;
  static inline std::string skip_;
  static inline Status start_;
};

}  // namespace trench::orchestrator::testing
