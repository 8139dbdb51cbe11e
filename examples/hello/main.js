// A script agent: its default export receives {args, meta} and its return
// value is printed by `hugind run` as JSON.
import { greet } from "./lib/greet.js";

export default async function (input) {
  const who = input.args.length ? input.args.join(" ") : "world";
  const greeting = input.meta.env.HELLO_GREETING || "Hello";
  eprint(`hello: greeting ${who}`); // progress goes to stderr, never into the result
  await new Promise((resolve) => setTimeout(resolve, 1));
  return { message: greet(greeting, who), runtime: `hugind ${hugind_version()}` };
}
