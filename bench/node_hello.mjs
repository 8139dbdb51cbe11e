// The node equivalent of examples/hello, for bench/startup.py.
import { greet } from "../examples/hello/lib/greet.js";

const args = process.argv.slice(2);
const who = args.length ? args.join(" ") : "world";
process.stderr.write(`hello: greeting ${who}\n`);
await new Promise((resolve) => setTimeout(resolve, 1));
console.log(JSON.stringify({ message: greet(process.env.HELLO_GREETING || "Hello", who), runtime: "node" }));
