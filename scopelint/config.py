"""``[tool.scopelint]`` in pyproject.toml, command-line overrides, rule selection."""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from scopelint.core.frameworks import DEFAULT_INFERENCE_FUNCTIONS
from scopelint.engine import Settings
from scopelint.finding import SEVERITIES
from scopelint.preview import is_preview
from scopelint.rules import ALL_RULES, OPT_IN

KNOWN_KEYS = {
    "select", "ignore", "extend-select", "per-file-ignores", "extend-per-file-ignores", "exclude",
    "extend-exclude", "inference-functions", "severity", "extend", "framework",
    # as ruff's: the tiers, fixes, files, output, cache and the rules' documentation address
    "preview", "explicit-preview-rules", "fixable", "unfixable", "extend-fixable", "include",
    "force-exclude", "respect-gitignore", "output-format", "cache-dir", "fix", "unsafe-fixes",
    "show-fixes", "docs-url",
}
# ``--output-format`` and ``output-format``: ``full`` is ruff's name of ``text``.
OUTPUT_FORMATS = [
    "text", "full", "concise", "grouped", "json", "json-lines", "sarif", "github", "gitlab", "junit",
    "pylint", "rdjson", "azure",
]
# The configuration files of a folder, the first found wins (as ruff's ``.ruff.toml`` >
# ``ruff.toml`` > ``pyproject.toml``); a pyproject.toml without [tool.scopelint] is not one.
CONFIG_FILES = (".scopelint.toml", "scopelint.toml", "pyproject.toml")
_BOOL_KEYS = ("preview", "explicit-preview-rules", "force-exclude", "respect-gitignore", "fix", "unsafe-fixes", "show-fixes")
_STR_KEYS = ("output-format", "cache-dir", "docs-url")
# ``framework = "..."``: the framework the project's files that import none are for.
FRAMEWORK_NAMES = {"torch": "torch", "pytorch": "torch", "mxnet": "mxnet"}
# Keys whose values add to the extended configuration's (ruff chains them); the
# others replace it. (``ignore`` and ``extend-select`` start over where ``select`` is set.)
_CHAINED = ("extend-exclude", "extend-fixable")
_RESET_BY_SELECT = ("ignore", "extend-select")
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "build", "dist",
    "site-packages", "__pycache__", ".scopelint_cache", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", "node_modules", ".eggs", "*.egg-info",
)


DEFAULT_INCLUDE = ("*.py", "*.pyi", "*.ipynb")
DEFAULT_SUFFIXES = (".py", ".pyi", ".ipynb")


class ConfigError(Exception):
    """A configuration or usage problem: reported in one line, exit code 2."""


def expand_codes(codes: Iterable[str], where: str) -> List[str]:
    """Codes and prefixes (``SL1``, ``SL20``, ``ALL``) -> rule codes, preview rules
    included (what ``ignore``, ``per-file-ignores`` and ``severity`` name); unknown is an
    error."""
    out: List[str] = []
    for raw in codes:
        code = str(raw).strip().upper()
        if not code:
            continue
        if code == "ALL":
            matched = list(ALL_RULES)
        else:
            matched = [c for c in ALL_RULES if c.startswith(code)]
        if not matched:
            import difflib

            near = difflib.get_close_matches(code, list(ALL_RULES), 1)
            hint = f"; did you mean `{near[0]}`?" if near else f" (known: {', '.join(ALL_RULES)})"
            raise ConfigError(f"{where}: unknown rule code or prefix `{raw}`{hint}")
        out.extend(matched)
    return out


def select_codes(codes: Iterable[str], where: str, preview: bool, explicit: bool,
                 warn: Optional[Callable[[str], None]] = None) -> List[str]:
    """What a *selection* (``select``, ``extend-select``) turns on, as ruff selects
    (https://docs.astral.sh/ruff/preview/#using-rules-that-are-in-preview): a preview
    rule only in preview mode, and then by a prefix or ``ALL`` too unless
    ``explicit-preview-rules`` asks for its exact code. A preview rule named by its code
    outside preview mode is left out with a warning."""
    out: List[str] = []
    for raw in codes:
        code = str(raw).strip().upper()
        exact = code in ALL_RULES
        for c in expand_codes([raw], where):
            if is_preview(c):
                if not preview:
                    if exact and warn is not None:
                        warn(f"{where}: selecting `{c}` has no effect: it is a preview rule; enable preview mode "
                             "(--preview, or preview = true)")
                    continue
                if explicit and not exact:
                    continue
            out.append(c)
    return out


