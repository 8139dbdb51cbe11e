"""Backend resolution: a URL, or a name from ``$HUGIND_HOME/config.yaml``.

Config file shape::

    default_backend: local          # optional; used when no spec is given
    backends:
      local:
        url: http://127.0.0.1:8080/v1
        model: qwen3-8b
        api_key_env: LOCAL_LLM_KEY  # optional: env var holding the key
        headers: {X-Team: a}        # optional; values may use ${ENV_VAR}
        tool_format: text           # text | native | auto; wins over agent.yaml's (this server's ability)
        timeout: 120                # seconds
        max_retries: 3
        session_mode: fresh         # fresh | resume | stateless
        fallbacks: [remote, http://10.0.0.5:8000/v1]  # optional: tried in order when this one fails
        max_tokens: 1024            # optional sampling: max_tokens, temperature, top_p, stop, seed
        temperature: 0

Sampling options set here bound the agent's (agent.yaml ``sampling``):
``max_tokens`` is a cap, ``temperature``/``top_p``/``seed`` are fixed,
``stop`` sequences are always sent (``hugind.llm.sampling``). A backend
mapping written in agent.yaml may not set them: the agent's go in its own
``sampling`` key, where they cannot widen yours.

A fallback is a backend name from this file, a URL, or a mapping of inline
settings (``{url, model, ...}``). A name's own fallbacks follow it, depth
first; names reached twice are tried once; a cycle (``a -> b -> a``) is an
error naming it. ``docs/sessions-and-fallbacks.md`` says when the chain moves on.

The API key is read from the environment variable named by ``api_key_env``;
it is held out of ``repr`` and never put in an error message.
"""

from __future__ import annotations

import copy
import functools
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from hugind.llm.endpoint import SESSION_MODES, api_base
from hugind.llm.errors import BackendConfigError
from hugind.llm.sampling import SAMPLING_KEYS, SamplingError, SamplingRules, parse_sampling
from hugind.paths import hugind_home
from hugind.yamlfile import load_yaml

if TYPE_CHECKING:
    from hugind.llm.client import ChatClient

TOOL_FORMATS = ("text", "native", "auto")
_KNOWN_KEYS = {
    "url",
    "model",
    "api_key_env",
    "headers",
    "tool_format",
    "timeout",
    "max_retries",
    "session_mode",
    "session_id",
    "fallbacks",
    *SAMPLING_KEYS,
}
_ENV_REF = r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}"  # compiled (and cached) by re on first use


def default_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return _config_path_for(env.get("HUGIND_HOME"), os.environ.get("HOME"))


@functools.lru_cache(maxsize=8)
def _config_path_for(hugind_home_value: str | None, home: str | None) -> Path:
    # A function of the two variables it depends on (HOME is what expanduser and
    # Path.home read), so every run's backend preview skips the path arithmetic.
    return hugind_home({"HUGIND_HOME": hugind_home_value} if hugind_home_value else {}) / "config.yaml"


@dataclass(frozen=True)
class BackendConfig:
    url: str
    model: str = ""
    name: str | None = None
    api_key: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    tool_format: str | None = None  # None: not set here (agent.yaml's, else auto)
    timeout: float = 120.0
    max_retries: int = 3
    session_mode: str = "fresh"
    session_id: str | None = None
    # Tried in order when this backend fails (hugind.llm.fallback); already flattened.
    fallbacks: tuple[BackendConfig, ...] = field(default=(), repr=False)
    # A URL written in agent.yaml: the agent's network policy must admit it before use.
    from_agent: bool = False
    sampling: Mapping[str, Any] = field(default_factory=dict)  # the user's (config.yaml): bounds
    agent_sampling: Mapping[str, Any] = field(default_factory=dict)  # agent.yaml's: defaults inside them
    # The addresses that policy checked for it (hugind.llm.endpoint.Pin): the client
    # connects only there (set by hugind.backends once admitted; None: a trusted URL).
    pin: Any = field(default=None, repr=False, compare=False)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.url})" if self.name else self.url

    def with_overrides(self, **changes: Any) -> BackendConfig:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def for_agent(self, agent_sampling: Mapping[str, Any] | None) -> BackendConfig:
        """This backend and its fallbacks with the agent's sampling options (each under its own user's)."""
        if not agent_sampling:
            return self
        chain = tuple(f.for_agent(agent_sampling) for f in self.fallbacks)
        return replace(self, agent_sampling=dict(agent_sampling), fallbacks=chain)

    def make_client(self, **kwargs: Any) -> ChatClient:
        from hugind.llm.client import ChatClient

        rules = SamplingRules(dict(self.sampling), dict(self.agent_sampling))
        if rules:
            kwargs.setdefault("sampling", rules)
        return ChatClient(
            self.url,
            self.model,
            api_key=self.api_key,
            headers=dict(self.headers),
            timeout=self.timeout,
            max_retries=self.max_retries,
            session_mode=self.session_mode,
            session_id=self.session_id,
            **({"pin": self.pin} if self.pin is not None else {}),
            **kwargs,
        )


