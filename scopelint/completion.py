"""``scopelint generate-shell-completion bash|zsh|fish``: a completion script made from
the command line's own parser (its commands, each command's options, the choices of
``--output-format``, the rule codes after ``--select`` and the like), as ruff's
``generate-shell-completion``."""

from __future__ import annotations

import argparse
from typing import Dict, List, Tuple

# Options whose values are rule codes or prefixes
CODE_OPTIONS = ("--select", "--ignore", "--extend-select", "--fixable", "--unfixable", "--extend-fixable")


def _commands(parser: argparse.ArgumentParser) -> Dict[str, Tuple[str, argparse.ArgumentParser]]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help or "" for c in sub._choices_actions}
    return {name: (helps.get(name, ""), p) for name, p in sub.choices.items()}


def _options(p: argparse.ArgumentParser) -> List[Tuple[List[str], argparse.Action]]:
    return [(list(a.option_strings), a) for a in p._actions if a.option_strings and a.help != argparse.SUPPRESS]


def _codes() -> List[str]:
    from scopelint.catalog import documented

    return [c for c in documented() if c != "SL000"] + ["ALL", "SL"]


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](parser)


def _bash_function(parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    cases = []
    for name, (_, p) in commands.items():
        opts = " ".join(o for strings, _ in _options(p) for o in strings)
        values = [f"                {'|'.join(strings)}) COMPREPLY=( $(compgen -W \"{' '.join(map(str, action.choices))}\" -- \"$cur\") ); return ;;"
                  for strings, action in _options(p) if action.choices]
        values.append(f"                {'|'.join(CODE_OPTIONS)}) COMPREPLY=( $(compgen -W \"{' '.join(_codes())}\" -- \"$cur\") ); return ;;")
        cases.append(f"        {name})\n            opts=\"{opts}\"\n            case \"$prev\" in\n" + "\n".join(values)
                     + "\n            esac ;;")
    return f"""_scopelint() {{
    local cur prev cmd opts
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=( $(compgen -W "{' '.join(commands)} --help --version" -- "$cur") )
        return
    fi
    cmd="${{COMP_WORDS[1]}}"
    opts=""
    case "$cmd" in
{chr(10).join(cases)}
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
    else
        COMPREPLY=( $(compgen -f -- "$cur") )
    fi
}}
"""


def _bash(parser: argparse.ArgumentParser) -> str:
    return ("# scopelint completion for bash: eval \"$(scopelint generate-shell-completion bash)\"\n"
            + _bash_function(parser) + "complete -o filenames -F _scopelint scopelint\n")


def _zsh(parser: argparse.ArgumentParser) -> str:
    return ("#compdef scopelint\n"
            "# scopelint completion for zsh: scopelint generate-shell-completion zsh > ~/.zfunc/_scopelint\n"
            "autoload -U +X bashcompinit && bashcompinit\n"
            + _bash_function(parser) + "complete -o filenames -F _scopelint scopelint\n")


def _fish(parser: argparse.ArgumentParser) -> str:
    lines = ["# scopelint completion for fish: scopelint generate-shell-completion fish > ~/.config/fish/completions/scopelint.fish",
             "complete -c scopelint -f"]
    commands = _commands(parser)
    for name, (help_text, _) in commands.items():
        lines.append(f"complete -c scopelint -n __fish_use_subcommand -a {name} -d {_quote(help_text)}")
    codes = " ".join(_codes())
    for name, (_, p) in commands.items():
        for strings, action in _options(p):
            longs = [o[2:] for o in strings if o.startswith("--")]
            shorts = [o[1:] for o in strings if not o.startswith("--")]
            if not longs and not shorts:
                continue
            parts = [f"complete -c scopelint -n '__fish_seen_subcommand_from {name}'"]
            parts += [f"-l {o}" for o in longs] + [f"-s {o}" for o in shorts]
            if action.choices:
                parts.append(f"-x -a {_quote(' '.join(map(str, action.choices)))}")
            elif any(o in CODE_OPTIONS for o in strings):
                parts.append(f"-x -a {_quote(codes)}")
            elif action.nargs != 0 and not isinstance(action, (argparse._StoreTrueAction, argparse.BooleanOptionalAction)):
                parts.append("-r -F")
            if action.help:
                parts.append(f"-d {_quote(action.help.split(' (')[0])}")
            lines.append(" ".join(parts))
        lines.append(f"complete -c scopelint -n '__fish_seen_subcommand_from {name}' -F")
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return "'" + str(text).replace("\\", "\\\\").replace("'", "\\'") + "'"
