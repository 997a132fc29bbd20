// A topological order of a DAG whose nodes get contracted pairwise, kept up
// to date incrementally: the fusion pass's cycle check (fusion.cc). Nodes
// are ints 0..n-1; the graph itself is the caller's, given as successor
// and predecessor callbacks, so it may change between calls as long as
// every change keeps the current order topological (e.g. a node joining a
// node that lies after it and that it only feeds).
//
// Merging two nodes a, b (pos(a) < pos(b)) into one is cycle-free iff no
// path leads from a to b through a third node (a direct edge a -> b
// becomes internal; no path can lead from b to a). Every node on such a
// path lies strictly between a and b in the order, so the search visits
// only nodes there: forward from a below pos(b), backward from b above
// pos(a). The nodes found (the affected region) are then reordered as in
// Pearce and Kelly's dynamic topological sort ("A dynamic topological sort
// algorithm for directed acyclic graphs", JEA 2007), as if an edge b -> a
// were added: the backward set (b and what reaches it) takes the first of
// their old positions, the forward set (a and what it reaches) the rest,
// each keeping its relative order; the merged node takes b's new
// position. The cost of a check is the size of the affected region, and
// the search gives up (kTooFar, treated as "do not merge") once it visits
// more than a budget of nodes, so a pass of m merges costs O(m * budget)
// at worst however large the graph is.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace trench {

class ContractionOrder {
 public:
  // Appends the successors (resp. predecessors) of `node` to `out`;
  // duplicates are allowed.
  using Neighbors = std::function<void(int node, std::vector<int>& out)>;

  enum class Verdict { kAcyclic, kCycle, kTooFar };

  // `topological`: the live nodes in a topological order; `num_nodes`
  // bounds the ids. REQUIRES: ids in [0, num_nodes), each at most once.
  ContractionOrder(const std::vector<int>& topological, int num_nodes);

  // The node's position (smaller positions come first); -1 if the node is
  // not in the order.
  int64_t position(int node) const { return pos_[node]; }

  // Whether contracting `a` and `b` (distinct, in the order) keeps the
  // graph acyclic, visiting at most `budget` nodes. Remembers the
  // affected region for Contract. REQUIRES: the order is topological for
  // the graph `succ`/`pred` describe.
  Verdict Check(int a, int b, const Neighbors& succ, const Neighbors& pred,
                int64_t budget);

  // Contracts the pair of the last Check (which said kAcyclic; the graph
  // unchanged since): `keep` (one of the pair) becomes the merged node,
  // the other leaves the order.
  void Contract(int keep);

  // Removes `node` from the order (it joined another node).
  void Remove(int node) { pos_[node] = -1; }

 private:
  std::vector<int64_t> pos_;
  // The last Check: the pair ordered (lo before hi) and the affected
  // region, forward from lo (lo included) and backward from hi (hi
  // included).
  int lo_ = -1, hi_ = -1;
  std::vector<int> forward_, backward_;
  std::vector<char> mark_;  // Scratch: visited in the current search.
};

}  // namespace trench
