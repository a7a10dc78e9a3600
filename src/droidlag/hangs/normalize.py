"""Stack-frame normalization: an ordered list of regular expressions that remove what differs between two dumps of
the same hang (line numbers, addresses, pc and symbol offsets, thread ids and pool-thread numbers, BuildIds, lambda
suffixes, randomized APK paths). The order matters: BuildIds and `(offset ...)` go before the generic hex rule so
they are removed whole, line numbers before thread numbers, and symbol offsets only inside the trailing `(...)`."""
from __future__ import annotations

import re
from collections.abc import Callable

_DIGITS = re.compile(r"\d+")

# (name, pattern, replacement), applied in this order.
RULES: tuple[tuple[str, re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    ("build_id", re.compile(r"\s*\(BuildId: [0-9a-fA-F]+\)"), ""),
    ("lib_offset", re.compile(r"\s*\(offset (?:0x)?[0-9a-fA-F]+\)"), ""),
    ("frame_pc", re.compile(r"^(?:native: )?#\d+ pc [0-9a-fA-F]+\s+"), ""),
    ("kernel_offset", re.compile(r"\+0x[0-9a-fA-F]+/0x[0-9a-fA-F]+"), ""),
    ("symbol_offset", re.compile(r"\+\d+\)$"), ")"),
    ("line_number", re.compile(r"\(([\w$.-]+\.(?:java|kt|scala)):~?\d+\)"), r"(\1)"),
    ("r8_map_id", re.compile(r"\(r8-map-id-[0-9a-f]+:-?\d+\)"), "(r8-map-id)"),
    ("other_line", re.compile(r"\(([^()\s]+?):-?\d+\)$"), r"(\1)"),
    ("native_method", re.compile(r"\(Native [Mm]ethod\)"), "(Native method)"),
    ("apk_path", re.compile(r"/data/app/(?:~~[^/]+/)?([\w.]+)-[^/]+/"), r"/data/app/\1/"),
    ("lambda", re.compile(r"\$\$Lambda\$[\w$]+(?:/0x[0-9a-fA-F]+)?(?:@[0-9a-fA-F]+)?|\$\$?ExternalSyntheticLambda\d+"),
     "$$Lambda"),
    ("r8_lambda", re.compile(r"\$r8\$lambda\$[\w-]+"), "$r8$lambda"),
    ("bang", re.compile(r"(\w)!(?=\(|$)"), r"\1"),
    ("binder_thread", re.compile(r"Binder:\d+_[0-9A-Fa-f]+|Binder[ _]Thread #\d+|Binder_[0-9A-Fa-f]+"), "Binder:N"),
    ("pool_thread", re.compile(r"\bpool-\d+-thread-\d+|\bThread-\d+|AsyncTask #\d+"),
     lambda m: _DIGITS.sub("N", m.group(0))),
    ("thread_id", re.compile(r"\b(tid|sysTid|threadid)=\d+|held by thread \d+"), "tid=N"),
    ("object_address", re.compile(r"<0x[0-9a-fA-F]+>"), "<addr>"),
    ("hex", re.compile(r"\b0x[0-9a-fA-F]+\b"), "0x?"),
    ("whitespace", re.compile(r"\s+"), " "),
)


def normalize_frame(text: str) -> str:
    """A frame line (stripped, as in the dump) with every RULES substitution applied in order."""
    for _, pat, rep in RULES:
        text = pat.sub(rep, text)
    return text.strip()


def apply_rule(name: str, text: str) -> str:
    """Apply one named rule (for tests and for explaining a normalization)."""
    for n, pat, rep in RULES:
        if n == name:
            return pat.sub(rep, text)
    raise KeyError(name)


_MANGLED = re.compile(r"^_ZN?K?(\d+\w+?)+E?")
_NAME_LEN = re.compile(r"(\d+)")


def native_symbol(sym: str) -> str:
    """One spelling for a native symbol, mangled or demangled: `_ZN7android14IPCThreadState8transactEij...+224` and
    `android::IPCThreadState::transact(int, unsigned int, ...)+224` both become `android::IPCThreadState::transact`;
    offsets (`+224`, ` + 224`) and argument lists are dropped; an `.oat` frame's Java method keeps its dotted name."""
    s = sym.strip()
    s = re.sub(r"\s*\+\s*(?:0x)?[0-9a-fA-F]+$", "", s)
    if s.startswith("_Z"):
        d = _demangle_nested(s)
        if d:
            return d
    k = s.find("(")
    if k > 0:
        s = s[:k]
    return s.strip()


def _demangle_nested(s: str) -> str | None:
    """The qualified name of an Itanium-mangled symbol (`_ZN` nested names and plain `_Z<len><name>`), without its
    argument types; None when it is not one of these simple forms."""
    i = 2
    nested = i < len(s) and s[i] == "N"
    if nested:
        i += 1
        while i < len(s) and s[i] in "KVr":   # cv-qualifiers of a member function
            i += 1
    parts = []
    while i < len(s) and s[i].isdigit():
        m = _NAME_LEN.match(s, i)
        if m is None:
            return None
        n = int(m.group(1))
        start = m.end()
        if n <= 0 or start + n > len(s):
            return None
        parts.append(s[start:start + n])
        i = start + n
        if not nested:
            break
    return "::".join(parts) if parts else None


_SO_NAME = re.compile(r"^lib[\w+-]+$")


def native_lib(lib: str) -> str:
    """One spelling for a native library across formats: Sentry names `libc` what the runtime dump calls `libc.so`
    (a `lib...` name without an extension gets `.so`); other names are kept."""
    return lib + ".so" if _SO_NAME.match(lib) else lib


def java_symbol(sym: str) -> str:
    """A Java method as one spelling across formats: lambda and R8 synthetic ids and Play Console's `!` dropped."""
    if "$" in sym or "!" in sym:
        for name in ("lambda", "r8_lambda", "bang"):
            sym = apply_rule(name, sym)
    return sym


# ART, Dalvik, Crashlytics and java.lang.Thread.State spellings of a thread state -> one word
STATE_SPELLINGS = {
    "monitor": "blocked", "blocked": "blocked", "wait": "waiting", "waiting": "waiting", "timed_wait": "timedwaiting",
    "timedwaiting": "timedwaiting", "timed_waiting": "timedwaiting", "timed waiting": "timedwaiting",
    "sleeping": "sleeping", "native": "native", "vmwait": "waiting", "running": "runnable", "runnable": "runnable",
    "suspended": "suspended",
}


def state_word(state: str | None) -> str:
    s = (state or "").strip().lower()
    return STATE_SPELLINGS.get(s, s)


UNKNOWN_NAME = "?"
_OBFUSCATED_PART = re.compile(r"^[a-z]{1,3}$")
_OBFUSCATED_METHOD = re.compile(r"^[a-z]{1,2}$")


def _class_part(part: str) -> str:
    """One `$`-separated part of a class's simple name: an R8/ProGuard name (`a`, `ixx`: lower case, at most three
    letters, where Java classes are capitalized) is unknown; anonymous-class numbers and real names are kept."""
    return UNKNOWN_NAME if _OBFUSCATED_PART.match(part) else part


def unobfuscated_class(cls: str) -> str:
    """A class name with what an obfuscator named replaced by `?`: one-letter package segments
    (`com.google.firebase.crashlytics.c.g.j`) and lower-case simple names of at most three letters (`ixx`,
    `com.instabug.library.b`). Two builds name different code `a` and the same code differently, so `?` is an unknown
    token (it says nothing), never evidence that two frames are the same; what is left (the package, the deobfuscated
    names) is compared."""
    cls = re.sub(r"^java\.lang\.Class<(.*)>$", r"\1", cls.strip())
    *pkgs, simple = cls.split(".")
    pkgs = [UNKNOWN_NAME if len(p) == 1 else p for p in pkgs]
    simple = "$".join(_class_part(p) for p in simple.split("$"))
    return ".".join([*pkgs, simple])


def unobfuscated_method(sym: str) -> str:
    """A Java method symbol `pkg.Class.method` (after `java_symbol`) with obfuscated class parts and method names
    (one or two lower-case letters) replaced by `?` (see `unobfuscated_class`)."""
    sym = java_symbol(sym)
    if "." not in sym:
        return sym
    cls, method = sym.rsplit(".", 1)
    return unobfuscated_class(cls) + "." + (UNKNOWN_NAME if _OBFUSCATED_METHOD.match(method) else method)


def is_unknown_name(sym: str) -> bool:
    """True when an unobfuscated class or method symbol keeps no known simple name (`com.x.?`, `com.x.?.?`)."""
    return sym.rsplit(".", 1)[-1].split("$")[0] == UNKNOWN_NAME