def _str_list(value, key: str, where: str) -> List[str]:
    """A list of strings, strictly (as ruff: ``select = "SL107"`` is an error, not a
    one-code list)."""
    if isinstance(value, str):
        raise ConfigError(f"{where}: `{key}` must be a list of strings, not a string: write {key} = [{value!r}]".replace("'", '"'))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return value


def _typed(table: dict, key: str, kind: type, where: str):
    value = table.get(key)
    if value is not None and not isinstance(value, kind):
        what = {bool: "true or false", str: "a string"}[kind]
        raise ConfigError(f"{where}: `{key}` must be {what}, not {value!r}")
    return value


@dataclass
class Config:
    """One ``[tool.scopelint]`` table (or the defaults when there is none)."""

    path: Optional[Path] = None
    select: Optional[List[str]] = None
    ignore: List[str] = field(default_factory=list)
    extend_select: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    exclude: Optional[List[str]] = None
    extend_exclude: List[str] = field(default_factory=list)
    inference_functions: List[str] = field(default_factory=list)
    severity: Dict[str, str] = field(default_factory=dict)
    framework: Optional[str] = None  # what files that import no framework are for
    # The selection as written (codes and prefixes, checked), expanded per file with the
    # preview mode: ``Resolver._settings_of``.
    select_raw: Optional[List[str]] = None
    extend_select_raw: List[str] = field(default_factory=list)
    preview: Optional[bool] = None
    explicit_preview_rules: Optional[bool] = None
    fixable: Optional[List[str]] = None  # None: every rule (ruff's ``fixable = ["ALL"]``)
    unfixable: List[str] = field(default_factory=list)
    include: Optional[List[str]] = None  # globs of the files a folder's walk checks
    # Settings of the run, read from the configuration of the working folder (or --config):
    force_exclude: Optional[bool] = None
    respect_gitignore: Optional[bool] = None
    output_format: Optional[str] = None
    cache_dir: Optional[str] = None
    fix: Optional[bool] = None
    unsafe_fixes: Optional[bool] = None
    show_fixes: Optional[bool] = None
    docs_url: Optional[str] = None

    def is_fixable(self, code: str) -> bool:
        return (self.fixable is None or code in self.fixable) and code not in self.unfixable

    @property
    def root(self) -> Path:
        return self.path.parent if self.path else Path.cwd()


