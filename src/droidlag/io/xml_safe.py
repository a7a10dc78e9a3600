"""Hostile-safe XML parsing with line numbers: defusedxml's SAX parser (no entity expansion, no external entities, no
DTD tricks) builds a small element tree whose nodes know their line. Sizes are capped before parsing."""
from __future__ import annotations

import io
import xml.sax
import xml.sax.xmlreader
from dataclasses import dataclass, field
from pathlib import Path

import defusedxml.sax
from defusedxml import DefusedXmlException

from droidlag.errors import InputError

# Android layout/values files are kilobytes; 8 MiB is far above any real one and below a memory problem.
MAX_XML_BYTES = 8 << 20
MAX_ELEMENTS = 200_000
MAX_DEPTH = 256

ANDROID_NS = "http://schemas.android.com/apk/res/android"
TOOLS_NS = "http://schemas.android.com/tools"
_APP_NS_PREFIX = "http://schemas.android.com/apk/"


@dataclass
class XmlNode:
    """An element: local tag (namespace prefix kept for the rare prefixed tag), attributes keyed `android:x`,
    `app:x`, `tools:x` or bare, the text inside it, its children and its 1-based line."""

    tag: str
    attrs: dict[str, str]
    line: int
    children: list[XmlNode] = field(default_factory=list)
    text: str = ""
    comments: list[str] = field(default_factory=list)   # comments just before it and directly inside it


def _attr_key(uri: str | None, local: str) -> str:
    if not uri:
        return local
    if uri == ANDROID_NS:
        return f"android:{local}"
    if uri == TOOLS_NS:
        return f"tools:{local}"
    if uri.startswith(_APP_NS_PREFIX):
        return f"app:{local}"
    return f"{{{uri}}}{local}"


class _TreeBuilder(xml.sax.handler.ContentHandler):
    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.locator: xml.sax.xmlreader.Locator | None = None
        self.stack: list[XmlNode] = []
        self.root: XmlNode | None = None
        self.count = 0
        self.pending: list[str] = []   # comments waiting for the next element

    # lexical handler: comments are kept, because developers say there why a layer stays
    def comment(self, content: str) -> None:
        text = content.strip()[:2000]
        if self.stack:
            self.stack[-1].comments.append(text)
        self.pending.append(text)

    def startDTD(self, name: str, public_id: str | None, system_id: str | None) -> None:   # noqa: N802 (SAX API)
        pass

    def endDTD(self) -> None:   # noqa: N802 (SAX API)
        pass

    def startCDATA(self) -> None:   # noqa: N802 (SAX API)
        pass

    def endCDATA(self) -> None:   # noqa: N802 (SAX API)
        pass

    def startEntity(self, name: str) -> None:   # noqa: N802 (SAX API)
        pass

    def endEntity(self, name: str) -> None:   # noqa: N802 (SAX API)
        pass

    def setDocumentLocator(self, locator: xml.sax.xmlreader.Locator) -> None:   # noqa: N802 (SAX API)
        self.locator = locator

    def _line(self) -> int:
        return (self.locator.getLineNumber() or 0) if self.locator else 0

    def startElementNS(self, name: tuple[str | None, str], qname: str | None,   # noqa: N802 (SAX API)
                       attrs: xml.sax.xmlreader.AttributesNSImpl) -> None:
        self.count += 1
        if self.count > MAX_ELEMENTS:
            raise InputError(self.path, f"more than {MAX_ELEMENTS} XML elements", self._line())
        if len(self.stack) >= MAX_DEPTH:
            raise InputError(self.path, f"XML nested deeper than {MAX_DEPTH}", self._line())
        uri, local = name
        node = XmlNode(local, {_attr_key(u, ln): v for (u, ln), v in attrs.items()}, self._line(),
                       comments=self.pending[-2:])
        self.pending = []
        if self.stack:
            self.stack[-1].children.append(node)
        else:
            self.root = node
        self.stack.append(node)

    def endElementNS(self, name: tuple[str | None, str], qname: str | None) -> None:   # noqa: N802 (SAX API)
        self.stack.pop()
        self.pending = []

    def characters(self, content: str) -> None:
        if self.stack and len(self.stack[-1].text) < 65536:
            self.stack[-1].text += content


def parse_xml(data: bytes, path: str | Path) -> XmlNode:
    """The element tree of an XML document. InputError (file, line, reason) for oversized, malformed or hostile
    XML (entity definitions and external references are refused by defusedxml)."""
    path = str(path)
    if len(data) > MAX_XML_BYTES:
        raise InputError(path, f"XML file larger than {MAX_XML_BYTES >> 20} MiB")
    handler = _TreeBuilder(path)
    parser = defusedxml.sax.make_parser()
    parser.setFeature(xml.sax.handler.feature_namespaces, True)
    parser.setContentHandler(handler)
    parser.setProperty(xml.sax.handler.property_lexical_handler, handler)
    try:
        parser.parse(io.BytesIO(data))
    except xml.sax.SAXParseException as e:
        raise InputError(path, f"broken XML: {e.getMessage()}", e.getLineNumber()) from None
    except DefusedXmlException as e:
        raise InputError(path, f"XML refused as unsafe: {type(e).__name__}", handler._line() or None) from None
    except (LookupError, ValueError) as e:   # <?xml encoding="..."?> unknown, or multi-byte (expat cannot)
        raise InputError(path, f"XML encoding not readable: {e}", 1) from None
    if handler.root is None:
        raise InputError(path, "XML holds no element")
    return handler.root


def read_xml(path: str | Path) -> XmlNode:
    """parse_xml of a file, refusing oversized files before reading them."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_XML_BYTES:
            raise InputError(p, f"XML file larger than {MAX_XML_BYTES >> 20} MiB")
        data = p.read_bytes()
    except OSError as e:
        raise InputError(p, f"cannot read: {e.strerror or e}") from None
    return parse_xml(data, p)