def resolve_backend(
    spec: str | Mapping[str, Any] | None,
    *,
    config_path: str | Path | None = None,
    model: str | None = None,
    env: Mapping[str, str] | None = None,
) -> BackendConfig:
    """Resolve ``spec`` (URL, backend name, inline mapping or None) to a config.

    A mapping is either inline settings (``{url: ..., model: ...}``) or a
    reference with overrides (``{name: local, model: other}``). ``model``
    overrides whatever the spec says.
    """
    env = os.environ if env is None else env
    path = Path(config_path).expanduser() if config_path else default_config_path(env)
    if spec is None:
        if not path.is_file():  # nothing given anywhere: say how to give one, the flag first
            raise BackendConfigError(
                "no LLM backend given: pass --backend URL (and --model NAME), set HUGIND_BACKEND, "
                f"or name a default_backend in {path} (there is no config file there)"
            )
        backends, default = _load(path, required=True)
        name = default or (next(iter(backends)) if len(backends) == 1 else None)
        if name is None:
            raise BackendConfigError(
                f"no backend given and {path} sets no default_backend; known backends: {_names(backends)}"
            )
        return _named(name, backends, path, env).with_overrides(model=model)
    if isinstance(spec, str):
        text = spec.strip()
        if not text:
            raise BackendConfigError("backend spec is empty")
        if "://" in text:
            return _from_entry(None, {"url": text}, env).with_overrides(model=model)
        backends, _ = _load(path, required=True, wanted=text)
        return _named(text, backends, path, env).with_overrides(model=model)
    if isinstance(spec, Mapping):
        _no_agent_sampling(spec, "the backend mapping")
        settings = dict(spec)
        ref = settings.pop("name", None) or settings.pop("backend", None)
        backends: dict[str, Any] = {}
        if ref is not None:
            if not isinstance(ref, str):
                raise BackendConfigError("backend 'name' must be a string")
            backends, _ = _load(path, required=True, wanted=ref)
            settings = {**_lookup(ref, backends, path), **settings}
        elif "url" not in settings:
            raise BackendConfigError("backend mapping needs 'url' or 'name'")
        elif settings.get("fallbacks"):
            backends, _ = _load(path, required=False)  # fallback names refer to the user's config
        # A mapping is what agent.yaml writes: URLs in its own fallbacks list were chosen by the agent.
        inline = "fallbacks" in spec
        config = _from_entry(ref, settings, env)
        chain = _chain(ref, settings.get("fallbacks"), backends, path, env, agent_urls=inline)
        return replace(config, fallbacks=chain).with_overrides(model=model)
    raise BackendConfigError(f"backend spec must be a URL, a name or a mapping, not {type(spec).__name__}")


def _named(name: str, backends: Mapping[str, Any], path: Path, env: Mapping[str, str]) -> BackendConfig:
    entry = _lookup(name, backends, path)
    config = _from_entry(name, entry, env)
    return replace(config, fallbacks=_chain(name, entry.get("fallbacks"), backends, path, env, agent_urls=False))


