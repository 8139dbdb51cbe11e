// The official OpenAI SDK against the test suite's loopback chat server.
// CHAT_BASE_URL is set at bundle time (esbuild --define). Only what the
// scripted server fixes is printed: the reply, its finish reason and usage.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: CHAT_BASE_URL, apiKey: "test-key", maxRetries: 0, timeout: 20000 });
try {
  const completion = await client.chat.completions.create({
    model: "test-model",
    messages: [
      { role: "system", content: "Answer briefly." },
      { role: "user", content: "Say hello." },
    ],
    temperature: 0,
  });
  const choice = completion.choices[0];
  console.log(JSON.stringify({
    object: completion.object,
    model: completion.model,
    content: choice.message.content,
    finish: choice.finish_reason,
    usage: completion.usage,
  }));
} catch (e) {
  // The SDK wraps a failed fetch in APIConnectionError; its cause is fetch's error.
  console.log(JSON.stringify({ error: e.constructor.name, cause: e.cause?.name ?? null, message: String(e.cause?.message ?? e.message) }));
}
