from scopelint.rule import Rule


class UnusedNoqa(Rule):
    """A meta-rule: it reads the file's ``# noqa`` comments and the other rules'
    findings, not the analysis (``scopelint.noqa.unused_directives`` reports it, after
    every other rule ran; ``check`` has nothing to add). Like ruff's RUF100 it runs
    only when selected: by code (``--extend-select SL001``), by a prefix that covers it
    (``SL0``, ``SL``) or ``ALL``."""

    code = "SL001"
    name = "unused-noqa"
    severity = "warning"
    frameworks = ()
    default = False
    summary = "A `# noqa` directive names a scopelint code that suppresses nothing on its line."
    help = "Remove the unused code from the `# noqa` list (or the comment, when nothing else is left)."
    fixable = "safe"
    why = """
        A `# noqa: SL101` that no longer suppresses anything (the code was fixed, the
        line moved, the rule got more precise) hides the next real finding on that line.
        Reported: codes that suppress nothing (unused), codes of rules that do not run
        on the file (non-enabled; a code that `per-file-ignores` turns off is left
        alone), codes named twice (duplicated) and `SL` codes that do not exist
        (unknown). A bare `# noqa` and other tools' codes (`E501`, `F401`) are never
        reported: scopelint cannot tell what they suppress. `# noqa: SL001` on a line
        keeps the line from being reported. Not in the default selection (as ruff's
        RUF100): select it with `--extend-select SL001` or `extend-select = ["SL001"]`.
    """
    bad = """
        import torch

        w = torch.ones(3, requires_grad=True)
        loss = (w * 2).sum()  # noqa: SL101
        loss.backward()
    """
    good = """
        import torch

        w = torch.ones(3, requires_grad=True)
        loss = (w * 2).sum()
        loss.backward()
    """

    def check(self, ctx):
        return ()


RULE = UnusedNoqa
