// The lexer of the `.stx` text format (docs/design.md §2): identifiers, integers,
// floats (decimal, hex, nan/inf), punctuation, with the line:col of each
// token for diagnostics. Internal to the parser.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "semantics/diag.h"

namespace stax::sem::detail {

enum class Tok { End, Ident, Int, Float, Punct };

struct Token {
  Tok kind = Tok::End;
  std::string text;
  SourceLoc loc;
};

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip();
      Token t;
      t.loc = {line_, col_};
      if (i_ >= s_.size()) {
        out.push_back(t);
        return out;
      }
      char c = s_[i_];
      if (std::isalpha(uc(c)) || c == '_') {
        size_t b = i_;
        while (i_ < s_.size() && (std::isalnum(uc(s_[i_])) || s_[i_] == '_' || s_[i_] == '.')) adv();
        t.kind = Tok::Ident;
        t.text = std::string(s_.substr(b, i_ - b));
      } else if (std::isdigit(uc(c)) || (c == '.' && i_ + 1 < s_.size() && std::isdigit(uc(s_[i_ + 1])))) {
        lex_number(t);
      } else {
        static const char* two[] = {"=>", "->", "//"};
        t.kind = Tok::Punct;
        bool done = false;
        for (const char* p : two)
          if (s_.substr(i_, 2) == p) {
            t.text = p;
            adv();
            adv();
            done = true;
          }
        if (!done) {
          if (std::string_view("()[],:=+-*%").find(c) == std::string_view::npos) {
            std::string shown = std::isprint(uc(c)) ? std::string(1, c) : "\\x" + hex(uc(c));
            throw DiagError{t.loc, "unexpected character '" + shown + "'"};
          }
          t.text = std::string(1, c);
          adv();
        }
      }
      out.push_back(std::move(t));
    }
  }

 private:
  static unsigned char uc(char c) { return static_cast<unsigned char>(c); }
  static std::string hex(unsigned v) {
    const char* d = "0123456789abcdef";
    return {d[(v >> 4) & 15], d[v & 15]};
  }
  void adv() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }
  void skip() {
    while (i_ < s_.size()) {
      if (std::isspace(uc(s_[i_]))) {
        adv();
      } else if (s_[i_] == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') adv();
      } else {
        break;
      }
    }
  }
  void lex_number(Token& t) {
    size_t b = i_;
    bool is_float = false;
    if (s_.substr(i_, 2) == "0x" || s_.substr(i_, 2) == "0X") {
      adv();
      adv();
      while (i_ < s_.size() && (std::isxdigit(uc(s_[i_])) || s_[i_] == '.')) {
        if (s_[i_] == '.') is_float = true;
        adv();
      }
      if (i_ < s_.size() && (s_[i_] == 'p' || s_[i_] == 'P')) {
        is_float = true;
        adv();
        if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) adv();
        while (i_ < s_.size() && std::isdigit(uc(s_[i_]))) adv();
      }
      if (!is_float) throw DiagError{t.loc, "hexadecimal literal must be a hex float with a 'p' exponent"};
    } else {
      while (i_ < s_.size() && std::isdigit(uc(s_[i_]))) adv();
      if (i_ < s_.size() && s_[i_] == '.') {
        is_float = true;
        adv();
        while (i_ < s_.size() && std::isdigit(uc(s_[i_]))) adv();
      }
      if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
        is_float = true;
        adv();
        if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) adv();
        if (i_ >= s_.size() || !std::isdigit(uc(s_[i_]))) throw DiagError{t.loc, "malformed exponent in number"};
        while (i_ < s_.size() && std::isdigit(uc(s_[i_]))) adv();
      }
    }
    if (i_ < s_.size() && (std::isalpha(uc(s_[i_])) || s_[i_] == '_'))
      throw DiagError{t.loc, "malformed number '" + std::string(s_.substr(b, i_ - b + 1)) + "'"};
    t.kind = is_float ? Tok::Float : Tok::Int;
    t.text = std::string(s_.substr(b, i_ - b));
  }

  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
};


}  // namespace stax::sem::detail
