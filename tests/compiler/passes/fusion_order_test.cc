// ContractionOrder (compiler/passes/fusion_order.h): the fusion pass's
// incremental cycle check, against brute-force reachability on random
// DAGs contracted pair by pair; the order must stay topological after
// every contraction.
#include "compiler/passes/fusion_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

namespace trench {
namespace {

using Verdict = ContractionOrder::Verdict;

// A directed graph with contraction (b joins a), for the reference.
struct Graph {
  std::vector<std::set<int>> succ, pred;
  std::vector<bool> alive;
  explicit Graph(int n) : succ(n), pred(n), alive(n, true) {}
  void AddEdge(int u, int v) {
    succ[u].insert(v);
    pred[v].insert(u);
  }
  void Contract(int keep, int gone) {
    for (int s : succ[gone]) {
      pred[s].erase(gone);
      if (s != keep) AddEdge(keep, s);
    }
    for (int p : pred[gone]) {
      succ[p].erase(gone);
      if (p != keep) AddEdge(p, keep);
    }
    succ[gone].clear();
    pred[gone].clear();
    alive[gone] = false;
  }
  // A path from a to b through a third node.
  bool LongPath(int a, int b) const {
    std::vector<int> stack;
    std::vector<bool> seen(succ.size(), false);
    for (int s : succ[a]) {
      if (s != b) stack.push_back(s);
    }
    while (!stack.empty()) {
      const int n = stack.back();
      stack.pop_back();
      if (n == b) return true;
      if (seen[n]) continue;
      seen[n] = true;
      stack.insert(stack.end(), succ[n].begin(), succ[n].end());
    }
    return false;
  }
  ContractionOrder::Neighbors Succ() const {
    return [this](int n, std::vector<int>& out) {
      out.insert(out.end(), succ[n].begin(), succ[n].end());
    };
  }
  ContractionOrder::Neighbors Pred() const {
    return [this](int n, std::vector<int>& out) {
      out.insert(out.end(), pred[n].begin(), pred[n].end());
    };
  }
};

void ExpectTopological(const Graph& g, const ContractionOrder& order) {
  for (size_t u = 0; u < g.succ.size(); ++u) {
    if (!g.alive[u]) continue;
    ASSERT_GE(order.position(u), 0);
    for (int v : g.succ[u]) {
      EXPECT_LT(order.position(u), order.position(v))
          << "edge " << u << " -> " << v;
    }
  }
}

TEST(ContractionOrderTest, DirectEdgeMergesPathThroughThirdNodeDoesNot) {
  Graph g(4);
  g.AddEdge(0, 1);
  g.AddEdge(1, 2);
  g.AddEdge(0, 2);
  g.AddEdge(2, 3);
  ContractionOrder order({0, 1, 2, 3}, 4);
  EXPECT_EQ(order.Check(0, 2, g.Succ(), g.Pred(), 100), Verdict::kCycle);
  EXPECT_EQ(order.Check(2, 0, g.Succ(), g.Pred(), 100), Verdict::kCycle);
  EXPECT_EQ(order.Check(0, 1, g.Succ(), g.Pred(), 100), Verdict::kAcyclic);
  order.Contract(1);
  g.Contract(1, 0);
  ExpectTopological(g, order);
  EXPECT_EQ(order.position(0), -1);
  EXPECT_EQ(order.Check(1, 2, g.Succ(), g.Pred(), 100), Verdict::kAcyclic);
}

TEST(ContractionOrderTest, GivesUpBeyondTheBudget) {
  // A chain 0 -> 1 -> ... -> 10 and node 11 after it, unrelated.
  Graph g(12);
  std::vector<int> topo;
  for (int i = 0; i < 12; ++i) topo.push_back(i);
  for (int i = 0; i < 10; ++i) g.AddEdge(i, i + 1);
  ContractionOrder order(topo, 12);
  EXPECT_EQ(order.Check(0, 11, g.Succ(), g.Pred(), 5), Verdict::kTooFar);
  EXPECT_EQ(order.Check(0, 11, g.Succ(), g.Pred(), 100), Verdict::kAcyclic);
  order.Contract(0);
  g.Contract(0, 11);
  ExpectTopological(g, order);
}

TEST(ContractionOrderTest, RandomContractionsMatchBruteForce) {
  int merged = 0, refused = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    const int n = 20 + static_cast<int>(seed % 5) * 10;
    Graph g(n);
    // Edges respect a random permutation (so the DAG's order is not 0..n).
    std::vector<int> perm(n);
    for (int i = 0; i < n; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    const int density = 2 + static_cast<int>(seed % 6);
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        if (static_cast<int>(rng() % 100) < density * 100 / n) {
          g.AddEdge(perm[i], perm[j]);
        }
      }
    }
    ContractionOrder order(perm, n);
    for (int step = 0; step < 4 * n; ++step) {
      std::vector<int> alive;
      for (int i = 0; i < n; ++i) {
        if (g.alive[i]) alive.push_back(i);
      }
      if (alive.size() < 2) break;
      const int a = alive[rng() % alive.size()];
      const int b = alive[rng() % alive.size()];
      if (a == b) continue;
      const bool cycle = g.LongPath(a, b) || g.LongPath(b, a);
      const Verdict v = order.Check(a, b, g.Succ(), g.Pred(), 1 << 20);
      ASSERT_EQ(v, cycle ? Verdict::kCycle : Verdict::kAcyclic)
          << "seed " << seed << " step " << step << ": " << a << ", " << b;
      if (cycle) {
        ++refused;
        continue;
      }
      const int keep = rng() % 2 ? a : b;
      order.Contract(keep);
      g.Contract(keep, keep == a ? b : a);
      ++merged;
      ExpectTopological(g, order);
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(merged, 100);
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace trench
