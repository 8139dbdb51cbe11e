"""Build the hugind JS engine: QuickJS-NG + shim.c + prelude.js -> wasm32-wasi reactor.

Two variants come out of one compilation of QuickJS: the engine hugind runs
(``hugind-js.wasm``, host ABI imports), and the standalone engine
(``hugind-js-standalone.wasm``: shim.c compiled again with
``-DHUGIND_STANDALONE``, plus standalone.js; WASI imports only), which
``hugind build --standalone`` turns into a self-contained WASI command.

Run by the hatchling build hook during ``pip install``, or by hand:

    python runtimes/js/build_engine.py [--out DIR]

Inputs, none of them committed to this repository:

* QuickJS-NG's C sources, taken from the pinned ``quickjs-ng`` source
  distribution (fetched with pip, sha256-checked before use), or from a local
  directory named by ``HUGIND_QUICKJS_SRC`` (offline builds);
* the C compiler from the ``ziglang`` package (``python -m ziglang cc``).

The result is cached by the hash of every input (sources, shim, prelude,
flags, compiler version), so a reinstall with nothing changed costs nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

QUICKJS_NG_VERSION = "0.17.0.2"
QUICKJS_NG_SDIST_SHA256 = "43d2e48272208721a7aaea8e3f02d4b9318f12ef20cc4f5421b59d9a470706ef"
QUICKJS_SOURCES = ("quickjs.c", "libregexp.c", "libunicode.c", "dtoa.c")
# hugind's own C beside the shim, linked into both variants.
OWN_SOURCES = ("json_number.c", "engine_alloc.c")
# quickjs.c and libregexp.c are compiled through these units, which include them and
# then hugind's fast paths that need their internals (FAST_PATHS: included, not
# compiled alone).
QUICKJS_UNITS = {"quickjs.c": "quickjs_hugind.c", "libregexp.c": "libregexp_hugind.c"}
FAST_PATHS = ("fast_sort.c", "fast_regex.c", "fast_dtoa.c", "fast_stringify.c", "fast_bytes.c")
# fast_dtoa.c's powers of ten: for m = -k over every k a double's shortest digits
# need, ceil(10^m * 2^(125 - floor(log2 10^m))), a 126-bit integer, and whether
# that rounding was inexact; written as hugind_pow10.h beside the prelude. The
# whole range, not just common magnitudes: QuickJS's js_dtoa prints some doubles
# with more digits than the shortest (7.120236347223045e-307 as ...0444e-307).
POW10_RANGE = (-292, 325)
# Per-unit defines for QuickJS's sources. JSON.parse calls strtod, which in
# wasi-libc computes in software float128; json_number.c converts instead.
QUICKJS_DEFINES = {"quickjs.c": ("-Dstrtod=hugind_json_strtod",)}
ENGINE_NAME = "hugind-js.wasm"
STANDALONE_NAME = "hugind-js-standalone.wasm"

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE.parent.parent / "hugind" / "_engine"

CFLAGS = (
    "-target",
    "wasm32-wasi",
    "-O2",
    "-fno-sanitize=undefined",  # zig enables UBSan traps by default in some modes
    "-D_GNU_SOURCE",
    "-DNDEBUG",
)
LDFLAGS = (
    "-mexec-model=reactor",
    # A 4 MiB shadow stack less the 64 KiB page that fast_dtoa.c's 10 KB table
    # would have added to every instance; the engine is told to stop JS
    # recursion at 768 KiB, well before it.
    "-Wl,-z,stack-size=4128768",
    "-Wl,--strip-debug",
)


class BuildError(RuntimeError):
    """The engine could not be built; the message says what is missing."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _cache_dir() -> Path:
    base = os.environ.get("HUGIND_BUILD_CACHE")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "hugind" / "engine-build"


# ---- sources ------------------------------------------------------------------


def _check_source_dir(path: Path) -> Path:
    for candidate in (path, path / "upstream-quickjs"):
        if all((candidate / name).is_file() for name in (*QUICKJS_SOURCES, "quickjs.h")):
            return candidate
    raise BuildError(
        f"HUGIND_QUICKJS_SRC={path} does not contain the QuickJS-NG sources ({', '.join(QUICKJS_SOURCES)}, quickjs.h)"
    )


