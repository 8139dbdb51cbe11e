// Runs a WASI command under node's own node:wasi, with no hugind anywhere:
// the portability check of `hugind build --standalone`.
//
//   node wasi_run.mjs MODULE STDIN_FILE STDOUT_FILE [ARGS...]
//
// The module's stdin and stdout are those files (stderr is inherited); its
// arguments are ["agent", ...ARGS]; its environment is this process's. The
// exit status is the module's.
import { closeSync, openSync, readFileSync } from "node:fs";
import process from "node:process";
import { WASI } from "node:wasi";

const [modulePath, stdinPath, stdoutPath, ...args] = process.argv.slice(2);
const stdin = openSync(stdinPath, "r");
const stdout = openSync(stdoutPath, "w");
const wasi = new WASI({
  version: "preview1",
  args: ["agent", ...args],
  env: process.env,
  stdin,
  stdout,
  stderr: 2,
  returnOnExit: true,
});
const module = await WebAssembly.compile(readFileSync(modulePath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
const status = wasi.start(instance);
closeSync(stdout);
closeSync(stdin);
process.exitCode = status;
