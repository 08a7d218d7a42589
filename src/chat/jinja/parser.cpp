#include "chat/jinja/parser.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "chat/jinja/strings.h"
#include "core/error.h"
#include "tokenizer/unicode.h"

namespace brisk::jinja {
namespace {

enum class T {
  Text,
  Num,
  Str,
  Ident,
  Equals,
  LParen,
  RParen,
  OpenStmt,
  CloseStmt,
  OpenExpr,
  CloseExpr,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Dot,
  Colon,
  Pipe,
  Add,
  Mul,
  Pow,
  Cmp,
  Unary,
  Comment,
};

struct Tok {
  T type;
  std::string value;
  size_t pos;
};

bool is_word(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

struct Located {
  size_t pos;  // in the preprocessed text
  std::string msg;
};

[[noreturn]] void syntax_error(const std::string&, size_t pos, const std::string& what) {
  throw Located{pos, what};
}

// Text with, for each byte, its offset in the template as written (errors point there).
struct Mapped {
  std::string text;
  std::vector<size_t> origin;
  void put(const Mapped& from, size_t i) {
    text += from.text[i];
    origin.push_back(from.origin[i]);
  }
  void put(const Mapped& from, size_t i, size_t n) {
    for (size_t k = i; k < i + n && k < from.text.size(); ++k) put(from, k);
  }
};

// lstrip_blocks, trim_blocks, the trailing newline, and transformers' {% generation %} markers.
Mapped preprocess(const std::string& src) {
  Mapped t;
  t.text = src;
  t.origin.resize(src.size());
  for (size_t i = 0; i < src.size(); ++i) t.origin[i] = i;
  if (!t.text.empty() && t.text.back() == '\n') {
    t.text.pop_back();
    t.origin.pop_back();
  }
  Mapped a;
  for (size_t i = 0; i < t.text.size();) {  // spaces and tabs before a block tag at a line start
    const std::string& x = t.text;
    if (i == 0 || x[i - 1] == '\n') {
      size_t j = i;
      while (j < x.size() && (x[j] == ' ' || x[j] == '\t')) ++j;
      if (j + 1 < x.size() && x[j] == '{' &&
          (x[j + 1] == '#' || x[j + 1] == '%' || x[j + 1] == '-'))
        i = j;
    }
    a.put(t, i++);
  }
  Mapped b;
  for (size_t i = 0; i < a.text.size(); ++i) {  // the newline right after a block tag
    const std::string& x = a.text;
    b.put(a, i);
    if (x[i] == '}' && i > 0 && (x[i - 1] == '#' || x[i - 1] == '%' || x[i - 1] == '-') &&
        i + 1 < x.size() && x[i + 1] == '\n')
      ++i;
  }
  // {%- generation -%} / {% endgeneration %}: removed, with their whitespace control honoured.
  Mapped c;
  const std::string& x = b.text;
  for (size_t i = 0; i < x.size();) {
    const size_t open = x.find("{%", i);
    if (open == std::string::npos) {
      c.put(b, i, x.size() - i);
      break;
    }
    size_t k = open + 2;
    const bool lstrip = k < x.size() && x[k] == '-';
    if (lstrip) ++k;
    while (k < x.size() && is_space(x[k])) ++k;
    if (x.compare(k, 3, "end") == 0) k += 3;
    bool tag = x.compare(k, 10, "generation") == 0;
    if (tag) {
      k += 10;
      while (k < x.size() && is_space(x[k])) ++k;
    }
    const bool rstrip = tag && k < x.size() && x[k] == '-';
    if (rstrip) ++k;
    tag = tag && x.compare(k, 2, "%}") == 0;
    if (!tag) {
      c.put(b, i, open + 2 - i);
      i = open + 2;
      continue;
    }
    k += 2;
    size_t e = open;
    if (lstrip)
      while (e > i && is_space(x[e - 1])) --e;
    c.put(b, i, e - i);
    if (rstrip)
      while (k < x.size() && is_space(x[k])) ++k;
    i = k;
  }
  return c;
}

// The template lexer: the source (after preprocessing) as tokens of text, comments, tags and
// expression pieces, with the whitespace control of {%- -%}, {{- -}} and {#- -#} applied.
class Lexer {
 public:
  explicit Lexer(const std::string& src) : src_(src) {}

  std::vector<Tok> run() {
    while (p_ < src_.size()) {
      const Tok* lt = last();
      if ((!lt || lt->type == T::CloseStmt || lt->type == T::CloseExpr || lt->type == T::Comment) &&
          text())
        continue;
      if (comment() || open_stripping()) continue;
      skip_space();
      if (p_ >= src_.size()) break;
      if (close_stripping() || signed_number() || punctuation()) continue;
      const char ch = src_[p_];
      if (ch == '\'' || ch == '"') {
        const size_t start = p_++;
        toks_.push_back({T::Str, string_literal(ch), start});
        continue;
      }
      if (is_digit(ch)) {
        number();
        continue;
      }
      if (is_word(ch)) {
        const size_t start = p_;
        while (p_ < src_.size() && is_word(src_[p_])) ++p_;
        toks_.push_back({T::Ident, src_.substr(start, p_ - start), start});
        continue;
      }
      syntax_error(src_, p_, std::string("unexpected character: ") + ch);
    }
    return std::move(toks_);
  }

 private:
  const Tok* last() const { return toks_.empty() ? nullptr : &toks_.back(); }
  void skip_space() {
    while (p_ < src_.size() && is_space(src_[p_])) ++p_;
  }
  void strip_trailing() {
    if (!toks_.empty() && toks_.back().type == T::Text) {
      toks_.back().value = js_trim(toks_.back().value, false, true);
      if (toks_.back().value.empty()) toks_.pop_back();
    }
  }

  // Text up to the next {%, {{ or {#.
  bool text() {
    const size_t start = p_;
    while (p_ < src_.size() &&
           !(src_[p_] == '{' && p_ + 1 < src_.size() &&
             (src_[p_ + 1] == '%' || src_[p_ + 1] == '{' || src_[p_ + 1] == '#')))
      ++p_;
    if (p_ == start) return false;
    toks_.push_back({T::Text, src_.substr(start, p_ - start), start});
    return true;
  }

  bool comment() {
    if (src_.compare(p_, 2, "{#") != 0) return false;
    const size_t start = p_;
    p_ += 2;
    const bool strip_before = p_ < src_.size() && src_[p_] == '-';
    if (strip_before) ++p_;
    const size_t end = src_.find("#}", p_);
    if (end == std::string::npos) syntax_error(src_, start, "missing end of comment tag");
    std::string text = src_.substr(p_, end - p_);
    const bool strip_after = !text.empty() && text.back() == '-';
    if (strip_after) text.pop_back();
    if (strip_before) strip_trailing();
    toks_.push_back({T::Comment, text, start});
    p_ = end + 2;
    if (strip_after) skip_space();
    return true;
  }

  // {%- and {{-: the text before loses its trailing whitespace.
  bool open_stripping() {
    const bool stmt = src_.compare(p_, 3, "{%-") == 0;
    if (!stmt && src_.compare(p_, 3, "{{-") != 0) return false;
    strip_trailing();
    toks_.push_back({stmt ? T::OpenStmt : T::OpenExpr, stmt ? "{%" : "{{", p_});
    if (!stmt) brace_depth_ = 0;
    p_ += 3;
    return true;
  }

  // -%} and -}}: the whitespace after is skipped.
  bool close_stripping() {
    const bool stmt = src_.compare(p_, 3, "-%}") == 0;
    if (!stmt && src_.compare(p_, 3, "-}}") != 0) return false;
    toks_.push_back({stmt ? T::CloseStmt : T::CloseExpr, stmt ? "%}" : "}}", p_});
    p_ += 3;
    skip_space();
    return true;
  }

  // A sign where no operand precedes it: a signed number literal, or a unary operator.
  bool signed_number() {
    const char ch = src_[p_];
    if (ch != '-' && ch != '+') return false;
    const Tok* l = last();
    if (!l || l->type == T::Text)
      syntax_error(src_, p_, std::string("unexpected character: ") + ch);
    const T lt = l->type;
    if (lt == T::Ident || lt == T::Num || lt == T::Str || lt == T::RParen || lt == T::RBracket)
      return false;
    const size_t start = p_++;
    std::string num;
    while (p_ < src_.size() && is_digit(src_[p_])) num += src_[p_++];
    if (!num.empty() && p_ + 1 < src_.size() && src_[p_] == '.' && is_digit(src_[p_ + 1])) {
      ++p_;
      num += '.';
      while (p_ < src_.size() && is_digit(src_[p_])) num += src_[p_++];
    }
    toks_.push_back({num.empty() ? T::Unary : T::Num, std::string(1, ch) + num, start});
    return true;
  }

  bool punctuation() {
    static const std::pair<const char*, T> kTable[] = {
        {"{%", T::OpenStmt}, {"%}", T::CloseStmt}, {"{{", T::OpenExpr}, {"}}", T::CloseExpr},
        {"(", T::LParen},    {")", T::RParen},     {"{", T::LBrace},    {"}", T::RBrace},
        {"[", T::LBracket},  {"]", T::RBracket},   {",", T::Comma},     {".", T::Dot},
        {":", T::Colon},     {"|", T::Pipe},       {"<=", T::Cmp},      {">=", T::Cmp},
        {"==", T::Cmp},      {"!=", T::Cmp},       {"<", T::Cmp},       {">", T::Cmp},
        {"+", T::Add},       {"-", T::Add},        {"~", T::Add},       {"**", T::Pow},
        {"*", T::Mul},       {"//", T::Mul},       {"/", T::Mul},       {"%", T::Mul},
        {"=", T::Equals},
    };
    for (const auto& [seq, type] : kTable) {
      // A dict literal's closing braces inside {{ }} are braces, not the tag's end.
      if (type == T::CloseExpr && brace_depth_ > 0) continue;
      const size_t n = std::char_traits<char>::length(seq);
      if (src_.compare(p_, n, seq) != 0) continue;
      toks_.push_back({type, seq, p_});
      if (type == T::OpenExpr)
        brace_depth_ = 0;
      else if (type == T::LBrace)
        ++brace_depth_;
      else if (type == T::RBrace)
        --brace_depth_;
      p_ += n;
      return true;
    }
    return false;
  }

  void number() {
    const size_t start = p_;
    std::string num;
    while (p_ < src_.size() && is_digit(src_[p_])) num += src_[p_++];
    if ((toks_.empty() || toks_.back().type != T::Dot) && p_ + 1 < src_.size() && src_[p_] == '.' &&
        is_digit(src_[p_ + 1])) {
      ++p_;
      num += '.';
      while (p_ < src_.size() && is_digit(src_[p_])) num += src_[p_++];
    }
    toks_.push_back({T::Num, num, start});
  }

  // A quoted string's value, after the opening quote; ends past the closing one.
  std::string string_literal(char quote) {
    std::string out;
    const size_t start = p_;
    while (true) {
      if (p_ >= src_.size()) syntax_error(src_, start, "unterminated string");
      const char ch = src_[p_];
      if (ch == quote) break;
      if (ch == '\\') {
        if (++p_ >= src_.size()) syntax_error(src_, p_, "unexpected end of input");
        out += escape(src_[p_++]);
        continue;
      }
      out += ch;
      ++p_;
    }
    ++p_;  // closing quote
    return out;
  }

  // The text of a backslash escape whose letter is e (already consumed).
  std::string escape(char e) {
    static const std::pair<char, char> kSimple[] = {{'n', '\n'},  {'t', '\t'}, {'r', '\r'},
                                                    {'b', '\b'},  {'f', '\f'}, {'v', '\v'},
                                                    {'\'', '\''}, {'"', '"'},  {'\\', '\\'}};
    for (const auto& [letter, value] : kSimple)
      if (e == letter) return std::string(1, value);
    if (e != 'x' && e != 'u')
      syntax_error(src_, p_ - 1, std::string("unexpected escaped character: ") + e);
    const size_t n = e == 'x' ? 2 : 4;
    if (p_ + n > src_.size()) syntax_error(src_, p_, "invalid escape");
    const std::string hex = src_.substr(p_, n);
    if (hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
      syntax_error(src_, p_, "invalid hexadecimal escape \\" + std::string(1, e) + hex);
    const auto cp = static_cast<uint32_t>(std::strtoul(hex.c_str(), nullptr, 16));
    std::string u;
    append_utf8(u, cp);
    p_ += n;
    return u;
  }

  const std::string& src_;
  size_t p_ = 0;
  int brace_depth_ = 0;
  std::vector<Tok> toks_;
};

class Parser {
 public:
  Parser(const std::vector<Tok>& toks, const std::string& src) : t_(toks), src_(src) {}

  Block program() {
    Block body;
    while (cur_ < t_.size()) body.push_back(any());
    return body;
  }

 private:
  const std::vector<Tok>& t_;
  const std::string& src_;
  size_t cur_ = 0;
  int depth_ = 0;
  size_t nodes_ = 0;

  // Counts the parser's own recursion (parentheses, blocks, `not not ...`) before it descends.
  struct Nest {
    Parser& p;
    explicit Nest(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxNesting)
        p.error("the template nests too deeply (more than " + std::to_string(kMaxNesting) +
                " levels)");
    }
    ~Nest() { --p.depth_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
  };

  size_t here() const { return cur_ < t_.size() ? t_[cur_].pos : src_.size(); }
  [[noreturn]] void error(const std::string& what) const { syntax_error(src_, here(), what); }
  bool is(T type, size_t ahead = 0) const {
    return cur_ + ahead < t_.size() && t_[cur_ + ahead].type == type;
  }
  bool is_ident(const char* name, size_t ahead = 0) const {
    return is(T::Ident, ahead) && t_[cur_ + ahead].value == name;
  }
  bool is_statement(std::initializer_list<const char*> names) const {
    if (!is(T::OpenStmt) || !is(T::Ident, 1)) return false;
    for (const char* n : names)
      if (t_[cur_ + 1].value == n) return true;
    return false;
  }
  const Tok& expect(T type, const char* what) {
    if (!is(type)) error(std::string("expected ") + what);
    return t_[cur_++];
  }
  void expect_ident(const char* name) {
    if (!is_ident(name)) error(std::string("expected '") + name + "'");
    ++cur_;
  }
  NodeP node(Node::Kind k, size_t pos) {
    if (++nodes_ > kMaxNodes)
      syntax_error(src_, pos,
                   "the template is too large (more than " + std::to_string(kMaxNodes) + " nodes)");
    return std::make_shared<Node>(k, pos);
  }
  void need_more() const {
    if (cur_ >= t_.size()) error("unexpected end of template (a block is not closed)");
  }

  NodeP any() {
    Nest nest(*this);
    need_more();
    const Tok& tk = t_[cur_];
    switch (tk.type) {
      case T::Comment: {
        ++cur_;
        return node(Node::Kind::Comment, tk.pos);
      }
      case T::Text: {
        ++cur_;
        auto n = node(Node::Kind::Text, tk.pos);
        n->s = tk.value;
        return n;
      }
      case T::OpenStmt:
        return statement();
      case T::OpenExpr: {
        ++cur_;
        auto e = expression();
        expect(T::CloseExpr, "'}}'");
        return e;
      }
      default:
        error("unexpected token '" + tk.value + "'");
    }
  }

  Block body_until(std::initializer_list<const char*> ends) {
    Block b;
    while (!is_statement(ends)) b.push_back(any());
    return b;
  }

  void end_tag(const char* name) {
    expect(T::OpenStmt, "'{%'");
    expect_ident(name);
    expect(T::CloseStmt, "'%}'");
  }

  NodeP statement() {
    const size_t pos = here();
    expect(T::OpenStmt, "'{%'");
    if (!is(T::Ident)) error("expected a statement name");
    const std::string name = t_[cur_++].value;
    if (name == "set") {
      auto n = node(Node::Kind::Set, pos);
      n->a = sequence(false);
      if (is(T::Equals)) {
        ++cur_;
        n->b = sequence(false);
      } else {
        expect(T::CloseStmt, "'%}'");
        n->body = body_until({"endset"});
        expect(T::OpenStmt, "'{%'");
        expect_ident("endset");
      }
      expect(T::CloseStmt, "'%}'");
      return n;
    }
    if (name == "if") {
      auto n = if_rest(pos);
      end_tag("endif");
      return n;
    }
    if (name == "macro") {
      auto n = node(Node::Kind::Macro, pos);
      n->a = primary();
      if (n->a->kind != Node::Kind::Ident) error("expected a macro name");
      n->list = args(true);
      expect(T::CloseStmt, "'%}'");
      n->body = body_until({"endmacro"});
      end_tag("endmacro");
      return n;
    }
    if (name == "for") {
      auto n = node(Node::Kind::For, pos);
      n->a = sequence(true);
      if (n->a->kind != Node::Kind::Ident && n->a->kind != Node::Kind::TupleLit)
        error("expected a loop variable");
      expect_ident("in");
      n->b = expression();
      expect(T::CloseStmt, "'%}'");
      n->body = body_until({"endfor", "else"});
      if (is_statement({"else"})) {
        cur_ += 2;
        expect(T::CloseStmt, "'%}'");
        n->alt = body_until({"endfor"});
      }
      end_tag("endfor");
      return n;
    }
    if (name == "call") {
      auto n = node(Node::Kind::CallBlock, pos);
      if (is(T::LParen)) n->list = args(true);
      auto callee = primary();
      if (callee->kind != Node::Kind::Ident) error("expected a macro name after 'call'");
      auto call = node(Node::Kind::Call, callee->pos);
      call->a = callee;
      call->list = args(false);
      n->a = call;
      expect(T::CloseStmt, "'%}'");
      n->body = body_until({"endcall"});
      end_tag("endcall");
      return n;
    }
    if (name == "break" || name == "continue") {
      expect(T::CloseStmt, "'%}'");
      return node(name == "break" ? Node::Kind::Break : Node::Kind::Continue, pos);
    }
    if (name == "filter") {
      auto n = node(Node::Kind::FilterBlock, pos);
      auto f = primary();
      if (f->kind == Node::Kind::Ident && is(T::LParen)) f = call_rest(f);
      n->a = f;
      expect(T::CloseStmt, "'%}'");
      n->body = body_until({"endfilter"});
      end_tag("endfilter");
      return n;
    }
    syntax_error(src_, pos, "unknown statement '" + name + "'");
  }

  NodeP if_rest(size_t pos) {
    Nest nest(*this);
    auto n = node(Node::Kind::If, pos);
    n->a = expression();
    expect(T::CloseStmt, "'%}'");
    n->body = body_until({"elif", "else", "endif"});
    if (is_statement({"elif"})) {
      const size_t p2 = here();
      cur_ += 2;
      n->alt.push_back(if_rest(p2));
    } else if (is_statement({"else"})) {
      cur_ += 2;
      expect(T::CloseStmt, "'%}'");
      n->alt = body_until({"endif"});
    }
    return n;
  }

  NodeP sequence(bool primary_only) {
    const size_t pos = here();
    std::vector<NodeP> xs{primary_only ? primary() : expression()};
    const bool tuple = is(T::Comma);
    while (tuple) {
      ++cur_;
      xs.push_back(primary_only ? primary() : expression());
      if (!is(T::Comma)) break;
    }
    if (!tuple) return xs[0];
    auto n = node(Node::Kind::TupleLit, pos);
    n->list = std::move(xs);
    return n;
  }

  NodeP expression() {
    Nest nest(*this);
    const size_t pos = here();
    auto a = logical_or();
    if (is_ident("if")) {
      ++cur_;
      auto test = logical_or();
      if (is_ident("else")) {
        ++cur_;
        auto n = node(Node::Kind::Ternary, pos);
        n->a = test;
        n->b = a;
        n->c = expression();
        return n;
      }
      auto n = node(Node::Kind::Select, pos);
      n->a = a;
      n->b = test;
      return n;
    }
    return a;
  }

  NodeP binary(const Tok& op, NodeP l, NodeP r) {
    auto n = node(Node::Kind::Binary, op.pos);
    n->s = op.value;
    n->a = std::move(l);
    n->b = std::move(r);
    return n;
  }

  NodeP logical_or() {
    auto l = logical_and();
    while (is_ident("or")) {
      const Tok& op = t_[cur_++];
      l = binary(op, l, logical_and());
    }
    return l;
  }
  NodeP logical_and() {
    auto l = logical_not();
    while (is_ident("and")) {
      const Tok& op = t_[cur_++];
      l = binary(op, l, logical_not());
    }
    return l;
  }
  NodeP logical_not() {
    if (is_ident("not")) {
      Nest nest(*this);  // counted only where it recurses: a parenthesis costs one level
      const size_t pos = here();
      ++cur_;
      auto n = node(Node::Kind::Unary, pos);
      n->s = "not";
      n->a = logical_not();
      return n;
    }
    return comparison();
  }
  NodeP comparison() {
    auto l = additive();
    while (true) {
      Tok op;
      if (is_ident("not") && is_ident("in", 1)) {
        op = {T::Ident, "not in", here()};
        cur_ += 2;
      } else if (is_ident("in") || is(T::Cmp)) {
        op = t_[cur_++];
      } else {
        break;
      }
      l = binary(op, l, additive());
    }
    return l;
  }
  NodeP additive() {
    auto l = multiplicative();
    while (is(T::Add)) {
      const Tok& op = t_[cur_++];
      l = binary(op, l, multiplicative());
    }
    return l;
  }
  NodeP multiplicative() {
    auto l = power();
    while (is(T::Mul)) {
      const Tok& op = t_[cur_++];
      l = binary(op, l, power());
    }
    return l;
  }
  NodeP power() {
    auto l = test();
    while (is(T::Pow)) {
      const Tok& op = t_[cur_++];
      l = binary(op, l, test());
    }
    return l;
  }
  NodeP test() {
    auto operand = filter();
    while (is_ident("is")) {
      const size_t pos = here();
      ++cur_;
      const bool negate = is_ident("not");
      if (negate) ++cur_;
      auto name = primary();
      if (name->kind != Node::Kind::Ident) error("expected a test name after 'is'");
      auto n = node(Node::Kind::Test, pos);
      n->a = operand;
      n->flag = negate;
      n->s = name->s;
      // Python Jinja2's forms: `x is divisibleby(3)`, and one argument without parentheses
      // (`x is in seq`, `x is sameas none`, `x is ne 3`).
      if (is(T::LParen)) {
        Nest nest(*this);
        n->list = args(false);
      } else if (starts_test_argument()) {
        Nest nest(*this);
        n->list.push_back(member(primary()));
      }
      operand = n;
    }
    return operand;
  }
  // What Jinja2 takes as the start of a test's one bare argument.
  bool starts_test_argument() const {
    if (cur_ >= t_.size()) return false;
    const Tok& t = t_[cur_];
    if (t.type == T::Num || t.type == T::Str || t.type == T::LBracket || t.type == T::LBrace)
      return true;
    return t.type == T::Ident && t.value != "else" && t.value != "or" && t.value != "and" &&
           t.value != "is" && t.value != "if";
  }
  NodeP filter() {
    auto operand = unary_sign();
    while (is(T::Pipe)) {
      const size_t pos = here();
      ++cur_;
      auto f = primary();
      if (f->kind != Node::Kind::Ident) error("expected a filter name after '|'");
      if (is(T::LParen)) f = call_rest(f);
      auto n = node(Node::Kind::Filter, pos);
      n->a = operand;
      n->b = f;
      operand = n;
    }
    return operand;
  }
  NodeP unary_sign() {
    if ((is(T::Unary) || is(T::Add)) && (t_[cur_].value == "-" || t_[cur_].value == "+")) {
      Nest nest(*this);
      const Tok& op = t_[cur_++];
      auto n = node(Node::Kind::Unary, op.pos);
      n->s = op.value;
      n->a = unary_sign();
      return n;
    }
    auto m = member(primary());
    if (is(T::LParen)) return call_rest(m);
    return m;
  }
  NodeP call_rest(NodeP callee) {
    Nest nest(*this);
    auto n = node(Node::Kind::Call, callee->pos);
    n->a = std::move(callee);
    n->list = args(false);
    NodeP e = member(n);
    if (is(T::LParen)) e = call_rest(e);
    return e;
  }
  Block args(bool parameters) {
    expect(T::LParen, "'('");
    Block out;
    bool saw_kw = false, saw_spread = false;
    while (!is(T::RParen)) {
      need_more();
      const size_t pos = here();
      const bool kw_spread = is(T::Pow);
      const bool spread = is(T::Mul) && t_[cur_].value == "*";
      if (parameters && (kw_spread || spread)) error("argument unpacking in a parameter list");
      if (kw_spread) {
        ++cur_;
        auto n = node(Node::Kind::KwSpread, pos);
        n->a = expression();
        out.push_back(n);
        if (is(T::Comma)) ++cur_;
        if (!is(T::RParen)) error("'**' must be the last argument");
        break;
      }
      NodeP arg;
      if (spread) {
        if (saw_spread) error("only one '*' argument is allowed");
        saw_spread = true;
        ++cur_;
        arg = node(Node::Kind::Spread, pos);
        arg->a = expression();
      } else {
        arg = expression();
        if (is(T::Equals)) {
          ++cur_;
          if (arg->kind != Node::Kind::Ident) error("expected a name before '='");
          auto kw = node(Node::Kind::KwArg, pos);
          kw->s = arg->s;
          kw->a = expression();
          arg = kw;
        }
        if (parameters && arg->kind != Node::Kind::Ident && arg->kind != Node::Kind::KwArg)
          error("expected a parameter name");
        if (arg->kind == Node::Kind::KwArg)
          saw_kw = true;
        else if (saw_kw)
          error(parameters ? "non-default parameter after a default one"
                           : "positional argument after a keyword argument");
      }
      out.push_back(arg);
      if (is(T::Comma)) ++cur_;
    }
    ++cur_;
    return out;
  }
  NodeP member(NodeP object) {
    while (is(T::Dot) || is(T::LBracket)) {
      const Tok& op = t_[cur_++];
      auto n = node(Node::Kind::Member, op.pos);
      n->a = object;
      n->flag = op.type == T::LBracket;
      if (n->flag) {
        std::vector<NodeP> parts;
        bool slice = false;
        while (!is(T::RBracket)) {
          need_more();
          if (is(T::Colon)) {
            parts.push_back(nullptr);
            ++cur_;
            slice = true;
          } else {
            parts.push_back(expression());
            if (is(T::Colon)) {
              ++cur_;
              slice = true;
            }
          }
        }
        if (parts.empty()) error("empty subscript");
        if (slice) {
          if (parts.size() > 3) error("a slice takes at most 3 parts");
          auto s = node(Node::Kind::Slice, op.pos);
          s->a = parts[0];
          s->b = parts.size() > 1 ? parts[1] : nullptr;
          s->c = parts.size() > 2 ? parts[2] : nullptr;
          n->b = s;
        } else {
          n->b = parts[0];
        }
        expect(T::RBracket, "']'");
      } else {
        n->b = primary();
        if (n->b->kind != Node::Kind::Ident && n->b->kind != Node::Kind::Int)
          error("expected a name after '.'");
      }
      object = n;
    }
    return object;
  }
  NodeP primary() {
    need_more();
    const Tok& tk = t_[cur_++];
    switch (tk.type) {
      case T::Num: {
        if (tk.value.find('.') != std::string::npos) {
          auto n = node(Node::Kind::Float, tk.pos);
          n->f = std::strtod(tk.value.c_str(), nullptr);
          return n;
        }
        auto n = node(Node::Kind::Int, tk.pos);
        errno = 0;
        n->i = std::strtoll(tk.value.c_str(), nullptr, 10);
        if (errno == ERANGE) throw Located{tk.pos, "integer literal beyond 2^63 - 1"};
        return n;
      }
      case T::Str: {
        auto n = node(Node::Kind::Str, tk.pos);
        n->s = tk.value;
        while (is(T::Str)) n->s += t_[cur_++].value;
        return n;
      }
      case T::Ident: {
        auto n = node(Node::Kind::Ident, tk.pos);
        n->s = tk.value;
        return n;
      }
      case T::LParen: {
        auto e = sequence(false);
        expect(T::RParen, "')'");
        return e;
      }
      case T::LBracket: {
        auto n = node(Node::Kind::ArrayLit, tk.pos);
        while (!is(T::RBracket)) {
          need_more();
          n->list.push_back(expression());
          if (is(T::Comma)) ++cur_;
        }
        ++cur_;
        return n;
      }
      case T::LBrace: {
        auto n = node(Node::Kind::ObjectLit, tk.pos);
        while (!is(T::RBrace)) {
          need_more();
          auto k = expression();
          expect(T::Colon, "':' in a dict literal");
          n->pairs.emplace_back(k, expression());
          if (is(T::Comma)) ++cur_;
        }
        ++cur_;
        return n;
      }
      default:
        syntax_error(src_, tk.pos, "unexpected '" + tk.value + "'");
    }
  }
};

// Chains such as `1 + 1 + ...` or `x|f|f|...` grow the tree without the parser recursing: measure
// the height with an explicit stack, so the walks over the tree (evaluation, teardown, macro
// scans) all have a bounded depth.
void check_height(const Block& body) {
  std::vector<std::pair<const Node*, int>> stack;
  for (const NodeP& n : body)
    if (n) stack.emplace_back(n.get(), 1);
  while (!stack.empty()) {
    const auto [n, h] = stack.back();
    stack.pop_back();
    if (h > kMaxNesting)
      throw Located{n->pos, "the template nests too deeply (more than " +
                                std::to_string(kMaxNesting) + " levels)"};
    for (const NodeP* c : {&n->a, &n->b, &n->c})
      if (*c) stack.emplace_back(c->get(), h + 1);
    for (const Block* b : {&n->list, &n->body, &n->alt})
      for (const NodeP& x : *b)
        if (x) stack.emplace_back(x.get(), h + 1);
    for (const auto& [k, v] : n->pairs) {
      if (k) stack.emplace_back(k.get(), h + 1);
      if (v) stack.emplace_back(v.get(), h + 1);
    }
  }
}

}  // namespace

std::string location(const Program& p, size_t pos) {
  const std::string& source = p.source;
  pos = p.origin.empty() ? 0 : pos < p.origin.size() ? p.origin[pos] : source.size();
  size_t line = 1, col = 1;
  for (size_t k = 0; k < pos; ++k) {
    if (source[k] == '\n') {
      ++line;
      col = 1;
    } else if ((static_cast<unsigned char>(source[k]) & 0xC0) != 0x80) {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

Program parse(const std::string& template_text) {
  Program p;
  if (template_text.size() > kMaxTemplateBytes)
    fail("template syntax error: the template is too large ({} bytes; at most {})",
         template_text.size(), kMaxTemplateBytes);
  // Bytes that are not UTF-8 read as U+FFFD, as the reference decodes a template file.
  p.source = utf8_sanitize(template_text);
  Mapped m = preprocess(p.source);
  p.origin = std::move(m.origin);
  const std::string& text = m.text;
  try {
    const auto toks = Lexer(text).run();
    Parser parser(toks, text);
    p.body = parser.program();
    check_height(p.body);
  } catch (const Located& e) {
    fail("template syntax error at {}: {}", location(p, e.pos), e.msg);
  }
  return p;
}

}  // namespace brisk::jinja