def _download_sdist(dest: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        f"quickjs-ng=={QUICKJS_NG_VERSION}",
        "-d",
        str(dest),
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except FileNotFoundError as exc:  # pragma: no cover - no python?
        raise BuildError(f"cannot run pip to fetch quickjs-ng sources: {exc}") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        raise BuildError(
            f"could not download the quickjs-ng=={QUICKJS_NG_VERSION} source distribution with pip "
            f"(is the package index reachable, and is pip available in the build environment?). "
            f"Set HUGIND_QUICKJS_SRC to a local QuickJS-NG source tree to build offline.\n{tail}"
        )
    found = sorted(dest.glob("quickjs_ng-*.tar.gz")) + sorted(dest.glob("quickjs-ng-*.tar.gz"))
    if not found:
        raise BuildError(f"pip reported success but no quickjs-ng sdist is in {dest}")
    return found[0]


def _extract_sources(sdist: Path, dest: Path) -> Path:
    digest = _sha256(sdist.read_bytes())
    if digest != QUICKJS_NG_SDIST_SHA256:
        raise BuildError(
            f"quickjs-ng sdist {sdist.name} has sha256 {digest}, expected {QUICKJS_NG_SDIST_SHA256}; "
            "refusing to build from unverified sources"
        )
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if "/upstream-quickjs/" in m.name and m.isfile()]
        if not members:
            raise BuildError(f"{sdist.name} has no upstream-quickjs/ directory")
        tar.extractall(dest, members=members, filter="data")
    return _check_source_dir(next(dest.glob("*/upstream-quickjs")))


def locate_sources(workdir: Path) -> Path:
    local = os.environ.get("HUGIND_QUICKJS_SRC")
    if local:
        return _check_source_dir(Path(local).expanduser().resolve())
    cached = _cache_dir() / f"quickjs-ng-{QUICKJS_NG_VERSION}"
    if cached.is_dir():
        try:
            return _check_source_dir(cached)
        except BuildError:
            shutil.rmtree(cached, ignore_errors=True)
    download = workdir / "sdist"
    download.mkdir()
    src = _extract_sources(_download_sdist(download), workdir / "src")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=cached.parent))
        shutil.copytree(src, tmp / "s")
        os.replace(tmp / "s", cached)
        shutil.rmtree(tmp, ignore_errors=True)
    except OSError:
        pass  # the cache is an optimisation only
    return src


# ---- compiler -----------------------------------------------------------------


def _zig() -> list[str]:
    try:
        import ziglang  # noqa: F401
    except ImportError as exc:
        raise BuildError(
            "the C compiler is missing: install the 'ziglang' package (pip install ziglang); "
            "hugind compiles its JS engine with `python -m ziglang cc -target wasm32-wasi`"
        ) from exc
    return [sys.executable, "-m", "ziglang"]