def _open_regular(path: Path):
    """``path`` opened for reading, or ConfigError when it is not a regular file: a FIFO
    (opened without O_NONBLOCK, it waits forever for a writer), a device, a socket, a
    folder. Checked on the descriptor, so a file swapped after a check is still caught."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a folder" if stat.S_ISDIR(mode) else "a socket" if stat.S_ISSOCK(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
            raise ConfigError(f"{path}: cannot read: {kind}, not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_table(path: Path) -> Optional[dict]:
    """The ``[tool.scopelint]`` table of a TOML file; None when it has none."""
    if sys.version_info >= (3, 11):  # (imported here: a run outside any project reads no TOML)
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        with _open_regular(path) as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:  # tomllib decodes the bytes itself; TOML is UTF-8 only
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
    except RecursionError:  # tomllib recurses per nested array or inline table
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table, not {type(tool).__name__}")
    if path.name == "pyproject.toml":
        return tool.get("scopelint")
    return tool.get("scopelint", data)


def default_selection(preview: bool = False, explicit: bool = False) -> List[str]:
    """Every rule but the opt-in ones (SL001, as ruff's RUF100) and, outside preview
    mode (or with ``explicit-preview-rules``), the preview ones: ``Settings().select``
    without preview."""
    return [c for c in ALL_RULES if c not in OPT_IN and (not is_preview(c) or (preview and not explicit))]


def resolve_extends(path: Path, table: dict, chain: Tuple[str, ...] = ()) -> dict:
    """``table`` merged over the tables it ``extend``s (a path relative to ``path``'s
    folder), recursively: the extending file's settings win. A cycle is an error."""
    if not isinstance(table, dict) or "extend" not in table:
        return table
    where = str(path)
    target = table["extend"]
    if not isinstance(target, str) or not target.strip():
        raise ConfigError(f"{where}: `extend` must be the path of a TOML file")
    base_path = (Path(path).parent / os.path.expanduser(target)).resolve()
    here = str(Path(path).resolve())
    chain = chain + (here,)
    if str(base_path) in chain:
        cycle = " -> ".join(chain + (str(base_path),))
        raise ConfigError(f"{where}: circular `extend`: {cycle}")
    if not os.path.isfile(base_path):
        raise ConfigError(f"{where}: `extend` names `{target}`, which is not a file ({base_path})")
    base = read_table(base_path)
    if base is None:
        base = {}
    if not isinstance(base, dict):
        raise ConfigError(f"{base_path}: [tool.scopelint] must be a table")
    unknown = sorted(set(base) - KNOWN_KEYS)
    if unknown:  # (named with the file that holds it)
        raise ConfigError(f"{base_path}: unknown key `{unknown[0]}` in [tool.scopelint] (known: {', '.join(sorted(KNOWN_KEYS))})")
    base = resolve_extends(base_path, base, chain)
    return merge_tables(base, table)


def merge_tables(base: dict, over: dict) -> dict:
    """``over``'s settings over ``base``'s, as ruff merges an ``extend``ed file or a
    ``--config KEY=VALUE`` override: a key set in ``over`` replaces ``base``'s, except
    ``extend-exclude`` (added to) and ``ignore``/``extend-select`` (added to, unless
    ``over`` sets ``select``)."""
    merged = {k: v for k, v in base.items() if k != "extend"}
    for key, value in over.items():
        if key == "extend":
            continue
        if key == "extend-per-file-ignores" and isinstance(value, dict) and isinstance(merged.get(key), dict):
            table = {g: list(c) for g, c in merged[key].items()}
            for glob, codes in value.items():
                table[glob] = table.get(glob, []) + _as_list(codes)
            merged[key] = table
        elif key in _CHAINED or (key in _RESET_BY_SELECT and "select" not in over):
            merged[key] = _as_list(merged.get(key, [])) + _as_list(value)
        else:
            merged[key] = value
    if "select" in over:
        for key in _RESET_BY_SELECT:
            if key not in over:
                merged.pop(key, None)
    return merged


def _as_list(value) -> list:
    return [value] if isinstance(value, str) else list(value) if isinstance(value, list) else [value]


def load_config(path: Path, table: Optional[dict] = None, overrides: Optional[dict] = None) -> Config:
    """``overrides``: ``--config KEY=VALUE`` settings, over the file's (and what it extends)."""
    where = str(path)
    table = read_table(path) if table is None else table
    if table is None and not overrides:
        return Config(path)
    table = {} if table is None else table
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.scopelint] must be a table")
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key `{unknown[0]}` in [tool.scopelint] (known: {', '.join(sorted(KNOWN_KEYS))})")
    table = resolve_extends(path, table)
    if overrides:
        table = merge_tables(table, overrides)
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key `{unknown[0]}` in [tool.scopelint] (known: {', '.join(sorted(KNOWN_KEYS))})")
    cfg = Config(path)
    if "select" in table:
        cfg.select_raw = [c.strip().upper() for c in _str_list(table["select"], "select", where)]
        cfg.select = expand_codes(cfg.select_raw, f"{where}: select")
    cfg.ignore = expand_codes(_str_list(table.get("ignore", []), "ignore", where), f"{where}: ignore")
    cfg.extend_select_raw = [c.strip().upper() for c in _str_list(table.get("extend-select", []), "extend-select", where)]
    cfg.extend_select = expand_codes(cfg.extend_select_raw, f"{where}: extend-select")
    for key in ("per-file-ignores", "extend-per-file-ignores"):
        pfi = table.get(key, {})
        if not isinstance(pfi, dict):
            raise ConfigError(f"{where}: `{key}` must be a table of glob = [codes]")
        for glob, codes in pfi.items():
            cfg.per_file_ignores.setdefault(glob, []).extend(
                expand_codes(_str_list(codes, f"{key}.{glob}", where), f"{where}: {key}"))
    for key in _BOOL_KEYS:
        setattr(cfg, key.replace("-", "_"), _typed(table, key, bool, where))
    for key in _STR_KEYS:
        setattr(cfg, key.replace("-", "_"), _typed(table, key, str, where))
    if cfg.output_format is not None and cfg.output_format not in OUTPUT_FORMATS:
        raise ConfigError(f"{where}: `output-format` must be one of {', '.join(OUTPUT_FORMATS)}, not {cfg.output_format!r}")
    if "fixable" in table:
        cfg.fixable = expand_codes(_str_list(table["fixable"], "fixable", where), f"{where}: fixable")
    extend_fixable = expand_codes(_str_list(table.get("extend-fixable", []), "extend-fixable", where), f"{where}: extend-fixable")
    if cfg.fixable is not None:  # (with every rule fixable, there is nothing to add)
        cfg.fixable += extend_fixable
    cfg.unfixable = expand_codes(_str_list(table.get("unfixable", []), "unfixable", where), f"{where}: unfixable")
    if "include" in table:
        cfg.include = _str_list(table["include"], "include", where)
    if "exclude" in table:
        cfg.exclude = _str_list(table["exclude"], "exclude", where)
    cfg.extend_exclude = _str_list(table.get("extend-exclude", []), "extend-exclude", where)
    cfg.inference_functions = _str_list(table.get("inference-functions", []), "inference-functions", where)
    if "framework" in table:
        if table["framework"] not in FRAMEWORK_NAMES:
            raise ConfigError(f"{where}: `framework` must be one of {', '.join(map(repr, FRAMEWORK_NAMES))}, not {table['framework']!r}")
        cfg.framework = FRAMEWORK_NAMES[table["framework"]]
    sev = table.get("severity", {})
    if not isinstance(sev, dict):
        raise ConfigError(f"{where}: `severity` must be a table of CODE = \"error\" | \"warning\" | \"info\"")
    for code, level in sev.items():
        if level not in SEVERITIES:
            raise ConfigError(f"{where}: severity of `{code}` must be one of {', '.join(SEVERITIES)}, not `{level}`")
        for c in expand_codes([code], f"{where}: severity"):
            cfg.severity[c] = level
    return cfg


