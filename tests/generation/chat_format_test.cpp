// Tests for engine/chat_format.h: detection heuristics, each layout, and the prefix property the
// chat command's KV-cache reuse relies on.
#include <gtest/gtest.h>

#include "engine/chat_format.h"

namespace nt {
namespace {

const std::vector<ChatMessage> kConv = {
    {"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Bye"}};

TEST(ChatFormat, DetectsFromTemplateText) {
  EXPECT_EQ(detect_chat_format(""), ChatFormat::Plain);
  EXPECT_EQ(detect_chat_format("{% for m in messages %}<|im_start|>{{ m.role }}"), ChatFormat::ChatML);
  EXPECT_EQ(detect_chat_format("<|start_header_id|>' + message['role'] + '<|end_header_id|>"),
            ChatFormat::Llama3);
  EXPECT_EQ(detect_chat_format("{{ bos_token + '[INST] <<SYS>>\\n' }}"), ChatFormat::Llama2);
  EXPECT_EQ(detect_chat_format("{{ '[INST] ' + message['content'] + ' [/INST]' }}"), ChatFormat::Mistral);
  EXPECT_EQ(detect_chat_format("{{ something else }}"), ChatFormat::ChatML);
  EXPECT_EQ(parse_chat_format("LLAMA3").value(), ChatFormat::Llama3);
  EXPECT_FALSE(parse_chat_format("vicuna").ok());
}

TEST(ChatFormat, ChatML) {
  EXPECT_EQ(render_chat(ChatFormat::ChatML, kConv, true, "", "<|im_end|>"),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatFormat, Llama3) {
  EXPECT_EQ(render_chat(ChatFormat::Llama3, {{"user", "Hi"}}, true, "<|begin_of_text|>", ""),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatFormat, Llama2AndMistral) {
  EXPECT_EQ(render_chat(ChatFormat::Llama2, kConv, true, "<s>", "</s>"),
            "<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello! </s><s>[INST] Bye [/INST]");
  EXPECT_EQ(render_chat(ChatFormat::Mistral, kConv, true, "<s>", "</s>"),
            "<s>[INST] Be brief.\n\nHi [/INST] Hello!</s>[INST] Bye [/INST]");
}

TEST(ChatFormat, PlainContinuation) {
  EXPECT_EQ(render_chat(ChatFormat::Plain, {{"user", "Once upon a time"}}, true, "", ""),
            "Once upon a time");
  EXPECT_EQ(render_chat(ChatFormat::Plain,
                        {{"user", "Once"}, {"assistant", " there was"}, {"user", "Then"}}, true, "", ""),
            "Once there was\nThen");
}

TEST(ChatFormat, EarlierTurnsArePrefixes) {
  for (ChatFormat f : {ChatFormat::Plain, ChatFormat::ChatML, ChatFormat::Llama2, ChatFormat::Llama3,
                       ChatFormat::Mistral}) {
    const std::vector<ChatMessage> first(kConv.begin(), kConv.begin() + 3);  // ends with assistant
    const std::string a = render_chat(f, first, false, "<s>", "</s>");
    const std::string b = render_chat(f, kConv, true, "<s>", "</s>");
    EXPECT_EQ(b.compare(0, a.size(), a), 0) << chat_format_name(f) << "\n" << a << "\n" << b;
  }
}

}  // namespace
}  // namespace nt