def _zig_version() -> str:
    proc = subprocess.run([*_zig(), "version"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"`python -m ziglang version` failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


# The web-standard globals live one API per file in web/; they are spliced into
# the prelude's factory (in this order: later files build on earlier ones) so
# the engine still evaluates one script and `native` stays private to it.
WEB_DIR = HERE / "web"
WEB_MODULES = (
    "encoding.js",
    "events.js",
    "timers.js",
    "abort.js",
    "idna.js",
    "urlencoding.js",
    "url.js",
    "urlhost.js",
    "urlsearchparams.js",
    "blob.js",
    "formdata.js",
    "crypto.js",
    "clone.js",
    "messaging.js",
    "streams.js",
    "headers.js",
    "fetch.js",
    "intl.js",
)
WEB_MARKER = b"/* @hugind-web-modules */"
# How write_prelude_header lays out an embedded script, part of the build's cache key: 2 is
# NUL-terminated (an engine cached from the unterminated layout must not be reused).
EMBED_FORMAT = 2


def assemble_prelude() -> bytes:
    """prelude.js with each web module (a function expression) in its module list."""
    present = sorted(p.name for p in WEB_DIR.glob("*.js"))
    if sorted(WEB_MODULES) != present:
        raise BuildError(f"runtimes/js/web/ holds {present}, but WEB_MODULES lists {sorted(WEB_MODULES)}")
    main = (HERE / "prelude.js").read_bytes()
    if main.count(WEB_MARKER) != 1:
        raise BuildError(f"prelude.js must hold the marker {WEB_MARKER.decode()} exactly once")
    parts = [
        b"// ---- web/" + name.encode() + b"\n" + (WEB_DIR / name).read_bytes().strip().rstrip(b";")
        for name in WEB_MODULES
    ]
    return main.replace(WEB_MARKER, b",\n".join(parts))


def write_prelude_header(data: bytes, dest: Path, source: str = "prelude.js", symbol: str = "hugind_prelude") -> None:
    """``data`` as a C array, NUL-terminated: QuickJS's tokenizer reads ``src[len]`` as the end of
    input, so without the NUL it read on into the next object in memory (seen: a prelude whose
    length put "I+?" after it failed with "SyntaxError: unexpected token in expression: '?'")."""
    if b"\0" in data:
        raise BuildError(f"{source} holds a NUL byte")
    terminated = data + b"\0"
    rows = [", ".join(str(b) for b in terminated[i : i + 24]) for i in range(0, len(terminated), 24)]
    body = ",\n    ".join(rows)
    dest.write_text(
        f"/* generated from {source} by build_engine.py; do not edit */\n"
        f"static const unsigned char {symbol}_src[] = {{\n    {body}\n}};\n"
        f"static const unsigned long {symbol}_len = {len(data)};\n"
    )


def pow10_table() -> bytes:
    from fractions import Fraction

    lo, hi = POW10_RANGE
    rows, inexact = [], []
    for m in range(lo, hi + 1):
        power = Fraction(10) ** m
        log2 = power.numerator.bit_length() - power.denominator.bit_length()
        if Fraction(2) ** log2 > power:  # bit lengths can overshoot floor(log2) by one
            log2 -= 1
        scaled = power * Fraction(2) ** (125 - log2)
        g = -((-scaled.numerator) // scaled.denominator)  # the ceiling
        if not (1 << 125) <= g < (1 << 126):
            raise BuildError(f"10^{m} scaled to {g.bit_length()} bits, not 126")
        rows.append(f"{{0x{g >> 64:016x}u, 0x{g & ((1 << 64) - 1):016x}u}}")
        inexact.append("1" if scaled.denominator != 1 else "0")
    return (
        "/* generated by build_engine.py (pow10_table); do not edit */\n"
        f"#define HUGIND_POW10_MIN ({lo})\n#define HUGIND_POW10_MAX {hi}\n"
        "static const uint64_t hugind_pow10[][2] = {\n    " + ",\n    ".join(rows) + "\n};\n"
        "static const uint8_t hugind_pow10_inexact[] = {" + ", ".join(inexact) + "};\n"
    ).encode()


def _compile(zig: list[str], src: Path, obj: Path, include: list[Path], defines: tuple[str, ...] = ()) -> None:
    cmd = [*zig, "cc", *CFLAGS, *defines, *[f"-I{i}" for i in include], "-c", str(src), "-o", str(obj)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"compiling {src.name} failed:\n{proc.stderr[-4000:]}")


def build(out_dir: Path = DEFAULT_OUT, *, verbose: bool = False, progress: Callable[[str], None] | None = None) -> Path:
    """Build (or reuse) the engine and place it in ``out_dir``; returns its path.

    Progress lines go to ``progress`` when given (hatch_build.py: the user's terminal),
    else to stderr with ``verbose``."""

    def tell(line: str) -> None:
        if progress is not None:
            progress(line)
        elif verbose:
            print(f"hugind: {line}", file=sys.stderr)

    started = time.monotonic()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hugind-build-") as tmp_name:
        tmp = Path(tmp_name)
        sources = locate_sources(tmp)
        zig = _zig()
        h = hashlib.sha256()
        for name in (*QUICKJS_SOURCES, *sorted(p.name for p in sources.glob("*.h"))):
            h.update(name.encode() + b"\0" + (sources / name).read_bytes())
        for own in ("shim.c", *OWN_SOURCES, *QUICKJS_UNITS.values(), *FAST_PATHS, "standalone.js"):
            h.update(own.encode() + b"\0" + (HERE / own).read_bytes())
        # The assembled prelude: every file it is made of, and how it is joined.
        prelude = assemble_prelude()
        h.update(b"prelude.js\0" + prelude)
        pow10 = pow10_table()
        h.update(b"hugind_pow10.h\0" + pow10)
        h.update(json.dumps([CFLAGS, LDFLAGS, QUICKJS_DEFINES, _zig_version(), EMBED_FORMAT]).encode())
        key = h.hexdigest()
        target = out_dir / ENGINE_NAME
        cached = _cache_dir() / f"{key}.wasm"
        cached_standalone = _cache_dir() / f"{key}-standalone.wasm"
        if cached.is_file() and cached_standalone.is_file():
            _install(cached, cached_standalone, out_dir, key, tell, "cached (built before from the same sources)")
            return target

        write_prelude_header(prelude, tmp / "prelude.h")
        (tmp / "hugind_pow10.h").write_bytes(pow10)
        write_prelude_header(
            (HERE / "standalone.js").read_bytes(), tmp / "standalone.h", "standalone.js", "hugind_standalone"
        )
        # QuickJS is compiled once for both variants; only the shim differs.
        jobs = [
            (
                HERE / QUICKJS_UNITS[n] if n in QUICKJS_UNITS else sources / n,
                tmp / f"{Path(n).stem}.o",
                QUICKJS_DEFINES.get(n, ()),
            )
            for n in QUICKJS_SOURCES
        ]
        jobs += [(HERE / n, tmp / f"{Path(n).stem}.o", ()) for n in OWN_SOURCES]
        jobs.append((HERE / "shim.c", tmp / "shim.o", ()))
        jobs.append((HERE / "shim.c", tmp / "shim-standalone.o", ("-DHUGIND_STANDALONE",)))
        include = [sources, tmp]
        tell(f"compiling the JS engine ({len(jobs)} units) with zig ...")
        done = []

        def compile_one(job: tuple[Path, Path, tuple[str, ...]]) -> None:
            _compile(zig, job[0], job[1], include, job[2])
            done.append(job[1].name)  # list.append is atomic: the pool's threads share it
            tell(f"compiled {job[1].stem}.c ({len(done)}/{len(jobs)}, {time.monotonic() - started:.0f} s so far)")

        with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
            list(pool.map(compile_one, jobs))
        tell("linking the engine and its standalone variant")
        quickjs = [str(obj) for _, obj, _ in jobs[: len(QUICKJS_SOURCES) + len(OWN_SOURCES)]]
        linked = _link(zig, [*quickjs, str(tmp / "shim.o")], tmp / ENGINE_NAME)
        linked_standalone = _link(zig, [*quickjs, str(tmp / "shim-standalone.o")], tmp / STANDALONE_NAME)
        for src, dst in ((linked, cached), (linked_standalone, cached_standalone)):
            try:
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst.with_suffix(".tmp"))
                os.replace(dst.with_suffix(".tmp"), dst)
            except OSError:
                pass
        _install(linked, linked_standalone, out_dir, key, tell, f"built in {time.monotonic() - started:.0f} s")
        return target


def _link(zig: list[str], objs: list[str], out: Path) -> Path:
    cmd = [*zig, "cc", *CFLAGS, *LDFLAGS, *objs, "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"linking {out.name} failed:\n{proc.stderr[-4000:]}")
    return out


def _install(engine: Path, standalone: Path, out_dir: Path, key: str, tell: Callable[[str], None], how: str) -> None:
    for src, name in ((standalone, STANDALONE_NAME), (engine, ENGINE_NAME)):
        target = out_dir / name
        tmp = target.with_suffix(".tmp")
        shutil.copyfile(src, tmp)
        os.replace(tmp, target)
    st = (out_dir / ENGINE_NAME).stat()
    # size and mtime_ns let hugind trust "sha256" without re-hashing the engine at every
    # start, as long as the file is still the one described here (hugind/sandbox/js_engine.py).
    info = {
        "input_hash": key,
        "quickjs_ng": QUICKJS_NG_VERSION,
        "sha256": _sha256((out_dir / ENGINE_NAME).read_bytes()),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "standalone_sha256": _sha256((out_dir / STANDALONE_NAME).read_bytes()),
    }
    (out_dir / "BUILD_INFO.json").write_text(json.dumps(info, indent=2) + "\n")
    for name in (ENGINE_NAME, STANDALONE_NAME):
        target = out_dir / name
        tell(f"JS engine {how}: {target} ({target.stat().st_size} bytes)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ns = parser.parse_args()
    try:
        build(ns.out, verbose=True)
    except BuildError as exc:
        print(f"hugind: cannot build the JS engine: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