@dataclass
class Overrides:
    """Command-line options that take precedence over configuration files."""

    select: Optional[List[str]] = None
    ignore: List[str] = field(default_factory=list)
    extend_select: List[str] = field(default_factory=list)
    config_file: Optional[Path] = None
    # ``--config KEY=VALUE`` and ``--per-file-ignores``: a [tool.scopelint] table laid
    # over every configuration file's (and over the defaults where there is none).
    settings: Dict[str, object] = field(default_factory=dict)
    ignore_noqa: bool = False
    isolated: bool = False  # ``--isolated``: read no configuration file
    # ``--extension pyw:python``: more file extensions a folder's walk checks as Python
    extensions: Dict[str, str] = field(default_factory=dict)


def _matches(path: Path, root: Path, pattern: str, folders: bool = False, realpath: Callable[[str], str] = os.path.realpath) -> bool:
    """Glob ``pattern`` (relative to ``root``, the configuration's folder) against ``path``.

    A pattern without ``/`` matches the file name or the relative path; ``**/`` matches
    zero or more folders. With ``folders``, a pattern also matches every file below a
    folder it names (``"legacy"``, ``"src/gen"``), as per-file-ignores users expect.
    """
    return _globs((pattern,), folders)(path.name, *_relative(path, root, realpath))


def _relative(path: Path, root: Path, realpath: Callable[[str], str] = os.path.realpath) -> Tuple[str, bool]:
    """``path`` relative to ``root`` in POSIX form, and whether it is inside it (also
    through symbolic links: ``realpath``)."""
    rel = _below(os.path.abspath(path), os.path.abspath(root))
    if rel is None:
        try:
            rel = _below(realpath(str(path)), realpath(str(root)))
        except (ValueError, OSError):
            rel = None
    return (rel, True) if rel is not None else (path.as_posix(), False)


def _below(path: str, root: str) -> Optional[str]:
    """``path`` relative to ``root`` (both absolute and normalised) in POSIX form, or
    None. (String work on POSIX: a run asks this for every file and folder.)"""
    if os.name != "posix":
        try:
            return Path(path).relative_to(Path(root)).as_posix()
        except ValueError:
            return None
    if path == root:
        return "."
    prefix = root if root.endswith("/") else root + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


@functools.lru_cache(maxsize=512)
def _globs(patterns: Tuple[str, ...], folders: bool = False) -> Callable[[str, str, bool], bool]:
    """Whether any of ``patterns`` matches (``_matches``): a function of the file's name,
    its path relative to the patterns' root, and whether it is inside that root. The
    patterns are compiled into one expression for names and one for paths."""
    names, paths = [], []
    for pattern in patterns:
        pattern = pattern.strip()
        while pattern.startswith("./"):
            pattern = pattern[2:]
        pattern = pattern.rstrip("/")
        if not pattern:
            continue
        if "/" not in pattern:
            names.append(fnmatch.translate(pattern))
        candidate = pattern.lstrip("/")
        paths.append(fnmatch.translate(candidate))
        if "/**/" in candidate:  # ``src/**/*.py`` matches ``src/a.py`` too: zero folders
            paths.append(fnmatch.translate(candidate.replace("/**/", "/")))
        while candidate.startswith("**/"):
            candidate = candidate[3:]
            paths.append(fnmatch.translate(candidate))
    name_match = re.compile("|".join(names)).match if names else None
    path_match = re.compile("|".join(paths)).match if paths else None

    def matches(name: str, rel: str, inside: bool) -> bool:
        if path_match is None:
            return False
        parts = rel.split("/") if folders and inside else None
        if name_match is not None:
            if name_match(name) or (parts and any(name_match(n) for n in parts[:-1])):
                return True
        if path_match(rel):
            return True
        return bool(parts) and any(path_match("/".join(parts[:i])) for i in range(1, len(parts)))

    return matches


