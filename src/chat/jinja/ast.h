// The syntax tree of a Jinja template: one node type with a kind, like the reference's AST.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace brisk::jinja {

struct Node;
using NodeP = std::shared_ptr<Node>;
using Block = std::vector<NodeP>;

// Templates come with model files, so they are hostile until proven otherwise. One nesting limit
// serves the parser (its recursion and the height of the tree it builds) and, through
// Limits::max_depth, the evaluator: every recursive walk over a tree stays far inside a thread's
// stack. Real chat templates nest below 30.
inline constexpr int kMaxNesting = 256;
inline constexpr size_t kMaxTemplateBytes = 1u << 20;
inline constexpr size_t kMaxNodes = 200'000;

struct Node {
  enum class Kind {
    // statements
    Text,
    If,
    For,
    Set,
    Macro,
    CallBlock,
    Break,
    Continue,
    FilterBlock,
    Comment,
    // expressions
    Int,
    Float,
    Str,
    ArrayLit,
    TupleLit,
    ObjectLit,
    Ident,
    Call,
    Member,
    Slice,
    Unary,
    Binary,
    Filter,
    Test,
    Select,
    Ternary,
    KwArg,
    Spread,
    KwSpread,
  };
  Kind kind;
  size_t pos = 0;  // offset in the (preprocessed) template, for error messages
  std::string s;   // text, identifier, operator, test name
  int64_t i = 0;
  double f = 0;
  bool flag = false;      // member: computed ([...]); test: negated
  NodeP a, b, c;          // operands: condition/object/left/callee, then right/property/value, ...
  Block list, body, alt;  // arguments or elements; bodies of blocks; else-branches
  std::vector<std::pair<NodeP, NodeP>> pairs;  // object literal entries

  Node(Kind k, size_t p) : kind(k), pos(p) {}
  // Tears children down with a loop, not by recursion: a tree too deep to keep (rejected by the
  // parser) must still be freed without running out of stack.
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Moves the children into `out`.
  void detach(std::vector<NodeP>& out);
};

}  // namespace brisk::jinja
