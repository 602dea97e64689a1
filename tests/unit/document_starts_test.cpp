// data.document_starts (data/document_starts.h): where a file is cut into
// documents, against cuts worked out by hand, and what preparation makes of it.
#include "data/document_starts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hpctrain::data {
namespace {

std::vector<Document> cut(const std::string& text) {
  const DocumentStarts python({"def ", "class ", "async def ", "@"});
  return python.split({{text, "f.py"}});
}

std::string joined(const std::vector<Document>& pieces) {
  std::string all;
  for (const auto& piece : pieces) all += piece.text;
  return all;
}

TEST(DocumentStartsTest, ATopLevelDefinitionAfterABlankLineStartsADocument) {
  const std::string text =
      "import os\n\n\nclass Greeter:\n    def greet(self):\n        return 1\n    \n"
      "def main():\n    pass\n";
  const auto pieces = cut(text);
  ASSERT_EQ(pieces.size(), 3U);
  EXPECT_EQ(pieces[0].text, "import os\n\n\n");
  EXPECT_EQ(pieces[1].text, "class Greeter:\n    def greet(self):\n        return 1\n    \n");  // the method stays
  EXPECT_EQ(pieces[2].text, "def main():\n    pass\n");  // a line of spaces is blank
  EXPECT_EQ(pieces[0].origin, "f.py");
  EXPECT_EQ(pieces[1].origin, "f.py:4");
  EXPECT_EQ(pieces[2].origin, "f.py:8");
  EXPECT_EQ(joined(pieces), text);
}

TEST(DocumentStartsTest, DecoratorsStayWithTheirDefinitionAndOnlyLinesAfterABlankOneCut) {
  const std::string text = "x = 1\ndef f():\n    pass\n\n@cache\n@wraps(g)\ndef g():\n    pass\n";
  const auto pieces = cut(text);
  ASSERT_EQ(pieces.size(), 2U);  // `def f` follows a line of code; `def g` follows its decorators
  EXPECT_EQ(pieces[1].text, "@cache\n@wraps(g)\ndef g():\n    pass\n");
  EXPECT_EQ(pieces[1].origin, "f.py:5");
}

TEST(DocumentStartsTest, AFileThatOpensWithAStartIsNotPrecededByAnEmptyDocument) {
  const auto pieces = cut("def f():\n    pass\n\n\ndef g():\n    pass");  // and ends without a newline
  ASSERT_EQ(pieces.size(), 2U);
  EXPECT_EQ(pieces[0].text, "def f():\n    pass\n\n\n");
  EXPECT_EQ(pieces[1].text, "def g():\n    pass");
}

TEST(DocumentStartsTest, APrefixCountsAtTheLinesStartOnly) {
  // "class " inside a line, or after indentation, starts nothing.
  const auto pieces = cut("a = 1\n\nx = 'class A'\n\n    def f(self):\n\n    class B:\n");
  EXPECT_EQ(pieces.size(), 1U);
  EXPECT_EQ(DocumentStarts({}).split({{"def f():\n\n\ndef g():\n", "f"}}).size(), 1U);  // none: a file is one
}

}  // namespace
}  // namespace hpctrain::data
