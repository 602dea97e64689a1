// The named choices of an experiment ("gpt", "cosine", "ddap", ...): each is an
// enum, parsed once where the experiment is read (SectionReader::choice), so
// no use site compares strings and a switch over one must name every value
// (-Werror=switch). ChoiceTable<E> lists an enum's names, the one place they
// are spelled; name_of prints one back.
#pragma once

#include <array>
#include <string_view>

namespace hpctrain::config {

template <class E>
struct Choice {
  std::string_view name;
  E value;
};

// Specialised next to each enum: static constexpr std::array<Choice<E>, N> entries.
template <class E>
struct ChoiceTable;

template <class E>
constexpr std::string_view name_of(E value) {
  for (const auto& choice : ChoiceTable<E>::entries) {
    if (choice.value == value) return choice.name;
  }
  return "?";
}

}  // namespace hpctrain::config
