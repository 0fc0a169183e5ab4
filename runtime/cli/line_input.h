// Text lines from a FILE*, for the programs that run models (the CLI, e2e_bench). They read
// with stdio, not iostreams: a program that includes <iostream> or opens an fstream sets up the
// standard streams and the C++ locale machinery (both character types), about 0.6 MiB of
// resident code that a translation never needs.
#pragma once

#include <cstdio>
#include <string>

namespace mtlite {
namespace cli {

// The next line of f without its '\n' (bytes as they are: NUL and '\r' included), like
// std::getline: false at the end of the input (or on a read error) with nothing read; a last line
// without '\n' is returned.
inline bool ReadLine(std::FILE* f, std::string* line) {
  line->clear();
  int c;
  while ((c = getc_unlocked(f)) != EOF) {
    if (c == '\n') return true;
    line->push_back(char(c));
  }
  return !line->empty();
}

// ReadLine, then one '\r' before the '\n' dropped (CRLF input).
inline bool ReadTextLine(std::FILE* f, std::string* line) {
  if (!ReadLine(f, line)) return false;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

}  // namespace cli
}  // namespace mtlite
