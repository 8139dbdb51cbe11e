"""Output and input streams: print family, console, Javy.IO, input(), UTF-8."""

from __future__ import annotations

import json

from tests.runtime.helpers import run_captured


def test_print_family_and_console_streams(make_agent):
    agent = make_agent(
        {
            "main.js": """
            print("p", 1, true, null, undefined, {a: [1, "s"]});
            print_raw("raw-");
            print_raw("no-newline");
            print("");
            eprint("progress", 2);
            console.log("log", {k: "v"});
            console.info("info");
            console.error("err");
            console.warn("warn");
            export default () => "done";
            """
        }
    )
    out = run_captured(agent)
    assert out.stdout == 'p 1 true null undefined { a: [ 1, "s" ] }\nraw-no-newline\nlog { k: "v" }\ninfo\n'
    assert out.stderr == "progress 2\nerr\nwarn\n"
    assert out.result.value == "done"


def test_text_encoder_and_decoder(make_agent):
    agent = make_agent(
        {
            "main.js": """
            export default function () {
              const bytes = new TextEncoder().encode("héllo €😀");
              const back = new TextDecoder().decode(bytes);
              let fatal = "no error";
              try { new TextDecoder("utf-8", {fatal: true}).decode(new Uint8Array([0xff, 0x41])); }
              catch (e) { fatal = e.name; }
              const lenient = new TextDecoder().decode(new Uint8Array([0x41, 0xff, 0x42]));
              const into = new Uint8Array(4);
              const r = new TextEncoder().encodeInto("a€b", into);
              const bom = new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]));
              return {n: bytes.length, back, fatal, lenient, read: r.read, written: r.written, bom};
            }
            """
        }
    )
    assert run_captured(agent).result.value == {
        "n": 14,
        "back": "héllo €😀",
        "fatal": "TypeError",
        "lenient": "A\ufffdB",
        "read": 2,
        "written": 4,
        "bom": "A",
    }


JAVY_ECHO = """
// A Javy program, unmodified: read all of stdin, write a JSON answer to stdout.
function readAll() {
  const chunks = [];
  let total = 0;
  while (true) {
    const buf = new Uint8Array(7);
    const n = Javy.IO.readSync(0, buf);
    if (n === 0) break;
    chunks.push(buf.subarray(0, n));
    total += n;
  }
  const all = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) { all.set(c, off); off += c.length; }
  return all;
}
const input = JSON.parse(new TextDecoder().decode(readAll()));
const output = {sum: input.numbers.reduce((a, b) => a + b, 0), name: input.name.toUpperCase()};
Javy.IO.writeSync(1, new TextEncoder().encode(JSON.stringify(output)));
Javy.IO.writeSync(2, new TextEncoder().encode("javy stderr"));
"""


def test_javy_program_stdin_to_stdout_round_trip(tmp_path, cli):
    program = tmp_path / "javy_echo.js"
    program.write_text(JAVY_ECHO)
    res = cli("run", str(program), stdin=json.dumps({"numbers": [1, 2, 3.5], "name": "ünïcode"}))
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout) == {"sum": 6.5, "name": "ÜNÏCODE"}
    assert res.stderr == "javy stderr"


def test_javy_io_rejects_non_uint8array_and_bad_fds(make_agent):
    agent = make_agent(
        {
            "main.js": """
            export default function () {
              const errs = [];
              for (const f of [() => Javy.IO.writeSync(1, "text"), () => Javy.IO.readSync(0, [1, 2]),
                               () => Javy.IO.writeSync(3, new Uint8Array(1)),
                               () => Javy.IO.readSync(1, new Uint8Array(1))]) {
                try { f(); errs.push("none"); } catch (e) { errs.push(e.name); }
              }
              return errs;
            }
            """
        }
    )
    assert run_captured(agent).result.value == ["TypeError", "TypeError", "RangeError", "RangeError"]


def test_input_reads_lines_from_stdin(make_agent, tmp_path):
    stdin = tmp_path / "stdin.txt"
    stdin.write_text("Ada\r\nsecond line\n")
    agent = make_agent({"main.js": "export default () => [input('name? '), input(), input()];"})
    out = run_captured(agent, stdin_path=stdin)
    assert out.result.value == ["Ada", "second line", ""]
    assert out.stdout == "name? "


def test_input_and_javy_io_share_stdin_without_losing_bytes(make_agent, tmp_path):
    """input() reads ahead in 4 KiB blocks; Javy.IO.readSync(0) gets what it read ahead first."""
    stdin = tmp_path / "stdin.bin"
    long_line = "x" * 5000  # longer than one block: a line may span reads
    stdin.write_bytes(f"first\r\n{long_line}\nrest é\nlast".encode())
    agent = make_agent(
        {
            "main.js": """
            export default () => {
              const a = input();
              const b = input();
              const chunk = new Uint8Array(5);
              const n = Javy.IO.readSync(0, chunk);
              const c = input();
              return [a, b.length, new TextDecoder().decode(chunk.subarray(0, n)), c, input(), input()];
            };
            """
        }
    )
    out = run_captured(agent, stdin_path=stdin)
    assert out.result.value == ["first", 5000, "rest ", "é", "last", ""]


def test_hugind_version_is_the_package_version(make_agent):
    from hugind import __version__

    agent = make_agent({"main.js": "export default () => hugind_version();"})
    assert run_captured(agent).result.value == __version__
