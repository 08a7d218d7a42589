// JSON Schema's propertyNames: the schema every key of an object must satisfy, read as a language
// of names. It is a string schema (type, pattern, format, minLength, maxLength, enum, const; the
// caller resolves $ref): the language is built as a string's would be, without the quotes, and
// determinized (dfa.h) so that declared names can be checked and extra keys cut to it
// (pattern_keys.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "grammar/dfa.h"
#include "grammar/grammar.h"

namespace brisk::grammar {

struct NameLanguage {
  bool any = false;   // every name is allowed: nothing to enforce
  bool none = false;  // no name is: the object has no members
  Grammar grammar;    // otherwise the names, from its root
  Dfa dfa;
  bool accepts(const std::string& name) const;
};

// Fails naming the keyword that cannot be read as a language of names.
NameLanguage property_names(const nlohmann::ordered_json& schema);

}  // namespace brisk::grammar
