#include "chat/jinja/ast.h"

namespace brisk::jinja {

void Node::detach(std::vector<NodeP>& out) {
  for (NodeP* child : {&a, &b, &c})
    if (*child) out.push_back(std::move(*child));
  for (Block* blk : {&list, &body, &alt}) {
    for (NodeP& n : *blk)
      if (n) out.push_back(std::move(n));
    blk->clear();
  }
  for (auto& [k, v] : pairs) {
    if (k) out.push_back(std::move(k));
    if (v) out.push_back(std::move(v));
  }
  pairs.clear();
}

Node::~Node() {
  std::vector<NodeP> pending;
  detach(pending);
  while (!pending.empty()) {
    NodeP n = std::move(pending.back());
    pending.pop_back();
    if (n.use_count() == 1) n->detach(pending);
  }
}

}  // namespace brisk::jinja
