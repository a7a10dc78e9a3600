"""The kernel-version-dependent mapping of sched_switch `prev_state` integers to the letters ftrace prints (the
native decoder hands Perfetto's integers over as they are)."""
from __future__ import annotations

import re

# prev_state letter bits, as each kernel's sched_switch format prints them (see corpus/ftrace_formats).
# Kernels >= 4.14 report TASK_REPORT states; the "+" (preempted) bit is TASK_REPORT_MAX.
_BITS_4_14 = ((1, "S"), (2, "D"), (4, "T"), (8, "t"), (16, "X"), (32, "Z"), (64, "P"), (128, "I"))
# Kernels < 4.14 print raw task->state bits; 4.8 added TASK_NEW (2048), moving TASK_STATE_MAX to 4096.
_BITS_4_4 = ((1, "S"), (2, "D"), (4, "T"), (8, "t"), (16, "Z"), (32, "X"), (64, "x"), (128, "K"), (256, "W"),
             (512, "P"), (1024, "N"))
_BITS_4_8 = _BITS_4_4 + ((2048, "n"),)


class PrevStateEncoding:
    """How one kernel encodes sched_switch prev_state: its letter bits and its preempted ("+") bit."""

    def __init__(self, name: str, bits: tuple[tuple[int, str], ...], preempt_bit: int):
        self.name = name
        self.bits = bits
        self.preempt_bit = preempt_bit
        self._cache: dict[int, str] = {}

    def state(self, value: int) -> str:
        """The state string for a prev_state integer: "R", "R+", "S", "D", "D|K", "S+" ..."""
        s = self._cache.get(value)
        if s is None:
            letters = [c for bit, c in self.bits if value & bit]
            s = "|".join(letters) if letters else "R"
            if value & self.preempt_bit:
                s += "+"
            self._cache[value] = s
        return s


ENCODING_4_14 = PrevStateEncoding(">=4.14", _BITS_4_14, 256)
ENCODING_4_8 = PrevStateEncoding("4.8-4.13", _BITS_4_8, 4096)
ENCODING_4_4 = PrevStateEncoding("<4.8", _BITS_4_4, 2048)


def kernel_version(release: str | None) -> tuple[int, int] | None:
    """(major, minor) from a uname release such as "5.10.107-android13-4-..."; None if it does not say."""
    m = re.match(r"\s*(\d+)\.(\d+)", release or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def prev_state_encoding(release: str | None) -> PrevStateEncoding:
    """The prev_state encoding of the kernel with this uname release (>= 4.14 when unknown)."""
    v = kernel_version(release)
    if v is None or v >= (4, 14):
        return ENCODING_4_14
    if v >= (4, 8):
        return ENCODING_4_8
    return ENCODING_4_4


def prev_state_string(value: int, release: str | None = None) -> str:
    """sched_switch prev_state integer -> state string for the kernel with uname release `release`."""
    return prev_state_encoding(release).state(value)
