"""Exceptions shared by every package of accelsched.

Each user-facing error carries three parts, so that the CLI can print one line
that says what is wrong, where, and how to fix it:

``what``
    the problem ("unknown workload 'resnet51'");
``where``
    the place (a file, a field, a layer name, a CLI option);
``fix``
    a hint on how to correct it.
"""

from __future__ import annotations


class AccelschedError(Exception):
    """Base class of every error accelsched raises on purpose."""


class InputError(AccelschedError, ValueError):
    """Bad input given by the user: an unknown name, a malformed file, a bad value.

    Subclasses ``ValueError`` so that data validation (which the design asks to
    raise ``ValueError``) and user-input errors are caught the same way.

    Parameters
    ----------
    what
        What is wrong.
    where
        Where it is wrong (file, field, option); may be empty.
    fix
        How to fix it; may be empty.
    """

    def __init__(self, what: str, where: str = "", fix: str = "") -> None:
        self.what = what
        self.where = where
        self.fix = fix
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """Render the error as a single line: ``where: what (fix)``."""
        text = f"{self.where}: {self.what}" if self.where else self.what
        if self.fix:
            text += f" ({self.fix})"
        return text


class InfeasibleSolution(AccelschedError):
    """A solution violates a rule of its problem; the message names the rule."""
