// The OpenAI SDK streaming a chat (stream: true): it reads the server-sent
// events from response.body, a ReadableStream. CHAT_BASE_URL as in openai.js.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: CHAT_BASE_URL, apiKey: "test-key", maxRetries: 0, timeout: 20000 });
const stream = await client.chat.completions.create({
  model: "test-model",
  messages: [{ role: "user", content: "Count." }],
  stream: true,
});
const parts = [];
let finish = null;
for await (const chunk of stream) {
  const choice = chunk.choices[0];
  if (choice?.delta?.content) parts.push(choice.delta.content);
  if (choice?.finish_reason) finish = choice.finish_reason;
}
console.log(JSON.stringify({ content: parts.join(""), chunks: parts.length > 1, finish }));