class Resolver:
    """Finds the configuration that applies to each file and the settings it yields."""

    def __init__(self, overrides: Overrides = Overrides()):
        self.overrides = overrides
        self._by_dir: Dict[str, Config] = {}  # a folder's absolute path -> its config
        self._settings: Dict[Tuple[int, Tuple[str, ...]], Tuple[Config, Settings]] = {}
        self._real_dirs: Dict[str, str] = {}
        self.warnings: List[str] = []  # said once each on stderr by the command line
        if overrides.isolated and overrides.config_file is not None:
            raise ConfigError("--isolated reads no configuration file: it cannot be combined with --config FILE")
        if overrides.settings:  # validated alone first: an error names the option, not a file
            if "extend" in overrides.settings:
                raise ConfigError("--config: `extend` cannot be given on the command line; name the file with --config FILE")
            load_config(Path("--config"), dict(overrides.settings))
        self._fixed: Optional[Config] = self._load(overrides.config_file) if overrides.config_file else None
        # Validate command-line codes early: a typo is a usage error.
        if overrides.select is not None:
            expand_codes(overrides.select, "--select")
        expand_codes(overrides.ignore, "--ignore")
        expand_codes(overrides.extend_select, "--extend-select")

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def run_config(self) -> Config:
        """The configuration of the run's own settings (output format, cache folder,
        fixes, file discovery): ``--config FILE``'s, else the working folder's, as ruff
        reads its "top-level" settings."""
        return self.config_for(Path.cwd())

    def config_for(self, path: Path) -> Config:
        if self._fixed is not None:
            return self._fixed
        key = os.path.abspath(path if os.path.isdir(path) else Path(path).parent)
        cfg = self._by_dir.get(key)
        return cfg if cfg is not None else self._config_in(Path(key))

    def _config_in(self, directory: Path) -> Config:
        chain = []
        cfg = None
        d = directory
        while True:
            if str(d) in self._by_dir:
                cfg = self._by_dir[str(d)]
                break
            chain.append(d)
            if not self.overrides.isolated:
                for name in CONFIG_FILES:
                    candidate = d / name
                    if os.path.isfile(candidate):
                        table = read_table(candidate)
                        if table is None and name != "pyproject.toml":
                            table = {}  # (an empty scopelint.toml is still the folder's configuration)
                        if table is not None:
                            cfg = self._load(candidate, table)
                            break
                if cfg is not None:
                    break
            if d.parent == d:
                cfg = self._load(None)
                break
            d = d.parent
        for c in chain:
            self._by_dir[str(c)] = cfg
        return cfg

    def _load(self, path: Optional[Path], table: Optional[dict] = None) -> Config:
        """The configuration of ``path`` (None: the defaults), ``--config`` overrides applied."""
        overrides = dict(self.overrides.settings)
        if path is None:
            if not overrides:
                return Config()
            cfg = load_config(Path("--config"), {}, overrides)
            cfg.path = None
            return cfg
        return load_config(path, table, overrides)

    def settings_for(self, path: Path) -> Settings:
        cfg = self.config_for(path)
        matched = tuple(g for g in cfg.per_file_ignores if _matches(path, cfg.root, g, True, self._realpath))
        key = (id(cfg), matched)
        if key not in self._settings:  # (the value keeps ``cfg``, and so its id, alive)
            self._settings[key] = (cfg, self._settings_of(cfg, matched))
        return self._settings[key][1]

    def _settings_of(self, cfg: Config, per_file_globs: Tuple[str, ...]) -> Settings:
        ov = self.overrides
        preview, explicit = bool(cfg.preview), bool(cfg.explicit_preview_rules)
        where = str(cfg.path) if cfg.path else "--config"
        if ov.select is not None:
            selected = select_codes(ov.select, "--select", preview, explicit, self.warn)
        elif cfg.select_raw is not None:
            selected = select_codes(cfg.select_raw, f"{where}: select", preview, explicit, self.warn)
        else:
            selected = default_selection(preview, explicit)
        selected += select_codes(cfg.extend_select_raw, f"{where}: extend-select", preview, explicit, self.warn)
        selected += select_codes(ov.extend_select, "--extend-select", preview, explicit, self.warn)
        ignored = set(cfg.ignore) | set(expand_codes(ov.ignore, "--ignore"))
        per_file = set()
        for glob in per_file_globs:
            per_file.update(cfg.per_file_ignores[glob])
        ignored |= per_file
        select = tuple(c for c in ALL_RULES if c in selected and c not in ignored)
        inference = tuple(DEFAULT_INFERENCE_FUNCTIONS) + tuple(cfg.inference_functions)
        return Settings(select, inference, tuple(sorted(cfg.severity.items())), ignore_noqa=ov.ignore_noqa,
                        per_file_ignored=tuple(c for c in ALL_RULES if c in per_file), framework=cfg.framework)

    def included(self, path: Path) -> bool:
        """A file a folder's walk checks: ``include`` (default ``*.py``, ``*.pyi``,
        ``*.ipynb``) or an ``--extension`` mapped to Python."""
        extra = tuple(f".{ext}" for ext in self.overrides.extensions)
        cfg = self.config_for(path)
        if cfg.include is None:
            return path.name.endswith(DEFAULT_SUFFIXES + extra)
        if extra and path.name.endswith(extra):
            return True
        return _globs(tuple(cfg.include))(path.name, *_relative(path, cfg.root, self._realpath))

    def excluded_with_parents(self, path: Path) -> bool:
        """``path`` or a folder above it (up to its project root) is excluded."""
        path = Path(os.path.abspath(path))
        root = Path(os.path.abspath(self.config_for(path).root))
        for candidate in (path, *path.parents):
            if candidate == root or root not in candidate.parents:
                return self.excluded(candidate) if candidate == path else False
            if self.excluded(candidate):
                return True
        return False

    def excluded(self, path: Path) -> bool:
        cfg = self.config_for(path)
        patterns: Sequence[str] = tuple(cfg.exclude if cfg.exclude is not None else DEFAULT_EXCLUDE) + tuple(cfg.extend_exclude)
        return _globs(patterns)(path.name, *_relative(path, cfg.root, self._realpath))

    def _realpath(self, path: str) -> str:
        """``os.path.realpath``, each folder's answer kept (a run asks it for every file
        and folder outside the configuration's root, e.g. any path with no configuration)."""
        if os.name != "posix" or os.path.islink(path) or os.pardir in path.split(os.sep):
            return os.path.realpath(path)  # (on Windows a junction is no link for islink)
        directory, name = os.path.split(os.path.abspath(path))
        if not name:
            return os.path.realpath(path)
        real = self._real_dirs.get(directory)
        if real is None:
            real = self._real_dirs[directory] = os.path.realpath(directory)
        return os.path.join(real, name)


