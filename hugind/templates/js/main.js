// A script agent. hugind calls the default export with {args, meta} and prints
// what it returns as JSON. Everything outside the sandbox (here fs.read_text)
// is a request the policy in agent.yaml allows or denies.

export default async function (input) {
  const file = input.args[0] || "data/hello.txt";
  const text = fs.read_text(file); // throws PermissionDenied outside data/
  eprint(`${file}: ${text.length} characters`); // progress goes to stderr, never into the result
  const words = text.split(/\s+/).filter((w) => w.length > 0);
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  return { file, lines, words: words.length };
}
