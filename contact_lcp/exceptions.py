"""Exceptions raised for caller mistakes.

What an algorithm can legitimately reach (a ray, a cycle, a pivot limit, a singular
block) is *returned* as an :class:`contact_lcp.lcp.LCPStatus`, never raised.
"""


class ContactLCPError(Exception):
    """Base class of every error contact_lcp raises on purpose."""


class InvalidProblem(ContactLCPError, ValueError):
    """An LCP or contact problem whose data do not fit (shape, NaN, unknown method)."""


class ContactLimitError(InvalidProblem):
    """Contacts beyond what the scene allows: more points than ``contact.max_contacts``,
    or a start deeper than ``contact.max_initial_penetration`` (the message names the
    deepest pairs)."""


class SceneError(ContactLCPError, ValueError):
    """A scene file, URDF, SRDF or parameter that cannot be used as given."""


class FrameNotFound(ContactLCPError, KeyError):
    """A frame, link or joint name that the model does not have.

    Parameters
    ----------
    name : str
        The name that was asked for.
    frames : iterable of str
        The names that exist, listed in the message.
    kind : str
        What was looked for ("frame", "link", "joint").
    """

    def __init__(self, name, frames, kind="frame"):
        self.name = name
        self.frames = sorted(frames)
        self.kind = kind
        super().__init__(name)

    def __str__(self):
        return f"{self.kind} {self.name!r} not found; the model has: {', '.join(self.frames)}"


class SweepError(ContactLCPError, ValueError):
    """A sweep spec, or the results folder of a sweep, that cannot be used as given (the
    message names the spec key or the file)."""