def _chain(
    owner: str | None,
    first: Any,
    backends: Mapping[str, Any],
    path: Path,
    env: Mapping[str, str],
    *,
    agent_urls: bool,
) -> tuple[BackendConfig, ...]:
    """The fallbacks of ``owner``, depth first, each backend once; a cycle is an error naming it."""
    out: list[BackendConfig] = []
    seen: set[str] = set()

    def visit(entries: Any, trail: list[str], top: bool) -> None:
        who = f"backend '{trail[-1]}'" if trail else "backend"
        for item in _fallback_items(entries, who):
            if isinstance(item, str) and "://" not in item:
                if item in trail:
                    loop = " -> ".join([*trail[trail.index(item) :], item])
                    raise BackendConfigError(f"{who}: fallbacks form a cycle: {loop}")
                if item not in backends:
                    raise BackendConfigError(
                        f"{who}: unknown fallback '{item}' (known backends in {path}: {_names(backends)})"
                    )
                entry = dict(backends[item])
                config = _from_entry(item, entry, env)
                key = f"name:{item}"
                nested: Any = entry.get("fallbacks")
            else:
                settings = {"url": item} if isinstance(item, str) else dict(item)
                if agent_urls and top:
                    _no_agent_sampling(settings, "an inline fallback")
                if "fallbacks" in settings:
                    raise BackendConfigError(f"{who}: an inline fallback cannot have fallbacks of its own")
                config = replace(_from_entry(None, settings, env), from_agent=agent_urls and top)
                key, nested = f"url:{config.url}:{config.model}", None
            if key not in seen:
                seen.add(key)
                out.append(config)
            if nested:
                visit(nested, [*trail, item] if isinstance(item, str) else trail, False)

    visit(first, [owner] if owner else [], True)
    return tuple(out)


def _no_agent_sampling(settings: Mapping[str, Any], what: str) -> None:
    """agent.yaml's backend mappings may not set sampling: merged over the user's entry they would widen it."""
    given = [k for k in SAMPLING_KEYS if k in settings]
    if given:
        raise BackendConfigError(
            f"{what} in agent.yaml cannot set {', '.join(given)}: put the agent's sampling options under "
            "agent.yaml's 'sampling' (they are bounded by the backend's own settings in config.yaml)"
        )


def _fallback_items(entries: Any, who: str) -> list[Any]:
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise BackendConfigError(f"{who}: 'fallbacks' must be a list of backend names, URLs or mappings")
    for item in entries:
        if isinstance(item, str) and item.strip():
            continue
        if isinstance(item, Mapping) and isinstance(item.get("url"), str):
            continue
        raise BackendConfigError(f"{who}: each fallback must be a backend name, a URL or a mapping with 'url'")
    return [item.strip() if isinstance(item, str) else item for item in entries]


# The parsed config file, keyed by its path; reused while one stat says it is the
# same file (device, inode, size, mtime in ns): every run previews its backend,
# and the YAML parse costs far more than the stat.
_parsed: dict[str, tuple[tuple[int, int, int, int], tuple[dict[str, Any], str | None]]] = {}


def _load(path: Path, *, required: bool, wanted: str | None = None) -> tuple[dict[str, Any], str | None]:
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is None or not stat.S_ISREG(st.st_mode):
        _parsed.pop(str(path), None)
        # Not a file by this stat: asking again (most users have no config file) buys nothing.
        return _load_file(path, required=required, wanted=wanted, is_file=False)
    signature = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    cached = _parsed.get(str(path))
    if cached is None or cached[0] != signature:
        cached = (signature, _load_file(path, required=required, wanted=wanted))
        _parsed[str(path)] = cached
    # A copy: callers build their configs from it and may change what they got.
    return copy.deepcopy(cached[1])


