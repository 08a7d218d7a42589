// What the JSON Schema compiler needs to reason about schemas before turning them into rules:
// which keywords validate, which draft a schema is written in, resolving a local $ref, reading
// numeric bounds (draft 4 spells exclusiveness as a flag), merging allOf (and, from 2019-09, a
// $ref's siblings) into one schema, and telling whether oneOf's branches can never both match.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace brisk::grammar {

using json = nlohmann::ordered_json;

bool is_validation_keyword(const std::string& k);
// 4, 6, 7, 2019 or 2020 from $schema; 2020 when it names none.
int schema_draft(const json& root);
// The schema a "#..." JSON pointer names in root; anything else is refused.
const json& resolve_ref(const json& root, const json& ref, const std::string& path);

struct NumericBounds {
  std::optional<std::pair<double, bool>> lo, hi;  // value, exclusive
};
NumericBounds numeric_bounds(const json& s, int draft, const std::string& path);

class SchemaMerger {
 public:
  // deadline: the time (now_seconds()) past which a merge is refused; max_steps bounds the schemas
  // flattened and merged, so that $refs shared under allOf at many levels (2^depth expansions)
  // end in an error instead of a hang.
  SchemaMerger(const json& root, int draft, int max_depth, double deadline = 1e300,
               int64_t max_steps = 200000)
      : root_(root),
        draft_(draft),
        max_depth_(max_depth),
        deadline_(deadline),
        steps_left_(max_steps) {}
  // s without $ref or allOf at its top: what they name merged in (false: nothing matches).
  json flatten(const json& s, const std::string& path, int depth = 0);
  // Both schemas' constraints at once.
  json merge_pair(const json& a, const json& b, const std::string& path);
  // Refuses oneOf branches unless no value can match two of them (then oneOf is anyOf).
  void check_disjoint(const std::vector<const json*>& branches, const std::string& path);

  // How many rewrites of `not` / `if` are under way through this merger (schema_negation.h):
  // a $ref back into one starts another, so the count bounds that recursion whatever path
  // (merging, flattening) it takes.
  int negations_open = 0;

 private:
  json merge(const json& a, const json& b, const std::string& path, int depth);
  json merge_child(const json& a, const json& b, const std::string& path, int depth);
  void merge_key(json& out, const std::string& k, const json& va, const json& vb,
                 const std::string& path, int depth);
  json normalized(json s) const;
  bool disjoint(const json& a, const json& b, const std::string& path);
  // Whether no value can satisfy a flattened schema: false, an empty enum or type list, or a
  // required property that none satisfies (not complete: false means "may be satisfiable").
  bool unsatisfiable(const json& s, int depth);
  void step(const std::string& path);

  const json& root_;
  int draft_;
  int max_depth_;
  double deadline_;
  int64_t steps_left_;
};

}  // namespace brisk::grammar
