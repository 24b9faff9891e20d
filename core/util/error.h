#pragma once
// Error kinds, after Gloo's split: bad input from the user (a file, a key, a value) is an
// InputError; a broken internal invariant is a LogicError carrying the failed condition and where.
// Both are caught once, in main.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace dtbench {

// The user gave something we cannot use: a corrupt file, an unknown key, a shape that does not fit.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reading, writing or talking to a peer failed; the operation's state is unknown afterwards.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Training itself went wrong: the loss is no longer a number.
class DivergedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Something the code itself promised did not hold.
class LogicError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

template <typename... Args>
[[noreturn]] void fail_input(fmt::format_string<Args...> format, Args&&... args) {
  throw InputError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace dtbench

// Checks an internal invariant; on failure throws LogicError naming the condition, file and line.
#define DTB_CHECK(condition, ...)                                                          \
  do {                                                                                     \
    if (!(condition)) {                                                                    \
      throw ::dtbench::LogicError(fmt::format("{}:{}: check failed: {}: {}", __FILE__,     \
                                              __LINE__, #condition,                        \
                                              fmt::format(__VA_ARGS__)));                  \
    }                                                                                      \
  } while (false)