def _load_file(
    path: Path, *, required: bool, wanted: str | None = None, is_file: bool | None = None
) -> tuple[dict[str, Any], str | None]:
    if not (path.is_file() if is_file is None else is_file):
        if required:
            what = f"unknown backend '{wanted}': " if wanted else ""
            raise BackendConfigError(
                f"{what}no config file at {path} (set HUGIND_HOME or give the backend as an http(s) URL)"
            )
        return {}, None
    try:
        data = load_yaml(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise BackendConfigError(f"{path}: cannot read config: {_one_line(exc)}") from None
    if not isinstance(data, Mapping):
        raise BackendConfigError(f"{path}: config must be a mapping")
    backends = data.get("backends") or {}
    if not isinstance(backends, Mapping) or not all(isinstance(v, Mapping) for v in backends.values()):
        raise BackendConfigError(f"{path}: 'backends' must map names to settings")
    default = data.get("default_backend")
    if default is not None and not isinstance(default, str):
        raise BackendConfigError(f"{path}: 'default_backend' must be a name")
    return {str(k): dict(v) for k, v in backends.items()}, default


def _lookup(name: str, backends: Mapping[str, Any], path: Path) -> dict[str, Any]:
    if name not in backends:
        raise BackendConfigError(f"unknown backend '{name}' (known backends in {path}: {_names(backends)})")
    return dict(backends[name])


def _names(backends: Mapping[str, Any]) -> str:
    return ", ".join(sorted(backends)) or "none"


def _from_entry(name: str | None, entry: Mapping[str, Any], env: Mapping[str, str]) -> BackendConfig:
    who = f"backend '{name}'" if name else "backend"
    unknown = sorted(set(entry) - _KNOWN_KEYS)
    if unknown:
        raise BackendConfigError(f"{who}: unknown setting(s) {', '.join(unknown)}")
    url = entry.get("url")
    if not isinstance(url, str) or not url.strip():
        raise BackendConfigError(f"{who}: 'url' is required")
    url = api_base(url)
    model = entry.get("model") or ""
    if not isinstance(model, str):
        raise BackendConfigError(f"{who}: 'model' must be a string")
    api_key = None
    key_env = entry.get("api_key_env")
    if key_env is not None:
        if not isinstance(key_env, str) or not key_env:
            raise BackendConfigError(f"{who}: 'api_key_env' must name an environment variable")
        api_key = env.get(key_env)
        if not api_key:
            raise BackendConfigError(f"{who}: environment variable {key_env} (api_key_env) is not set")
    headers = entry.get("headers") or {}
    if not isinstance(headers, Mapping):
        raise BackendConfigError(f"{who}: 'headers' must be a mapping")
    resolved_headers = {str(k): _expand(str(v), env, who) for k, v in headers.items()}
    tool_format = entry.get("tool_format")
    if tool_format is not None and tool_format not in TOOL_FORMATS:
        raise BackendConfigError(f"{who}: tool_format must be one of {', '.join(TOOL_FORMATS)}")
    timeout = entry.get("timeout", 120.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise BackendConfigError(f"{who}: 'timeout' must be a positive number of seconds")
    retries = entry.get("max_retries", 3)
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise BackendConfigError(f"{who}: 'max_retries' must be a non-negative integer")
    session_mode = entry.get("session_mode", "fresh")
    if session_mode not in SESSION_MODES:
        raise BackendConfigError(f"{who}: session_mode must be one of {', '.join(SESSION_MODES)}")
    session_id = entry.get("session_id")
    if session_id is not None and not isinstance(session_id, str):
        raise BackendConfigError(f"{who}: 'session_id' must be a string")
    if session_mode == "resume" and not session_id:
        raise BackendConfigError(f"{who}: session_mode 'resume' needs a session_id")
    try:
        sampling = parse_sampling(entry)
    except SamplingError as err:
        raise BackendConfigError(f"{who}: {err}") from None
    return BackendConfig(
        url=url,
        model=model,
        name=name,
        api_key=api_key,
        headers=resolved_headers,
        tool_format=tool_format,
        timeout=float(timeout),
        max_retries=retries,
        session_mode=session_mode,
        session_id=session_id,
        sampling=sampling,
    )


def _expand(value: str, env: Mapping[str, str], who: str) -> str:
    def sub(match: re.Match[str]) -> str:
        var = match.group(1)
        if var not in env:
            raise BackendConfigError(f"{who}: header refers to ${{{var}}}, which is not set")
        return env[var]

    return re.sub(_ENV_REF, sub, value)


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300]