def show_settings(cfg: Config, settings: Settings) -> str:
    """``--show-settings``: the settings one file is checked with, as TOML-like lines."""
    def toml(value) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(toml(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{ " + ", ".join(f"{toml(k)} = {toml(v)}" for k, v in value.items()) + " }" if value else "{}"
        return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'

    rows = [
        ("select", list(settings.select)),
        ("per-file-ignored", list(settings.per_file_ignored)),
        ("per-file-ignores", dict(cfg.per_file_ignores)),
        ("exclude", list(cfg.exclude if cfg.exclude is not None else DEFAULT_EXCLUDE)),
        ("extend-exclude", list(cfg.extend_exclude)),
        ("inference-functions", list(settings.inference_functions)),
        ("severity", dict(settings.severity)),
        ("ignore-noqa", settings.ignore_noqa),
        ("framework", settings.framework or "(from imports)"),
        ("preview", bool(cfg.preview)),
        ("explicit-preview-rules", bool(cfg.explicit_preview_rules)),
        ("fixable", list(cfg.fixable) if cfg.fixable is not None else ["ALL"]),
        ("unfixable", list(cfg.unfixable)),
        ("include", list(cfg.include) if cfg.include is not None else list(DEFAULT_INCLUDE)),
        ("project-root", str(cfg.root)),
    ]
    return "".join(f"{key} = {toml(value)}\n" for key, value in rows)
